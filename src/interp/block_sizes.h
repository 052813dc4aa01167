#pragma once
// The interpreter's choice of block size for every dim of a program (the policy is written in
// kiln/interp/interpreter.h). The choice cannot change results, so it optimises for simplicity:
// tiled dims in blocks of 64, group dims in blocks that divide the group alignment, and everything
// else -- reduction dims in particular -- as one whole-dim block, so that no dot sums padding.
#include <cstdint>
#include <map>
#include <string>

#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"

namespace kiln::interp {

inline constexpr int64_t kTileBlock = 64;

// Fills `blocks` with a block size for every dim in `extents`. `overrides` (RunOptions::blockSizes)
// win where given; an override that is not positive, names no dim, does not divide a group
// alignment, or splits a dim that tile.span covers whole is a user error.
bool chooseBlockSizes(const ir::Operation& program, const std::map<std::string, int64_t>& extents,
                      const std::map<std::string, int64_t>& overrides, std::map<std::string, int64_t>& blocks,
                      ir::DiagnosticEngine& diag);

}  // namespace kiln::interp
