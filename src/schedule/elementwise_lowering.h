#pragma once
// The tile dialect's elementwise math as kern IR scalar ops on one element, in f32: the building
// block every strategy's epilogue and the rowwise strategy lower tile.add ... tile.erf, tile.pow
// and tile.cmp with. The caller rounds each result to the tile's element type where that is
// narrower (the dialect's "compute in f32, round once").
#include <string>

#include "dialects/tile/tile_ops.h"
#include "dialects/kern/kern_builder.h"

namespace kiln {

// The f32 value of unary op k (tile::isElementwiseUnary) at x.
ir::Value* lowerUnary(KernBuilder& b, tile::OpKind k, ir::Value* x);

// The f32 value of binary op k (tile::isElementwiseBinary) at x, y.
ir::Value* lowerBinary(KernBuilder& b, tile::OpKind k, ir::Value* x, ir::Value* y);

// x^exponent: x * x for 2, sqrt / rsqrt for +-0.5, 1 / x for -1, repeated products for other small
// integers, else 2^(exponent log2 x), which is NaN for x < 0 like std::pow of a non-integer power.
ir::Value* lowerPow(KernBuilder& b, ir::Value* x, double exponent);

// tile.cmp {pred} of two f32 values (arith.cmpf) or two integers of one type (arith.cmpi, signed).
ir::Value* lowerCmp(KernBuilder& b, const std::string& pred, ir::Value* x, ir::Value* y);

}  // namespace kiln
