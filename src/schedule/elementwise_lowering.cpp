// The elementwise math lowering (contract in elementwise_lowering.h). Formulas are the
// interpreter's (kiln/interp/interpreter.h); the functions themselves are the math.* ops, whose
// GPU approximations codegen/ptx/emit_math.cpp states.
#include "schedule/elementwise_lowering.h"

#include <cmath>

#include "kiln/ir/diagnostics.h"

namespace kiln {
using ir::Value;
using tile::OpKind;

namespace {

// 1 / (1 + e^-x), the division approximate (div.full.f32, 2 ulp, as the ex2.approx before it): the
// correctly rounded div.rn.f32 costs a check and a branch to a slow path per element, which split
// a GEMM epilogue's straight-line code into a basic block per element (gemm_bias_silu_residual at
// 64x256: 181 branches against gemm_bias_gelu's 37, 928 instructions more).
Value* sigmoid(KernBuilder& b, Value* x) {
  Value* e = b.fun("math.exp", b.fun("arith.negf", x));
  return b.op1("arith.divf", {b.f32(1.0), b.fbin("arith.addf", b.f32(1.0), e)}, x->type(), {{"approx", true}});
}

Value* mul(KernBuilder& b, Value* x, Value* y) { return b.fbin("arith.mulf", x, y); }

}  // namespace

Value* lowerUnary(KernBuilder& b, OpKind k, Value* x) {
  switch (k) {
    case OpKind::Neg: return b.fun("arith.negf", x);
    case OpKind::Abs: return b.fun("arith.absf", x);
    case OpKind::Exp: return b.fun("math.exp", x);
    case OpKind::Relu: return b.fbin("arith.maxf", x, b.f32(0.0));
    case OpKind::Sigmoid: return sigmoid(b, x);
    case OpKind::Silu: return mul(b, x, sigmoid(b, x));
    case OpKind::GeluTanh: {
      // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
      Value* x3 = mul(b, mul(b, x, x), x);
      Value* inner = b.fbin("arith.addf", x, mul(b, b.f32(0.044715), x3));
      Value* th = b.fun("math.tanh", mul(b, b.f32(std::sqrt(2.0 / M_PI)), inner));
      return mul(b, mul(b, b.f32(0.5), x), b.fbin("arith.addf", b.f32(1.0), th));
    }
    case OpKind::GeluErf: {
      // 0.5 x (1 + erf(x / sqrt(2))), one builder call a statement (argument order is unspecified)
      Value* e = b.fun("math.erf", mul(b, x, b.f32(M_SQRT1_2)));
      Value* half = mul(b, b.f32(0.5), x);
      Value* onePlus = b.fbin("arith.addf", b.f32(1.0), e);
      return mul(b, half, onePlus);
    }
    case OpKind::Exp2: return b.fun("math.exp2", x);
    case OpKind::Log: {
      Value* l2 = b.fun("math.log2", x);
      return mul(b, l2, b.f32(M_LN2));
    }
    case OpKind::Sqrt: return b.fun("math.sqrt", x);
    case OpKind::Rsqrt: return b.fun("math.rsqrt", x);
    case OpKind::Tanh: return b.fun("math.tanh", x);
    case OpKind::Erf: return b.fun("math.erf", x);
    default: KILN_ICE("lowerUnary of a tile op that is not elementwise unary");
  }
}

Value* lowerBinary(KernBuilder& b, OpKind k, Value* x, Value* y) {
  switch (k) {
    case OpKind::Add: return b.fbin("arith.addf", x, y);
    case OpKind::Sub: return b.fbin("arith.subf", x, y);
    case OpKind::Mul: return b.fbin("arith.mulf", x, y);
    case OpKind::Div: return b.fbin("arith.divf", x, y);
    case OpKind::Max: return b.fbin("arith.maxf", x, y);
    case OpKind::Min: return b.fbin("arith.minf", x, y);
    default: KILN_ICE("lowerBinary of a tile op that is not elementwise binary");
  }
}

Value* lowerPow(KernBuilder& b, Value* x, double exponent) {
  if (exponent == 0.5) return b.fun("math.sqrt", x);
  if (exponent == -0.5) return b.fun("math.rsqrt", x);
  double n = std::fabs(exponent);
  if (n == std::floor(n) && n >= 1 && n <= 8) {
    // x^n by squaring (at most 6 products), then 1 / that for a negative exponent.
    Value* r = nullptr;
    Value* sq = x;
    for (int64_t e = int64_t(n); e > 0; e >>= 1) {
      if (e & 1) r = r ? mul(b, r, sq) : sq;
      if (e > 1) sq = mul(b, sq, sq);
    }
    return exponent < 0 ? b.fbin("arith.divf", b.f32(1.0), r) : r;
  }
  if (exponent == 0) return b.f32(1.0);
  Value* l2 = b.fun("math.log2", x);
  return b.fun("math.exp2", mul(b, b.f32(exponent), l2));
}

Value* lowerCmp(KernBuilder& b, const std::string& pred, Value* x, Value* y) {
  if (x->type().isScalar(ir::ScalarType::F32)) return b.op1("arith.cmpf", {x, y}, ir::types::i1(), {{"pred", pred}});
  std::string p = pred == "eq" || pred == "ne" ? pred : "s" + pred;  // signed integer order
  return b.op1("arith.cmpi", {x, y}, ir::types::i1(), {{"pred", p}});
}

}  // namespace kiln
