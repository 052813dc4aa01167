#pragma once
// Sampled verification of a large run (`kiln run` on the GPU): instead of interpreting the whole
// problem, which takes minutes at 8192^3, the fp64 reference runs only a few hundred output tiles,
// chosen at random (plus the first and last, where edge masking lives), and the kernel's output is
// compared on those tiles' elements alone.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kiln/interp/interpreter.h"

namespace kiln::interp {

struct TileSample {
  RunOptions options;      // the block sizes the instances are counted in, and the instances
  int64_t instances = 0;   // how many the problem has in all
};

// The tiles to check: up to `maxTiles` instances of the program's tile.for_tiles, distinct and
// sorted, chosen from `seed`; every instance when there are no more than that. nullopt when the
// program has no tile.for_tiles. Blocks are 64 along each tiled dim (less for a short dim, or to
// divide a tile.group_index alignment).
std::optional<TileSample> sampleTiles(const ir::Operation& program, const std::map<std::string, int64_t>& dims,
                                      size_t maxTiles, uint64_t seed);

struct SampledErrors {
  size_t checked = 0;    // elements the reference wrote (not NaN)
  size_t bad = 0;        // of those, beyond the per-element bound, or non-finite where the reference is finite
  size_t firstBad = 0;   // flat index of the first bad element
  double relFro = 0;     // ||got - ref|| / ||ref|| over the checked elements
};

// Compares `got` with `ref` where `ref` was written (a reference run over a sample, on outputs
// poisoned with NaN beforehand). The per-element bound is tol * max(|ref|, rms(ref)), so a single
// wrong element fails even where the Frobenius norm would hide it.
SampledErrors compareSampled(const std::vector<double>& got, const std::vector<double>& ref, double tol);

}  // namespace kiln::interp
