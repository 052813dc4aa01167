#pragma once
// Elementwise float math, tile.scale and tile.cast on flat arrays of element values, in the two
// arithmetics of the interpreter (the rules are in kiln/interp/interpreter.h):
//  Exact      each op is one f32 operation (transcendentals: double, then rounded to f32), and the
//             result is rounded once to the element type when that is narrower;
//  Reference  each op is done in double and never rounded.
#include <span>
#include <string_view>
#include <vector>

#include "dialects/tile/tile_ops.h"
#include "interp/runtime_values.h"

namespace kiln::interp {

// `k` applied to each value of `x`; `elem` is the element type of operand and result.
std::vector<double> applyUnary(tile::OpKind k, std::span<const double> x, ir::ScalarType elem, Arithmetic m);

// `k` applied pairwise to `a` and `b`. One of them may hold a single value, which pairs with every
// value of the other (a scalar operand).
std::vector<double> applyBinary(tile::OpKind k, std::span<const double> a, std::span<const double> b, ir::ScalarType elem,
                                Arithmetic m);

// tile.scale on a rows x cols f32 tile: x[i][j] * s[i] (perRow), x[i][j] * s[j] (per column), or
// x[i][j] * s[0] when s holds one value.
std::vector<double> applyScale(std::span<const double> x, int64_t rows, int64_t cols, std::span<const double> s,
                               bool perRow, Arithmetic m);

// tile.pow: x^exponent, computed in double from the f32 input (Exact: then rounded to f32 and to
// `elem`; Reference: in double throughout).
std::vector<double> applyPow(std::span<const double> x, double exponent, ir::ScalarType elem, Arithmetic m);

// tile.cmp: 1 where `pred` (eq, ne, lt, le, gt, ge) holds pairwise, else 0; a single value pairs with
// every value of the other operand. Values compare exactly (floats by IEEE rules, integers exactly).
std::vector<double> applyCmp(std::string_view pred, std::span<const double> a, std::span<const double> b);

// tile.select: a where c is nonzero, else b; any operand may hold a single value (a scalar).
std::vector<double> applySelect(std::span<const double> c, std::span<const double> a, std::span<const double> b);

// tile.cast / arith.cast from `from` to `to`. Exact: round to nearest even (FP8 saturating; to an
// integer: saturating, NaN -> 0). Reference: casts to float types are the identity.
std::vector<double> applyCast(std::span<const double> x, ir::ScalarType from, ir::ScalarType to, Arithmetic m);

}  // namespace kiln::interp
