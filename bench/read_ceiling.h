#pragma once
// The read ceiling of a memory-bound GEMM: the time a plain streaming kernel takes to read the same
// bytes the GEMM must read (A and B), measured like the kernels (L2 flushed, CUDA events, median).
// Two engines read: 16-byte loads from every thread, and TMA bulk copies issued by one thread per
// block into a ring of shared memory, as the GEMM's producer does (read_ceiling_ptx.h).
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
    double ms = 0;    // the fastest way's median
    std::string how;  // which way that was: "ld.global.nc, 4 blocks/SM, evict_first", "TMA 16 KB x 12, ..."
    double ldMs = 0;     // the fastest with ld.global.nc loads (the ceiling before the TMA reads)
    double tmaMs = 0;    // the fastest with TMA bulk copies into shared memory
    double plainMs = 0;  // ld.global.nc with the default L2 policy (the figure of bd617a6)
  };
  // Median time to read `bytes` (rounded down to 16) from a fresh buffer, over several ways (loads
  // or TMA bulk copies, launch shapes, the default and the evict_first L2 policy); the fastest is
  // returned with what it was.
  Result measure(size_t bytes, int warmup, int reps);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::bench
