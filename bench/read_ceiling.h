#pragma once
// The read ceiling of a memory-bound GEMM: the time a plain streaming kernel takes to read the same
// bytes the GEMM must read (A and B), measured like the kernels (L2 flushed, CUDA events, median).
//
// The copy ceiling beside it (a device-to-device copy moving the same bytes, half read, half
// written) is shared/BENCH.md's; but a GEMM at small M reads ~50 MB and writes ~0.6 MB, and DRAM
// does not serve a read-only stream at the rate it serves a copy's mix. This is the floor a GEMM
// could reach if its loads were as good as the best plain loads: the honest target for the small
// shapes.
#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "kiln/runtime/device.h"

namespace kiln::bench {

class ReadCeiling {
 public:
  // Loads the streaming-read kernel (PTX, JIT-compiled by the driver) into `ctx`.
  explicit ReadCeiling(const runtime::Context& ctx);
  ~ReadCeiling();

  struct Result {
    double ms = 0;            // the best launch shape's and L2 policy's median
    int blocksPerSm = 0;      // which launch shape that was
    bool evictFirst = false;  // whether that was the evict_first policy
    double plainMs = 0;       // the best with the default L2 policy (the figure before evict_first)
  };
  // Median time to read `bytes` (rounded down to 16) from a fresh buffer, over several launch
  // shapes (blocks per SM) and two L2 policies (default, evict_first); the fastest is returned.
  Result measure(size_t bytes, int warmup, int reps);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::bench
