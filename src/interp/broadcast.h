#pragma once
// tile.broadcast: extends a tile to a larger one whose dims include the source's dims in order
// ([N] -> [M, N] repeats the row, [M] -> [M, N] repeats the column), or splats a scalar.
#include <vector>

#include "interp/runtime_values.h"

namespace kiln::interp {

// `src` (values row-major over srcShape) extended to resultShape. The source axes map onto the
// result axes as the verifier matches them: greedily, each source dim to the first unmatched result
// dim with the same extent symbol (srcDims / resultDims). A scalar is an empty srcShape.
std::vector<double> broadcastValues(const std::vector<double>& src, const ir::Shape& srcDims,
                                    const std::vector<int64_t>& srcShape, const ir::Shape& resultDims,
                                    const std::vector<int64_t>& resultShape);

}  // namespace kiln::interp
