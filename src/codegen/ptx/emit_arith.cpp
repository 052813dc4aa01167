// Emitters for scalar arithmetic (arith.*). Integer ops use the signed PTX forms of the
// value's width; float ops carry an explicit .rn so ptxas never contracts them into an fma (PTX
// ISA, "add.f32": "add with an explicit rounding modifier is not contracted"), keeping the tile
// dialect's "round once per op" semantics. max/min use the .NaN forms (PTX ISA, "max.f32", sm_80+)
// to propagate NaN. The math.* functions are in emit_math.cpp.
#include <fmt/format.h>

#include "codegen/ptx/emitter.h"
#include "kiln/float_formats.h"

namespace kiln::ptx {
using namespace ir;

namespace {

bool is64(const Type& t) { return t.isScalar(ScalarType::I64) || t.isScalar(ScalarType::Index); }

}  // namespace

bool emitConstant(KernelEmitter& e, const Operation& op) {
  const Type& t = op.result()->type();
  const Attribute& v = *op.attr("value");
  Reg r = e.def(op.result());
  PtxBuilder& b = e.b();
  switch (r.cls) {
    case RegClass::Pred: {
      bool on = v.isBool() ? v.asBool() : v.asNumber() != 0;
      b.inst(fmt::format("setp.ne.u32 {}, {}, 0", r.str(), on ? 1 : 0));
      return true;
    }
    case RegClass::B32: b.inst(fmt::format("mov.b32 {}, {}", r.str(), int32_t(v.isInt() ? v.asInt() : int64_t(v.asNumber())))); return true;
    case RegClass::B64: b.inst(fmt::format("mov.b64 {}, {}", r.str(), v.isInt() ? v.asInt() : int64_t(v.asNumber()))); return true;
    case RegClass::F32: b.inst(fmt::format("mov.f32 {}, {}", r.str(), f32Immediate(v.asNumber()))); return true;
    case RegClass::B16: {
      float f = float(v.asNumber());
      uint16_t bits = t.isScalar(ScalarType::BF16) ? floatToBf16Bits(f) : floatToF16Bits(f);
      b.inst(fmt::format("mov.b16 {}, 0x{:04X}", r.str(), bits));
      return true;
    }
  }
  return e.fail(op, "unsupported constant type " + t.str());
}

// kern.assume_range: a promise for the range analysis; the value is its operand's register.
bool emitAssumeRange(KernelEmitter& e, const Operation& op) {
  e.bind(op.result(), e.use(op.operand(0)));
  return true;
}

bool emitIntBinary(KernelEmitter& e, const Operation& op) {
  const Type& t = op.result()->type();
  Reg a = e.use(op.operand(0)), c = e.use(op.operand(1)), r = e.def(op.result());
  const std::string& n = op.name();
  if (t.isScalar(ScalarType::I1)) {
    const char* pop = n == "arith.andi" ? "and" : n == "arith.ori" ? "or" : n == "arith.xori" ? "xor" : nullptr;
    if (!pop) return e.fail(op, "only and/or/xor work on i1");
    e.b().inst(fmt::format("{}.pred {}, {}, {}", pop, r.str(), a.str(), c.str()));
    return true;
  }
  const char* w = is64(t) ? "64" : "32";
  std::string text;
  if (n == "arith.addi") text = fmt::format("add.s{}", w);
  else if (n == "arith.subi") text = fmt::format("sub.s{}", w);
  else if (n == "arith.muli") text = fmt::format("mul.lo.s{}", w);
  else if (n == "arith.divsi") text = fmt::format("div.s{}", w);
  else if (n == "arith.remsi") text = fmt::format("rem.s{}", w);
  else if (n == "arith.divui") text = fmt::format("div.u{}", w);
  else if (n == "arith.remui") text = fmt::format("rem.u{}", w);
  else if (n == "arith.minsi") text = fmt::format("min.s{}", w);
  else if (n == "arith.maxsi") text = fmt::format("max.s{}", w);
  else if (n == "arith.andi") text = fmt::format("and.b{}", w);
  else if (n == "arith.ori") text = fmt::format("or.b{}", w);
  else if (n == "arith.xori") text = fmt::format("xor.b{}", w);
  else if (n == "arith.shli") text = fmt::format("shl.b{}", w);
  else if (n == "arith.shrui") text = fmt::format("shr.u{}", w);
  else return e.fail(op, "unknown integer op");
  // PTX shifts take a 32-bit shift amount.
  e.b().inst(fmt::format("{} {}, {}, {}", text, r.str(), a.str(), c.str()));
  return true;
}

bool emitCmp(KernelEmitter& e, const Operation& op) {
  const Type& t = op.operand(0)->type();
  std::string p = op.stringAttr("pred");
  const char* w = is64(t) ? "64" : "32";
  std::string cmp;
  if (p == "eq" || p == "ne") cmp = fmt::format("{}.s{}", p, w);
  else if (p == "slt") cmp = fmt::format("lt.s{}", w);
  else if (p == "sle") cmp = fmt::format("le.s{}", w);
  else if (p == "sgt") cmp = fmt::format("gt.s{}", w);
  else if (p == "sge") cmp = fmt::format("ge.s{}", w);
  else if (p == "ult") cmp = fmt::format("lo.u{}", w);
  else return e.fail(op, "unknown predicate " + p);
  if (t.isScalar(ScalarType::I1)) return e.fail(op, "comparisons of i1 values are not supported");
  e.b().inst(fmt::format("setp.{} {}, {}, {}", cmp, e.def(op.result()).str(), e.use(op.operand(0)).str(),
                         e.use(op.operand(1)).str()));
  return true;
}

bool emitSelect(KernelEmitter& e, const Operation& op) {
  Reg c = e.use(op.operand(0)), a = e.use(op.operand(1)), f = e.use(op.operand(2)), r = e.def(op.result());
  PtxBuilder& b = e.b();
  if (r.cls == RegClass::Pred) {
    Reg t1 = b.reg(RegClass::Pred), t2 = b.reg(RegClass::Pred);
    b.inst(fmt::format("and.pred {}, {}, {}", t1.str(), c.str(), a.str()));
    b.inst(fmt::format("and.pred {}, !{}, {}", t2.str(), c.str(), f.str()));
    b.inst(fmt::format("or.pred {}, {}, {}", r.str(), t1.str(), t2.str()));
    return true;
  }
  b.inst(fmt::format("selp.{} {}, {}, {}, {}", moveType(op.result()->type()), r.str(), a.str(), f.str(), c.str()));
  return true;
}

bool emitCast(KernelEmitter& e, const Operation& op) {
  const Type &from = op.operand(0)->type(), &to = op.result()->type();
  Reg a = e.use(op.operand(0));
  if (from == to) {
    e.bind(op.result(), a);
    return true;
  }
  Reg r = e.def(op.result());
  PtxBuilder& b = e.b();
  auto is = [](const Type& t, ScalarType s) { return t.isScalar(s); };
  using S = ScalarType;
  std::string text;
  if (is(from, S::I32) && is(to, S::I64)) text = "cvt.s64.s32";
  else if (is(from, S::I64) && is(to, S::I32)) text = "cvt.u32.u64";
  else if (is(from, S::F32) && is(to, S::BF16)) text = "cvt.rn.bf16.f32";
  else if (is(from, S::F32) && is(to, S::F16)) text = "cvt.rn.f16.f32";
  else if (is(from, S::BF16) && is(to, S::F32)) text = "cvt.f32.bf16";
  else if (is(from, S::F16) && is(to, S::F32)) text = "cvt.f32.f16";
  else if (is(from, S::I32) && is(to, S::F32)) text = "cvt.rn.f32.s32";
  else if (is(from, S::F32) && is(to, S::I32)) text = "cvt.rzi.s32.f32";
  else if (is(from, S::I1) && (is(to, S::I32) || is(to, S::I64))) {
    b.inst(fmt::format("selp.{} {}, 1, 0, {}", is(to, S::I32) ? "u32" : "u64", r.str(), a.str()));
    return true;
  } else if ((is(from, S::I32) || is(from, S::I64)) && is(to, S::I1)) {
    b.inst(fmt::format("setp.ne.{} {}, {}, 0", is(from, S::I32) ? "s32" : "s64", r.str(), a.str()));
    return true;
  } else {
    return e.fail(op, "no conversion from " + from.str() + " to " + to.str());
  }
  // PTX ISA "cvt": a .bf16 source (cvt.f32.bf16) needs PTX 7.1; sm_80's own .version is 7.0, and
  // ptxas rejects the instruction there.
  if (is(from, S::BF16)) e.requirePtxIsa(7, 1);
  b.inst(fmt::format("{} {}, {}", text, r.str(), a.str()));
  return true;
}

bool emitFloatBinary(KernelEmitter& e, const Operation& op) {
  if (!op.result()->type().isScalar(ScalarType::F32)) return e.fail(op, "float math is emitted in f32 only");
  const std::string& n = op.name();
  const char* text = n == "arith.addf"   ? "add.rn.f32"
                     : n == "arith.subf" ? "sub.rn.f32"
                     : n == "arith.mulf" ? "mul.rn.f32"
                     : n == "arith.divf" ? (op.attr("approx") && op.attr("approx")->asBool() ? "div.full.f32" : "div.rn.f32")
                     : n == "arith.maxf" ? "max.NaN.f32"
                                         : "min.NaN.f32";
  e.b().inst(fmt::format("{} {}, {}, {}", text, e.def(op.result()).str(), e.use(op.operand(0)).str(),
                         e.use(op.operand(1)).str()));
  return true;
}

// a * b + c with one rounding (fma.rn.f32): the exact residuals of a refined quotient need it.
bool emitFloatFma(KernelEmitter& e, const Operation& op) {
  if (!op.result()->type().isScalar(ScalarType::F32)) return e.fail(op, "float math is emitted in f32 only");
  e.b().inst(fmt::format("fma.rn.f32 {}, {}, {}, {}", e.def(op.result()).str(), e.use(op.operand(0)).str(),
                         e.use(op.operand(1)).str(), e.use(op.operand(2)).str()));
  return true;
}

bool emitFloatUnary(KernelEmitter& e, const Operation& op) {
  if (!op.result()->type().isScalar(ScalarType::F32)) return e.fail(op, "float math is emitted in f32 only");
  Reg a = e.use(op.operand(0)), r = e.def(op.result());
  PtxBuilder& b = e.b();
  const std::string& n = op.name();
  if (n == "arith.negf") b.inst(fmt::format("neg.f32 {}, {}", r.str(), a.str()));
  else if (n == "arith.absf") b.inst(fmt::format("abs.f32 {}, {}", r.str(), a.str()));
  else return e.fail(op, "unknown float op");
  return true;
}

// setp on f32: eq, lt, le, gt, ge are the ordered forms (false with a NaN operand); ne is the
// unordered neu (true with a NaN), as tile.cmp says.
bool emitCmpf(KernelEmitter& e, const Operation& op) {
  if (!op.operand(0)->type().isScalar(ScalarType::F32)) return e.fail(op, "float comparisons are emitted in f32 only");
  std::string p = op.stringAttr("pred");
  const char* cmp = p == "ne" ? "neu" : p.c_str();
  e.b().inst(fmt::format("setp.{}.f32 {}, {}, {}", cmp, e.def(op.result()).str(), e.use(op.operand(0)).str(),
                         e.use(op.operand(1)).str()));
  return true;
}

}  // namespace kiln::ptx
