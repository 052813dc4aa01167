#pragma once
// The tile dialect: what a user writes (DESIGN.md, "tile dialect").
//
// Semantics, which the interpreter implements exactly and every strategy must preserve:
//  * A program declares symbolic dims (`dims`), tensor arguments (tile.input / tile.output, typed
//    tensor<elem, [extents], order = [...]>, where `order` lists dims fastest-first and defaults to
//    row-major, or tensor<elem, [extents], strides = [...]> with an element stride per axis, each
//    a constant or a dim: tensor_layout.h) and scalar arguments (tile.scalar). Two elements of an
//    output never share storage (checked at launch); an input's may (a batch stride 0).
//  * tile.for_tiles {dims = [D...], batch = "B"} runs its body once per output tile, in parallel
//    and in any order. Its block arguments are an `index` for the batch (when given) and one
//    coord<[D]> per tiled dim: the block of that dim the instance owns. Block sizes are chosen by
//    the schedule; the program's meaning does not depend on them.
//  * Ragged groups. tile.for_tiles(%bounds) {batch = "G", ragged = "D", bounds = "offsets"|"counts",
//    dims = [...]} runs its body for every group g in [0, G) (its index argument is g), and in
//    group g dim D means the range [lo_g, hi_g): with offsets (an i32/i64 tensor [G] of the groups'
//    cumulative ends, torch._grouped_mm's `offs`) lo_g = offsets[g-1] (0 for g = 0) and hi_g =
//    offsets[g]; with counts (DeepGEMM's masked layout) lo_g = 0 and hi_g = counts[g]. When the
//    loop tiles D, the group's tiles start at lo_g (lo_g, lo_g + block, ...) and positions at or
//    past hi_g are outside, like positions past a tensor's end: loads read {other}, stores skip
//    them. When a tile.reduce in the body iterates D, it iterates the blocks of [lo_g, hi_g) the
//    same way. Positions of D past the last group (offsets) or past a group's count are never
//    computed, so outputs there keep what they held. Bounds must satisfy 0 <= lo_g <= hi_g <=
//    extent(D) (offsets non-decreasing): a program given others is in error.
//  * tile.reduce(%init...) {dim = "K"} iterates the blocks of K in increasing order; its body gets
//    coord<[K]> and the carried values, and yields the next carried values.
//  * tile.load(%t, %i...) reads the block selected by its indices: a coord<[D]> index selects the
//    block of dim D (the tensor's extent at that position must be D), an integer index selects one
//    position and drops that axis. Elements outside the tensor read as {other} (default 0). The
//    result is tile<elem, [the coord dims, in order]>. tile.store writes such a block, skipping
//    elements outside the tensor.
//  * tile.load_scalar reads one element, at the first position of each coord's block.
//  * tile.group_index(%ids, %m) {align = A}: ids is a per-row i32 tensor [M]; the block uses the
//    group of its first row. Rows of one group must be contiguous and each group's row count a
//    multiple of A (checked at run time by the interpreter); schedules must pick BM dividing A.
//  * tile.dot(a: [M, K], b: [K, N], acc: f32 [M, N]) = acc + a @ b, exact products summed in f32.
//  * Block tensors. tensor<f32, [M, K], block = [1, 128]> (inputs only) is indexed like any [M, K]
//    tensor, but stores one element per block: ceil(extent / block) per axis, laid out in `order`;
//    logical position (i, j) reads stored element (i / 1, j / 128). This is how a program takes
//    the block scales of an FP8 operand (docs/fp8-scaling.md: 1x128, 128x128, ...).
//  * tile.dot_scaled(a [M, K], a_scale [M, K], b [K, N], b_scale [K, N], acc f32 [M, N])
//    {block_k = g}: the block-scaled product of FP8 recipes. The K block it gets (its tile.reduce's)
//    is cut into slices of g positions from the block's start; for every output (i, j), slice by
//    slice in increasing order, with k0 the slice's first position:
//        p   = a[i, s] . b[s, j]                       (as tile.dot: f32 sums, from zero)
//        acc = fma(p, f32(a_scale[i, k0] * b_scale[k0, j]), acc)   (one rounding)
//    so a slice's partial sums are scaled once before they join the f32 accumulator. Schedules
//    must use K blocks that are multiples of g, so that slices start at multiples of g.
//  * Elementwise ops take two tiles of one type, or a tile and a scalar of its element type.
//    Float math is in f32 semantics for f32 tiles; narrower floats compute in f32 and round once.
//  * tile.cast rounds to nearest even (saturating for FP8, as the hardware's satfinite conversion).
//  * tile.broadcast extends [N] to [M, N] (the same row for every row), [M] to [M, N] (the same
//    column for every column), or a scalar to any tile.
//  * tile.scale(x, s): x * s broadcast; s is [M] (per row), [N] (per column), or a scalar (per block).
//  * Whole dims. A dim is whole when no tile.for_tiles tiles it and no tile.reduce loop iterates it.
//    tile.span {dim = "N"} (inside a tile.for_tiles) is the coord<[N]> of the one block that covers
//    all of a whole dim N: a tile loaded with it holds every element along N (a whole row).
//  * tile.iota(%c): tile<i32, [D]> holding the positions c.start, c.start + 1, ... of the coord's
//    block along D (the column index of each element of a row, for example).
//  * tile.reduce_axis(x) {kind = "sum"|"max"|"min", dim = "N"}: x reduced along its (first) axis of
//    dim N, which must be whole, so the result never depends on a block size; the result has the
//    other axes (a scalar when none is left) and element type f32 or x's. The sum accumulates in
//    f32 whatever x's element type (16-bit and FP8 inputs included) and is rounded once to the
//    result type; max and min propagate NaN and order -0 below +0, like tile.max / tile.min.
//    The interpreter sums in increasing position order; a compiled kernel may sum in any order
//    (a tree across threads), so sums agree to f32 rounding, not bit for bit.
//  * Math: tile.exp, exp2, log, sqrt, rsqrt, tanh, erf, sigmoid, and tile.pow {exponent = c} (x^c
//    for a constant c) are elementwise, computed in f32 semantics and rounded once to the element
//    type. Compiled kernels use the GPU's approximations where their error is a few ulp (ex2,
//    lg2, rsqrt, tanh: codegen/ptx/emit_math.cpp says which and how close).
//  * tile.cmp(a, b) {pred = eq|ne|lt|le|gt|ge}: elementwise comparison of two floats or two
//    integers of one type (a tile and a scalar pair like elementwise math) into i1; with a NaN
//    operand every predicate is false except ne. tile.select(c, a, b) is a where c holds, else b
//    (c an i1 tile or scalar; a and b of one element type, tiles of c's shape or scalars).
#include <optional>
#include <string>
#include <string_view>

#include "kiln/ir/operation.h"

namespace kiln::tile {

enum class OpKind {
#define TILE_OP(e, name, ...) e,
#include "tile_ops.def"
#undef TILE_OP
};

// The tile op kind of an operation, or nullopt when it is not a tile op.
std::optional<OpKind> kindOf(const ir::Operation& op);
std::string_view opName(OpKind k);

bool isElementwiseBinary(OpKind k);
bool isElementwiseUnary(OpKind k);

// The shape a tile.load / tile.store with these operands moves, or nullopt with a reason.
std::optional<ir::Shape> accessShape(const ir::Operation& op, unsigned numIndices, std::string* why);

// The dim a coord<[D]> value stands for, or "" when the value is not a coord.
std::string coordDim(const ir::Value* v);

}  // namespace kiln::tile
