#pragma once
// tile.dot: acc + a @ b, accumulated in the order documented in kiln/interp/interpreter.h
// (for each (i, j): k increasing, one f32 multiply and one f32 add per k, never fused).
#include "interp/runtime_values.h"

namespace kiln::interp {

// a is [M, K], b is [K, N], acc is f32 [M, N]; returns the f32 [M, N] result. Exact mode computes
// in float; Reference mode in double (products of narrow values are exact there too).
TilePtr dot(const Tile& a, const Tile& b, const Tile& acc, Arithmetic m);

// tile.dot_scaled {block_k}: a and aScale are [M, K], b and bScale [K, N], acc f32 [M, N]. Each
// slice of blockK positions of K (from 0; the last may be shorter) is summed from zero as dot()
// sums, then added to acc as fma(sums, aScale[i][k0] * bScale[k0][j], acc) with the scale product
// rounded to f32 first (kiln/interp/interpreter.h). Reference mode: in double, nothing rounded.
TilePtr dotScaled(const Tile& a, const Tile& aScale, const Tile& b, const Tile& bScale, const Tile& acc,
                  int64_t blockK, Arithmetic m);

}  // namespace kiln::interp
