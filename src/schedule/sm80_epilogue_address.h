#pragma once
// Addresses of the epilogue's global accesses (sm80_epilogue.cpp): element offsets in a tensor of
// the program, and the shared-base form of a predicated load's address.
#include <functional>
#include <utility>
#include <vector>

#include "dialects/kern/kern_builder.h"
#include "dialects/kern/kernel_launch.h"
#include "schedule/gemm_analysis.h"

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

// The bytes of one access of an epilogue load that reads two adjacent columns at once (the pair
// (2t, 2t + 1) a thread holds of each n8 tile), or 0 where it reads one element at a time. Pairs
// need: a fragment whose columns are the output's columns (not swap_ab, whose pairs lie along M);
// a tile.load whose tensor's unit-stride axis is indexed by the tile's N coordinate; bf16 or f16
// (one 32-bit word, unpacked) or f32 (ld.global.v2) elements, with no {other} fill but zero for the
// packed words; the output's rows in pairs (align_c covers a pair, so N is even and no pair
// straddles the tensor's end: the pair's first column decides both); and, dense, an even row length.
// The launch requires the tensor's base (and a strided one's rows) aligned to the pair
// (requirePairLoads).
int pairLoadBytes(const GemmProgram& g, const Config& cfg, const ir::Operation& load);

// The two elements of a pair at `addr` (pairLoadBytes), as f32, read where `ok` holds (else
// `other`, 0 for packed words).
std::pair<ir::Value*, ir::Value*> loadPair(KernBuilder& b, ir::Value* addr, ir::Value* ok, ir::ScalarType e,
                                           double other);

// The launch requirements of the epilogue's pair loads: each such tensor aligned to its pair, a
// dense one's row length even.
void requirePairLoads(const GemmProgram& g, const Config& cfg, kern::KernelLaunch& launch);

}  // namespace kiln::sm80
