#pragma once
// The groups of a ragged tile.for_tiles (tile_ops.h, "Ragged groups"): the range of the ragged dim
// each group owns, read from the bounds tensor and checked before any group runs.
#include <cstdint>
#include <optional>
#include <vector>

#include "interp/runtime_values.h"

namespace kiln::interp {

struct GroupRange {
  int64_t lo = 0, hi = 0;  // [lo, hi) of the ragged dim
};

// One range per group, or nullopt after a diagnostic that names the bounds tensor, the group and
// the rule it breaks (offsets that decrease, or bounds outside [0, extent of the ragged dim]).
std::optional<std::vector<GroupRange>> raggedGroupRanges(const ir::Operation& forTiles, const RunContext& ctx);

}  // namespace kiln::interp
