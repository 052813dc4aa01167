// Emitters for packing f32 values into narrow elements and unpacking them (kern.cvt_pack,
// kern.cvt_unpack). PTX ISA "cvt": cvt.rn.{bf16x2,f16x2}.f32 d, a, b and
// cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 d, a, b store the value converted from a in the upper half
// of d and from b in the lower half; cvt.rn.f16x2.{e4m3x2,e5m2x2} d, a widens the two bytes of a
// (the lower to the lower half). The FP8 forms need sm_89 and PTX ISA 8.1 (7.8 on sm_90). A bf16 is the upper
// half of an f32, so it widens by a shift (exact, and free of cvt.f32.bf16's PTX 7.8 requirement).
#include <fmt/format.h>

#include "codegen/ptx/emitter.h"
#include "dialects/kern/kern_ops.h"

namespace kiln::ptx {
using namespace ir;

namespace {

const char* fp8Pair(ScalarType e) { return e == ScalarType::F8E4M3 ? "e4m3x2" : "e5m2x2"; }

bool needFp8(KernelEmitter& e, const Operation& op) {
  if (!e.target().cvtFp8)
    return e.fail(op, "FP8 conversions (cvt ...e4m3x2 / e5m2x2) need sm_89 or newer; " + e.target().name +
                          " has none");
  e.requirePtxIsa(8, 1);  // 7.8 on sm_90; ptxas takes them on sm_89 from 8.1
  return true;
}

// f16 (a 16-bit register) to f32.
void widenF16(PtxBuilder& b, const Reg& f, const Reg& h) { b.inst(fmt::format("cvt.f32.f16 {}, {}", f.str(), h.str())); }

// bf16 bits in the low half of `w` (or, with high, the upper half) to f32.
void widenBf16(PtxBuilder& b, const Reg& f, const Reg& w, bool high) {
  Reg t = b.reg(RegClass::B32);
  if (high) b.inst(fmt::format("and.b32 {}, {}, -65536", t.str(), w.str()));
  else b.inst(fmt::format("shl.b32 {}, {}, 16", t.str(), w.str()));
  b.inst(fmt::format("mov.b32 {}, {}", f.str(), t.str()));
}

// Two FP8 bytes in a 16-bit register to two f32.
void widenFp8Pair(PtxBuilder& b, ScalarType e, const Reg& lo, const Reg& hi, const Reg& pair) {
  Reg h2 = b.reg(RegClass::B32), h0 = b.reg(RegClass::B16), h1 = b.reg(RegClass::B16);
  b.inst(fmt::format("cvt.rn.f16x2.{} {}, {}", fp8Pair(e), h2.str(), pair.str()));
  b.inst(fmt::format("mov.b32 {{{}, {}}}, {}", h0.str(), h1.str(), h2.str()));
  widenF16(b, lo, h0);
  if (hi.valid()) widenF16(b, hi, h1);
}

}  // namespace

bool emitCvtPack(KernelEmitter& e, const Operation& op) {
  PtxBuilder& b = e.b();
  const Type& rt = op.result()->type();
  ScalarType elem = rt.elem();
  Reg r = e.def(op.result());
  if (op.numOperands() == 2) {
    const char* kind = elem == ScalarType::BF16 ? "bf16x2" : "f16x2";
    b.inst(fmt::format("cvt.rn.{}.f32 {}, {}, {}", kind, r.str(), e.use(op.operand(1)).str(), e.use(op.operand(0)).str()));
    return true;
  }
  if (op.numOperands() == 1 && !isFp8(elem)) {
    b.inst(fmt::format("cvt.rn.{}.f32 {}, {}", elem == ScalarType::BF16 ? "bf16" : "f16", r.str(), e.use(op.operand(0)).str()));
    return true;
  }
  if (!needFp8(e, op)) return false;
  if (op.numOperands() == 1) {
    Reg h = b.reg(RegClass::B16), w = b.reg(RegClass::B32);
    b.inst(fmt::format("cvt.rn.satfinite.{}.f32 {}, {}, {}", fp8Pair(elem), h.str(), f32Immediate(0.0),
                       e.use(op.operand(0)).str()));
    b.inst(fmt::format("cvt.u32.u16 {}, {}", w.str(), h.str()));
    b.inst(fmt::format("and.b32 {}, {}, 255", r.str(), w.str()));
    return true;
  }
  Reg lo = b.reg(RegClass::B16), hi = b.reg(RegClass::B16);
  b.inst(fmt::format("cvt.rn.satfinite.{}.f32 {}, {}, {}", fp8Pair(elem), lo.str(), e.use(op.operand(1)).str(),
                     e.use(op.operand(0)).str()));
  b.inst(fmt::format("cvt.rn.satfinite.{}.f32 {}, {}, {}", fp8Pair(elem), hi.str(), e.use(op.operand(3)).str(),
                     e.use(op.operand(2)).str()));
  b.inst(fmt::format("mov.b32 {}, {{{}, {}}}", r.str(), lo.str(), hi.str()));
  return true;
}

bool emitCvtUnpack(KernelEmitter& e, const Operation& op) {
  PtxBuilder& b = e.b();
  const Type& xt = op.operand(0)->type();
  ScalarType elem = xt.elem();
  Reg x = e.use(op.operand(0));
  std::vector<Reg> out;
  for (unsigned i = 0; i < op.numResults(); ++i) out.push_back(e.def(op.result(i)));
  if (elem == ScalarType::BF16) {
    if (kern::isFrag(xt)) {
      widenBf16(b, out[0], x, false);
      widenBf16(b, out[1], x, true);
    } else {
      Reg w = b.reg(RegClass::B32);
      b.inst(fmt::format("cvt.u32.u16 {}, {}", w.str(), x.str()));
      widenBf16(b, out[0], w, false);
    }
    return true;
  }
  if (elem == ScalarType::F16) {
    if (!kern::isFrag(xt)) {
      widenF16(b, out[0], x);
      return true;
    }
    Reg h0 = b.reg(RegClass::B16), h1 = b.reg(RegClass::B16);
    b.inst(fmt::format("mov.b32 {{{}, {}}}, {}", h0.str(), h1.str(), x.str()));
    widenF16(b, out[0], h0);
    widenF16(b, out[1], h1);
    return true;
  }
  if (!needFp8(e, op)) return false;
  if (!kern::isFrag(xt)) {
    Reg h = b.reg(RegClass::B16);
    b.inst(fmt::format("cvt.u16.u32 {}, {}", h.str(), x.str()));
    widenFp8Pair(b, elem, out[0], Reg{}, h);
    return true;
  }
  Reg p0 = b.reg(RegClass::B16), p1 = b.reg(RegClass::B16);
  b.inst(fmt::format("mov.b32 {{{}, {}}}, {}", p0.str(), p1.str(), x.str()));
  widenFp8Pair(b, elem, out[0], out[1], p0);
  widenFp8Pair(b, elem, out[2], out[3], p1);
  return true;
}

}  // namespace kiln::ptx
