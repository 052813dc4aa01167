#pragma once
// The schedule the tests use for each example program (examples/*.cpp), by name:
// the assembly gates (tests/unit/examples/examples_gates_test.cpp) and the GPU tests
// (tests/gpu/ops/examples_gpu_test.cpp) compile every example with it, so both check the same
// kernels. Each fits every target the example runs on (smem <= 99 KB, so sm_89 and sm_120 too):
//  * BF16 and FP16 programs: 128x128 tiles, 2x2 warps of 64x64, bk=32, 3 stages (48 KB); the
//    residual epilogue (gemm_bias_silu_residual) with 2x4 warps of 64x32;
//  * fp8_rowwise_gemm: bk=64 (FP8 rows of 64 bytes, the smallest the swizzle takes), 4 stages (64
//    KB) and 2x4 warps of 64x32: on sm_90a, which has no FP8 mma.sync, ptxas widens every operand
//    register to two f16x2 ones, and 64x64 warp tiles then spill (255 registers, 72 bytes);
//  * grouped_gemm: bm=64, which divides its tile.group_index {align = 64};
//  * the memory-bound examples: a rowwise schedule (their line names the strategy).
// A new example needs an entry here; exampleConfig() returns "" for an unknown name and the tests
// that use it fail, saying so.
#include <map>
#include <string>

namespace kiln::testing {

inline std::string exampleConfig(const std::string& example) {
  static const std::map<std::string, std::string> configs = {
      {"gemm_bf16", "bm=128 bn=128 bk=32 stages=3 warps_m=2 warps_n=2"},
      {"gemm_bias_gelu", "bm=128 bn=128 bk=32 stages=3 warps_m=2 warps_n=2"},
      // The residual's loads beside 64x64 warp tiles' accumulators spill (336 bytes): 2x4 warps of 64x32.
      {"gemm_bias_silu_residual", "bm=128 bn=128 bk=32 stages=3 warps_m=2 warps_n=4"},
      {"batched_gemm", "bm=128 bn=128 bk=32 stages=3 warps_m=2 warps_n=2"},
      {"gemm_kmajor_b", "bm=128 bn=128 bk=32 stages=3 warps_m=2 warps_n=2"},
      {"gemm_f16", "bm=128 bn=128 bk=32 stages=3 warps_m=2 warps_n=2"},
      {"fp8_rowwise_gemm", "bm=128 bn=128 bk=64 stages=4 warps_m=2 warps_n=4"},
      {"grouped_gemm", "bm=64 bn=128 bk=32 stages=4 warps_m=2 warps_n=2"},
      // The memory-bound examples: rows of two warps (their partials meet in shared memory), four
      // vectors a thread.
      {"softmax", "strategy=rowwise row_threads=64 block_threads=256 vectors=4"},
      {"log_softmax", "strategy=rowwise row_threads=64 block_threads=256 vectors=4"},
      {"rms_norm", "strategy=rowwise row_threads=64 block_threads=256 vectors=4"},
      {"layer_norm", "strategy=rowwise row_threads=64 block_threads=256 vectors=4"},
      {"add_rms_norm", "strategy=rowwise row_threads=64 block_threads=256 vectors=4"},
      {"silu_and_mul", "strategy=rowwise row_threads=64 block_threads=256 vectors=4"},
      {"cross_entropy", "strategy=rowwise row_threads=64 block_threads=256 vectors=4"},
      {"fp8_quant", "strategy=rowwise row_threads=64 block_threads=256 vectors=4"},
  };
  auto it = configs.find(example);
  return it == configs.end() ? std::string() : it->second;
}

}  // namespace kiln::testing
