#pragma once
// Verify hooks of the tile dialect that live outside tile_dialect.cpp (one file per op family),
// declared here so the one op table (tile_ops.def) can name them, and the small type predicates
// the hook files share. Internal to the dialect.
#include <string>
#include <vector>

#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"

namespace kiln::tile {

inline bool isTileType(const ir::Type& t) { return t.isKind("tile") && t.hasElem() && t.hasShape(); }
inline bool isTensorType(const ir::Type& t) { return t.isKind("tensor") && t.hasElem() && t.hasShape(); }
// The dims the enclosing tile.program declares (empty outside one).
std::vector<std::string> programDims(const ir::Operation& op);
bool hasDim(const std::vector<std::string>& dims, const std::string& d);

// Why `dim` is not whole where `op` sits: "" when no loop splits it, else what does ("the tile
// loop splits it into blocks", ...). A dim is whole when no tile.for_tiles tiles it and no
// tile.reduce loop of the program iterates it; only whole dims may be spanned and reduced along.
std::string blockedBy(const ir::Operation& op, const std::string& dim);

// The operand rules tile.dot and tile.dot_scaled share: a [M, K] times b [K, N] into an f32 acc
// [M, N] that the result repeats, MMA element types (FP8 formats may mix).
bool verifyMatmul(const ir::Operation& op, const ir::Value& a, const ir::Value& b, const ir::Value& acc,
                  ir::DiagnosticEngine& d);

// tile_scaled_ops.cpp: the block-scaled matrix product and the `block` of tensor arguments.
bool verifyDotScaled(const ir::Operation& op, ir::DiagnosticEngine& d);
// The `block` parameter of a tensor argument's type (tile.input / tile.output), if it has one.
bool verifyTensorBlock(const ir::Operation& arg, ir::DiagnosticEngine& d);

// tile_group_ops.cpp: a tile.for_tiles over groups of a ragged dim ({ragged, bounds} and its
// bounds operand); called by verifyForTiles once the rest of the loop is known good.
bool verifyRaggedTiles(const ir::Operation& forTiles, ir::DiagnosticEngine& d);

// tile_row_ops.cpp: spans, positions, reductions along a dim, comparisons, selection, pow.
bool verifySpan(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyIota(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyReduceAxis(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyCmp(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifySelect(const ir::Operation& op, ir::DiagnosticEngine& d);
bool verifyPow(const ir::Operation& op, ir::DiagnosticEngine& d);

}  // namespace kiln::tile
