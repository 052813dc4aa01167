#pragma once
// Seeded inputs for running a program without real data (`kiln interpret`, tests, benchmarks).
//
//  * Every float or integer input tensor: std::normal_distribution(0, 1) draws from
//    std::mt19937_64(seed), one per element in storage order, inputs in declaration order, each
//    rounded once to the dtype. A tensor of kParallelElements elements or more is drawn on every
//    core instead, each chunk of kChunkElements from its own std::mt19937_64, seeded by a hash of
//    (seed, the input's index, the chunk's index), so its values do not depend on the thread count
//    (a 16384 x 16384 operand took ~25 s drawn one element at a time; the tuner draws its inputs
//    for every search). It draws nothing from the shared generator.
//  * An input read by tile.group_index gets valid per-row group ids instead: each aligned chunk of
//    `align` rows draws a group uniformly from [0, G), and the draws are sorted, so groups are
//    contiguous, ascending, and a multiple of `align` rows long (the last chunk may be shorter). G is
//    the extent of the tensor axis the group index selects (1 when it selects none).
//  * Outputs are poisoned with NaN, so that an element the program never writes shows up.
//  * Scalars are 1.0.
#include <cstdint>
#include <map>
#include <string>

#include "kiln/interp/interpreter.h"

namespace kiln::interp {

inline constexpr int64_t kParallelElements = int64_t(1) << 22;
inline constexpr int64_t kChunkElements = int64_t(1) << 20;

// The tensors and scalars of a run, owned here, with `request` pointing into them.
struct GeneratedArguments {
  std::map<std::string, HostTensor> tensors;
  RunRequest request;
};

// Arguments for `program` at `dims` (which must all be present and positive: run() reports them
// otherwise, so the caller runs first or checks). Tensors whose extents cannot be resolved are
// left out, for run() to report.
GeneratedArguments generateArguments(const ir::Operation& program, const std::map<std::string, int64_t>& dims,
                                     uint64_t seed);

}  // namespace kiln::interp
