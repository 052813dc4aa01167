// The waves of a ragged grouped GEMM (contract in ragged_waves.h).
#include "ops/ragged_waves.h"

#include <algorithm>
#include <cmath>

namespace kiln::ops {

RaggedWaves raggedWaves(int64_t m, int64_t n, int64_t bm, int64_t bn, int64_t groups, int64_t sms, bool streamK,
                        double overheadSteps, double ksteps) {
  const int64_t tn = (n + bn - 1) / bn, slots = std::max<int64_t>(sms, 1), g = std::max<int64_t>(groups, 1);
  const double tiles = (double(m) / double(bm) + 0.5 * double(g)) * double(tn);
  const double waves = tiles / double(slots);
  if (streamK) return {tiles, waves + overheadSteps / std::max(ksteps, 1.0)};
  const bool predictable = g * tn < slots;
  return {tiles, predictable ? std::ceil(waves) : waves + 0.5};
}

}  // namespace kiln::ops
