#pragma once
// Schedules the GPU tests and the benchmark exercise for the sm80 BF16 GEMM until the registered
// family (src/ops/gemm_bf16.h) carries them.
#include <string>
#include <vector>

namespace kiln::ops {

inline const std::vector<std::string>& gemmBf16TestConfigs() {
  static const std::vector<std::string> configs = {
      "strategy=sm80_multistage bm=128 bn=128 bk=32 stages=3 warps_m=2 warps_n=2",
      "strategy=sm80_multistage bm=64 bn=128 bk=32 stages=4 warps_m=2 warps_n=2",
      "strategy=sm80_multistage bm=128 bn=64 bk=32 stages=2 warps_m=2 warps_n=2",
      "strategy=sm80_multistage bm=32 bn=64 bk=32 stages=3 warps_m=1 warps_n=2",
      "strategy=sm80_multistage bm=128 bn=128 bk=64 stages=3 warps_m=2 warps_n=2",
      "strategy=sm80_multistage bm=128 bn=128 bk=32 stages=4 warps_m=2 warps_n=4",
      "strategy=sm80_multistage bm=128 bn=256 bk=32 stages=3 warps_m=2 warps_n=4",
      "strategy=sm80_multistage bm=256 bn=128 bk=32 stages=3 warps_m=4 warps_n=2",
  };
  return configs;
}

}  // namespace kiln::ops
