#pragma once
// The harness of the sm90_ws_persistent functional tests: compile a config for sm_90a, run the
// kern IR in the warp-specialized simulator (tests/unit/testing/ws_sim.h) on seeded inputs, and
// check every element of C against a double-precision reference. Outputs start poisoned and a
// guard after C must stay untouched; split-K / stream-K flags must be zero after the launch.
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "kiln/ir/operation.h"

namespace kiln::sm90sim {

struct Problem {
  int64_t m, n, k;
  bool kMajor = false;
  int64_t batch = 0;  // > 0: the batched program, dim "B"
  uint32_t blocks = 0;  // 0: one per tile (capped at 4)
  bool f16 = false;     // the FP16 program (examples::gemmF16) instead of the BF16 one
  // C = (A·B) scaled per row by s[M], plus bias[N] (f32): the epilogue's per-row and per-column
  // values, with rows and columns past the tensor's edges (row-major B, BF16, no batch).
  bool scaled = false;
  // examples::fp8RowwiseGemm: e4m3 A and K-major B, C = (A·B) scaled by scale_a[M] and scale_b[N].
  bool fp8 = false;
  // With fp8: the tensorwise program instead (ops/fp8_programs.h): C = (A·B) x f32(scale_a x scale_b),
  // scale_a and scale_b one element each.
  bool tensorwise = false;
  // With fp8: the blockwise program (ops/fp8_programs.h) instead: 1 for 1x128 x 128x128 scales, 2 for
  // 1x128 x 1x128, each block its own scale, applied to each 128-wide slice of K's sums.
  int blockwise = 0;
  // examples::gemmBiasSiluResidual: C = silu(A·B + bias[N]) + R[M, N] (bias f32, R bf16), the
  // residual read per element in the epilogue.
  bool residual = false;
  // > 0: examples::groupedGemm with G = groups, B [G][K][N]: rows in blocks of 64 (its align), block
  // i of group (i * 3 + 1) % (groups + 1), so one group id in G + 1 is out of range (B reads zeros).
  int64_t groups = 0;
};

// `mutate` edits the compiled kernel before it runs (to show the simulator catches a broken
// protocol); then the simulator must report an error containing `expectError`.
// `evictFirstBytes` (optional) receives, per tensor map (A, B(, C)), the bytes its TMA loads read
// under an L2 evict_first policy.
// `lines` (optional) receives, per block, the 128-byte lines of global memory its prefetches
// brought in and its ld.global reads of the program's tensors touched (WsLaunch::prefetchedLines,
// loadedLines; split-K's and stream-K's workspace left out).
struct CacheLines {
  std::vector<std::set<uint64_t>> prefetched, loaded;
};
void check(const std::string& configText, const Problem& p,
           const std::function<void(ir::Operation& kernel)>& mutate = {}, const std::string& expectError = "",
           std::vector<int64_t>* evictFirstBytes = nullptr, CacheLines* lines = nullptr);

// A protocol breaker: every op `name` of the kernel erased.
std::function<void(ir::Operation&)> dropAll(const char* name);

inline const char* k128 =
    "strategy=sm90_ws_persistent bm=128 bn=128 bk=64 stages=3 warps_m=2 warps_n=1 raster=grouped group_m=2";
inline const char* k64 = "strategy=sm90_ws_persistent bm=64 bn=64 bk=64 stages=2 warps_m=1 warps_n=1";

// The FP8 tests' config prefix (bk = 128 one-byte elements, a TMA-store epilogue through stmatrix)
// and problem (examples::fp8RowwiseGemm at M x N x K on `blocks` blocks).
inline const std::string kFp8 = "strategy=sm90_ws_persistent bk=128 warps_n=1 epilogue=tma stage_store=stmatrix ";
inline Problem fp8(int64_t m, int64_t n, int64_t k, uint32_t blocks) {
  Problem p{m, n, k, true, 0, blocks};
  p.fp8 = true;
  return p;
}

// The diagnostics of compiling `program` for sm_90a with `config`, which must fail.
std::string compileError(const ir::Module& program, const std::string& config);

}  // namespace kiln::sm90sim
