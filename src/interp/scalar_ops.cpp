// arith.* evaluation (see scalar_ops.h).
#include "interp/scalar_ops.h"

#include <limits>

#include "interp/element_codec.h"
#include "interp/elementwise.h"

namespace kiln::interp {
namespace {

using ir::ScalarType;

uint64_t widthMask(ScalarType t) {
  int w = t == ScalarType::Index ? 64 : ir::bitWidth(t);
  return w >= 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
}

Scalar intResult(ScalarType t, uint64_t v) { return Scalar::ofInt(t, wrapInt(static_cast<int64_t>(v), t)); }

std::optional<Scalar> intBinary(const ir::Operation& op, const Scalar& a, const Scalar& b, RunContext& ctx) {
  ScalarType t = a.type;
  uint64_t x = static_cast<uint64_t>(a.i), y = static_cast<uint64_t>(b.i);  // wrapping arithmetic
  const std::string& n = op.name();
  if (n == "arith.addi") return intResult(t, x + y);
  if (n == "arith.subi") return intResult(t, x - y);
  if (n == "arith.muli") return intResult(t, x * y);
  if (n == "arith.andi") return intResult(t, x & y);
  if (n == "arith.xori") return intResult(t, x ^ y);
  if (n == "arith.minsi") return a.i < b.i ? a : b;
  if (n == "arith.maxsi") return a.i > b.i ? a : b;
  int width = t == ScalarType::Index ? 64 : ir::bitWidth(t);
  if (n == "arith.shli") return intResult(t, b.i < 0 || b.i >= width ? 0 : x << b.i);
  if (n == "arith.shrui") return intResult(t, b.i < 0 || b.i >= width ? 0 : (x & widthMask(t)) >> b.i);
  if (n == "arith.divsi" || n == "arith.remsi") {
    if (b.i == 0) {
      ctx.diag.error(op.loc()) << "'" << n << "' divides by zero";
      return std::nullopt;
    }
    bool overflow = a.i == std::numeric_limits<int64_t>::min() && b.i == -1;  // the only case C++ leaves undefined
    if (n == "arith.divsi") return intResult(t, overflow ? x : static_cast<uint64_t>(a.i / b.i));
    return intResult(t, overflow ? 0 : static_cast<uint64_t>(a.i % b.i));
  }
  if (n == "arith.divui" || n == "arith.remui") {
    uint64_t ux = x & widthMask(t), uy = y & widthMask(t);
    if (uy == 0) {
      ctx.diag.error(op.loc()) << "'" << n << "' divides by zero";
      return std::nullopt;
    }
    return intResult(t, n == "arith.divui" ? ux / uy : ux % uy);
  }
  KILN_ICE("unhandled integer op " + n);
}

bool compare(const std::string& pred, const Scalar& a, const Scalar& b) {
  if (pred == "eq") return a.i == b.i;
  if (pred == "ne") return a.i != b.i;
  if (pred == "slt") return a.i < b.i;
  if (pred == "sle") return a.i <= b.i;
  if (pred == "sgt") return a.i > b.i;
  if (pred == "sge") return a.i >= b.i;
  if (pred == "ult") return (static_cast<uint64_t>(a.i) & widthMask(a.type)) < (static_cast<uint64_t>(b.i) & widthMask(b.type));
  KILN_ICE("unknown arith.cmpi predicate " + pred);
}

Scalar castScalar(const Scalar& a, ScalarType to, Arithmetic m) {
  if (ir::isInteger(a.type) && ir::isInteger(to)) return Scalar::ofInt(to, wrapInt(a.i, to));
  double v = applyCast(std::vector<double>{a.value()}, a.type, to, m)[0];
  return ir::isFloat(to) ? Scalar::ofFloat(to, v) : Scalar::ofInt(to, static_cast<int64_t>(v));
}

}  // namespace

int64_t wrapInt(int64_t v, ScalarType t) {
  switch (t) {
    case ScalarType::I1: return v & 1;
    case ScalarType::I32: return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
    default: return v;
  }
}

std::optional<Scalar> evalArith(const ir::Operation& op, const std::vector<Scalar>& args, RunContext& ctx) {
  const std::string& n = op.name();
  ScalarType rt = op.numResults() ? op.result()->type().elem() : ScalarType::I32;
  if (n == "arith.constant") {
    const ir::Attribute* v = op.attr("value");
    if (v->isBool()) return Scalar::ofInt(rt, wrapInt(v->asBool() ? 1 : 0, rt));
    if (ir::isFloat(rt)) return Scalar::ofFloat(rt, roundToType(v->asNumber(), rt));
    return Scalar::ofInt(rt, v->isInt() ? wrapInt(v->asInt(), rt) : static_cast<int64_t>(roundToType(v->asNumber(), rt)));
  }
  if (n == "arith.cmpi") return Scalar::ofInt(ScalarType::I1, compare(op.stringAttr("pred"), args[0], args[1]) ? 1 : 0);
  if (n == "arith.select") return args[0].i ? args[1] : args[2];
  if (n == "arith.cast") return castScalar(args[0], rt, ctx.arith);
  if (n == "arith.addf" || n == "arith.mulf") {
    auto k = n == "arith.addf" ? tile::OpKind::Add : tile::OpKind::Mul;
    double r = applyBinary(k, std::vector<double>{args[0].f}, std::vector<double>{args[1].f}, rt, ctx.arith)[0];
    return Scalar::ofFloat(rt, r);
  }
  return intBinary(op, args[0], args[1], ctx);
}

}  // namespace kiln::interp
