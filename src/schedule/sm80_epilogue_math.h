#pragma once
// The epilogue's elementwise math in kern IR's scalar ops (sm80_epilogue.cpp lowers the program's
// tail with these, per accumulator element, in f32).
#include "dialects/tile/tile_ops.h"
#include "dialects/kern/kern_builder.h"

namespace kiln::sm80 {

// The f32 value of unary op k at x (neg, abs, exp, relu, sigmoid, silu, gelu_tanh), or nullptr for
// an op with no lowering.
ir::Value* epilogueUnary(KernBuilder& b, tile::OpKind k, ir::Value* x);

// The arith op of binary op k (add, sub, mul, div, max, min), or nullptr.
const char* epilogueBinaryName(tile::OpKind k);

}  // namespace kiln::sm80
