#pragma once
// tile.load and tile.store: moving a block between a tensor and a tile, masked at the tensor's
// edges (tile_ops.h: "Elements outside the tensor read as {other}. ... tile.store writes such a
// block, skipping elements outside the tensor").
#include <limits>
#include <vector>

#include "interp/runtime_values.h"

namespace kiln::interp {

// One index of an access: a coord selects the block [start, start + size) of its axis and keeps the
// axis; an integer selects one position and drops it.
struct AccessIndex {
  bool keepsAxis;
  int64_t start;
  int64_t size;  // 1 for an integer index
  int64_t limit = std::numeric_limits<int64_t>::max();  // positions at or past it are outside (Coord::limit)
};

// The tile at `idx` of `t`, with element type `t.dtype`; positions outside the tensor read `other`
// (already rounded to the dtype).
TilePtr loadTile(const BoundTensor& t, const std::vector<AccessIndex>& idx, double other);

// Writes `tile` at `idx` of `t`, skipping positions outside the tensor.
void storeTile(const BoundTensor& t, const std::vector<AccessIndex>& idx, const Tile& tile);

}  // namespace kiln::interp
