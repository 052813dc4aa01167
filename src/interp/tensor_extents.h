#pragma once
// The extents of a declared tensor argument at given dims: its logical extents (what positions
// are checked against) and its stored ones (what a HostTensor holds: ceil(extent / block) per axis
// for a block tensor, tile_ops.h "Block tensors"; the same as the logical ones otherwise).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kiln/ir/types.h"

namespace kiln::interp {

// Constants as written, dims from `dims`; nullopt when a dim is missing or not positive.
std::optional<std::vector<int64_t>> logicalExtents(const ir::Type& tensor, const std::map<std::string, int64_t>& dims);
// ceil(logical / block) per axis (ir::blockOf).
std::vector<int64_t> storedExtents(const ir::Type& tensor, const std::vector<int64_t>& logical);

}  // namespace kiln::interp
