#pragma once
// Addresses of the epilogue's global accesses (sm80_epilogue.cpp): element offsets in a tensor of
// the program, and the shared-base form of a predicated load's address.
#include <functional>
#include <vector>

#include "dialects/kern/kern_builder.h"

namespace kiln::sm80 {

// The i32 value of a tensor extent (a constant, or the dim's kernel argument).
using ExtentValue = std::function<ir::Value*(const ir::Extent&)>;

// Element offset (i64) of position `pos` (one i32 entry per axis of `t`, in axis order) in tensor
// `t`, laid out by its `order` (fastest axis first; row-major without one).
ir::Value* elementOffset(KernBuilder& b, const ir::Type& t, const std::vector<ir::Value*>& pos, const ExtentValue& extent);

// The address in tensor `t` (at `base`) of a load at `pos` that runs only where every position is
// inside its axis. A position on a constant-stride axis that is x + k for a compile-time k >= 0 (a
// fragment's row or column: a base plus 8h, or 8j + e) is widened before k is added, so the loads
// of an epilogue share one widened base per x and differ by an immediate that ptxas folds into the
// access. Equal to the plain offset wherever the load runs: there 0 <= x + k < extent < 2^31 with
// x, k >= 0, so the i32 sum did not wrap.
ir::Value* loadAddress(KernBuilder& b, ir::Value* base, const ir::Type& t, const std::vector<ir::Value*>& pos,
                       const ExtentValue& extent);

}  // namespace kiln::sm80
