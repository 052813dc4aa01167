// The epilogue's elementwise math (contract in sm80_epilogue_math.h).
#include "schedule/sm80_epilogue_math.h"

#include <cmath>

namespace kiln::sm80 {
using ir::Value;

namespace {

Value* sigmoid(KernBuilder& b, Value* x) {
  Value* e = b.fun("math.exp", b.fun("arith.negf", x));
  return b.fbin("arith.divf", b.f32(1.0), b.fbin("arith.addf", b.f32(1.0), e));
}

}  // namespace

Value* epilogueUnary(KernBuilder& b, tile::OpKind k, Value* x) {
  switch (k) {
    case tile::OpKind::Neg: return b.fun("arith.negf", x);
    case tile::OpKind::Abs: return b.fun("arith.absf", x);
    case tile::OpKind::Exp: return b.fun("math.exp", x);
    case tile::OpKind::Relu: return b.fbin("arith.maxf", x, b.f32(0.0));
    case tile::OpKind::Sigmoid: return sigmoid(b, x);
    case tile::OpKind::Silu: return b.fbin("arith.mulf", x, sigmoid(b, x));
    case tile::OpKind::GeluTanh: {
      // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
      Value* x3 = b.fbin("arith.mulf", b.fbin("arith.mulf", x, x), x);
      Value* inner = b.fbin("arith.addf", x, b.fbin("arith.mulf", b.f32(0.044715), x3));
      Value* th = b.fun("math.tanh", b.fbin("arith.mulf", b.f32(std::sqrt(2.0 / M_PI)), inner));
      return b.fbin("arith.mulf", b.fbin("arith.mulf", b.f32(0.5), x), b.fbin("arith.addf", b.f32(1.0), th));
    }
    default: return nullptr;
  }
}

bool hasEpilogueUnary(tile::OpKind k) {
  switch (k) {
    case tile::OpKind::Neg:
    case tile::OpKind::Abs:
    case tile::OpKind::Exp:
    case tile::OpKind::Relu:
    case tile::OpKind::Sigmoid:
    case tile::OpKind::Silu:
    case tile::OpKind::GeluTanh: return true;
    default: return false;
  }
}

const char* epilogueBinaryName(tile::OpKind k) {
  switch (k) {
    case tile::OpKind::Add: return "arith.addf";
    case tile::OpKind::Sub: return "arith.subf";
    case tile::OpKind::Mul: return "arith.mulf";
    case tile::OpKind::Div: return "arith.divf";
    case tile::OpKind::Max: return "arith.maxf";
    case tile::OpKind::Min: return "arith.minf";
    default: return nullptr;
  }
}

}  // namespace kiln::sm80
