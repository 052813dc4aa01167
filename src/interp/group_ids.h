#pragma once
// The run-time half of the tile.group_index contract (tile_ops.h): "ids is a per-row i32 tensor
// [M]; the block uses the group of its first row. Rows of one group must be contiguous and each
// group's row count a multiple of A". The interpreter checks, before the first block reads a
// group, that the ids make every schedule agree with the interpreter:
//  * every aligned chunk of A rows [c*A, min((c+1)*A, M)) holds one group -- then any block size
//    dividing A sees one group per block (a last, shorter chunk is allowed: M need not be a
//    multiple of A);
//  * the rows of each group are contiguous;
//  * every id lies inside each tensor axis the group index directly selects (for example axis 0
//    of B [G, K, N]); when no such axis exists, ids only have to be non-negative.
#include "interp/runtime_values.h"

namespace kiln::interp {

// Checks the ids read by `op` (a tile.group_index) as they are now; reports the first violation.
bool checkGroupIds(const ir::Operation& op, const RunContext& ctx);

}  // namespace kiln::interp
