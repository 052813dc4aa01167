#pragma once
// tile.dot: acc + a @ b, accumulated in the order documented in kiln/interp/interpreter.h
// (for each (i, j): k increasing, one f32 multiply and one f32 add per k, never fused).
#include "interp/runtime_values.h"

namespace kiln::interp {

// a is [M, K], b is [K, N], acc is f32 [M, N]; returns the f32 [M, N] result. Exact mode computes
// in float; Reference mode in double (products of narrow values are exact there too).
TilePtr dot(const Tile& a, const Tile& b, const Tile& acc, Arithmetic m);

}  // namespace kiln::interp
