// Emitters for global memory.
//   ld.global / st.global{.v2,.v4} under a predicate (PTX ISA, "ld", "st"; a predicated-off
//   access does not touch memory), prefetch.global.{L1,L2} under a predicate (PTX ISA "prefetch").
//   Packing and unpacking of narrow elements is in emit_convert.cpp.
#include <fmt/format.h>

#include "codegen/ptx/emitter.h"
#include "kiln/float_formats.h"
#include "dialects/kern/kern_ops.h"

namespace kiln::ptx {
using namespace ir;

namespace {

const char* memType(const Type& t) {
  if (kern::isFrag(t)) return "b32";
  if (t.isScalar() && isFp8(t.elem())) return "u8";  // one byte, in a 32-bit register
  if (t.isScalar(ScalarType::F32)) return "f32";
  if (t.isScalar(ScalarType::BF16) || t.isScalar(ScalarType::F16)) return "b16";
  if (t.isScalar(ScalarType::I64)) return "b64";
  return "b32";
}

}  // namespace

bool emitPtrAdd(KernelEmitter& e, const Operation& op) {
  PtxBuilder& b = e.b();
  int bytes = bitWidth(op.operand(0)->type().elem()) / 8;
  // A compile-time offset is an immediate (ptxas folds it into the address of the access).
  if (const Operation* d = op.operand(1)->definingOp(); d && d->is("arith.constant") && d->attr("value")->isInt()) {
    b.inst(fmt::format("add.s64 {}, {}, {}", e.def(op.result()).str(), e.use(op.operand(0)).str(),
                       d->attr("value")->asInt() * bytes));
    return true;
  }
  Reg off = e.use(op.operand(1));
  Reg scaled = off;
  if (bytes == 1) {
  } else if ((bytes & (bytes - 1)) == 0) {
    scaled = b.reg(RegClass::B64);
    int sh = 0;
    while ((1 << sh) < bytes) ++sh;
    b.inst(fmt::format("shl.b64 {}, {}, {}", scaled.str(), off.str(), sh));
  } else {
    scaled = b.reg(RegClass::B64);
    b.inst(fmt::format("mul.lo.s64 {}, {}, {}", scaled.str(), off.str(), bytes));
  }
  b.inst(fmt::format("add.s64 {}, {}, {}", e.def(op.result()).str(), e.use(op.operand(0)).str(), scaled.str()));
  return true;
}

bool emitLdGlobal(KernelEmitter& e, const Operation& op) {
  PtxBuilder& b = e.b();
  const Type& t = op.result()->type();
  double other = op.attr("other") ? op.attr("other")->asNumber() : 0.0;
  std::string regs;
  for (unsigned i = 0; i < op.numResults(); ++i) {
    Reg r = e.def(op.result(i));
    switch (r.cls) {
      case RegClass::F32: b.inst(fmt::format("mov.f32 {}, {}", r.str(), f32Immediate(other))); break;
      case RegClass::B16:
        b.inst(fmt::format("mov.b16 {}, 0x{:04X}", r.str(),
                           t.isScalar(ScalarType::BF16) ? floatToBf16Bits(float(other)) : floatToF16Bits(float(other))));
        break;
      case RegClass::B32: b.inst(fmt::format("mov.b32 {}, {}", r.str(), int64_t(other))); break;
      case RegClass::B64: b.inst(fmt::format("mov.b64 {}, {}", r.str(), int64_t(other))); break;
      case RegClass::Pred: return e.fail(op, "cannot load i1 values");
    }
    regs += (i ? ", " : "") + r.str();
  }
  std::string addr = e.use(op.operand(0)).str();
  b.instIf(e.use(op.operand(1)), op.numResults() == 1
                                     ? fmt::format("ld.global.{} {}, [{}]", memType(t), regs, addr)
                                     : fmt::format("ld.global.v{}.{} {{{}}}, [{}]", op.numResults(), memType(t), regs, addr));
  return true;
}

bool emitPrefetchGlobal(KernelEmitter& e, const Operation& op) {
  e.b().instIf(e.use(op.operand(1)),
               fmt::format("prefetch.global.{} [{}]", op.stringAttr("level"), e.use(op.operand(0)).str()));
  return true;
}

bool emitStGlobal(KernelEmitter& e, const Operation& op) {
  size_t n = op.numOperands() - 2;
  const Type& t = op.operand(2)->type();
  std::string vals;
  for (size_t i = 0; i < n; ++i) vals += (i ? ", " : "") + e.use(op.operand(unsigned(2 + i))).str();
  std::string text = n == 1 ? fmt::format("st.global.{} [{}], {}", memType(t), e.use(op.operand(0)).str(), vals)
                            : fmt::format("st.global.v{}.{} [{}], {{{}}}", n, memType(t), e.use(op.operand(0)).str(), vals);
  e.b().instIf(e.use(op.operand(1)), text);
  return true;
}

}  // namespace kiln::ptx

namespace kiln::ptx {

// Split-K's flag protocol (kern_ops.h, "Split-K"; PTX ISA "red", "ld": .release / .acquire at .gpu).
bool emitRedRelease(KernelEmitter& e, const ir::Operation& op) {
  e.requirePtxIsa(7, 0);
  e.b().inst(fmt::format("red.release.gpu.global.add.s32 [{}], {}", e.use(op.operand(0)).str(),
                         e.use(op.operand(1)).str()));
  return true;
}

// The count before the add where pred holds, else 0 (a predicated-off atom writes no register).
bool emitAtomAdd(KernelEmitter& e, const ir::Operation& op) {
  PtxBuilder& b = e.b();
  e.requirePtxIsa(7, 0);
  Reg r = e.def(op.result());
  b.inst(fmt::format("mov.b32 {}, 0", r.str()));
  b.instIf(e.use(op.operand(2)), fmt::format("atom.acq_rel.gpu.global.add.s32 {}, [{}], {}", r.str(),
                                             e.use(op.operand(0)).str(), e.use(op.operand(1)).str()));
  return true;
}

// A loop of acquiring loads: the block's other threads wait at a barrier meanwhile, so one thread
// polls (with a short back-off, so the L2 slice holding the flag is not flooded).
bool emitSpinWait(KernelEmitter& e, const ir::Operation& op) {
  PtxBuilder& b = e.b();
  e.requirePtxIsa(7, 0);
  Reg v = b.reg(RegClass::B32);
  Reg low = b.reg(RegClass::Pred);
  std::string head = b.label();
  b.placeLabel(head);
  b.inst(fmt::format("ld.acquire.gpu.global.s32 {}, [{}]", v.str(), e.use(op.operand(0)).str()));
  b.inst(fmt::format("setp.lt.s32 {}, {}, {}", low.str(), v.str(), e.use(op.operand(1)).str()));
  std::string done = b.label();
  b.instIf(low, "bra " + done, /*negate=*/true);
  b.inst("nanosleep.u32 64");
  b.inst("bra " + head);
  b.placeLabel(done);
  return true;
}

}  // namespace kiln::ptx
