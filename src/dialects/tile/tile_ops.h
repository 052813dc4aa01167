#pragma once
// The tile dialect: what a user writes (DESIGN.md, "tile dialect").
//
// Semantics, which the interpreter implements exactly and every strategy must preserve:
//  * A program declares symbolic dims (`dims`), tensor arguments (tile.input / tile.output, typed
//    tensor<elem, [extents], order = [...]>, where `order` lists dims fastest-first and defaults to
//    row-major) and scalar arguments (tile.scalar).
//  * tile.for_tiles {dims = [D...], batch = "B"} runs its body once per output tile, in parallel
//    and in any order. Its block arguments are an `index` for the batch (when given) and one
//    coord<[D]> per tiled dim: the block of that dim the instance owns. Block sizes are chosen by
//    the schedule; the program's meaning does not depend on them.
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
//  * Elementwise ops take two tiles of one type, or a tile and a scalar of its element type.
//    Float math is in f32 semantics for f32 tiles; narrower floats compute in f32 and round once.
//  * tile.cast rounds to nearest even (saturating for FP8, as the hardware's satfinite conversion).
//  * tile.broadcast extends [N] to [M, N] (the same row for every row), [M] to [M, N] (the same
//    column for every column), or a scalar to any tile.
//  * tile.scale(x, s): x * s broadcast; s is [M] (per row), [N] (per column), or a scalar (per block).
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
