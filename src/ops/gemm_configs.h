#pragma once
// Schedules the GPU tests and the benchmark exercise for the BF16 GEMM: a hand-picked sm80 list
// (until the registered family, src/ops/gemm_bf16.h, carries them), and the registered sm90
// variants' configs (gemmBf16Sm90BenchConfigs, from the family table itself).
#include <string>
#include <vector>

#include "ops/gemm_bf16.h"

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

// The config line of every registered sm90_ws_persistent variant, in table order.
inline std::vector<std::string> gemmBf16Sm90BenchConfigs() {
  std::vector<std::string> configs;
  for (const auto& v : gemmBf16Variants())
    if (v.config.strategy == "sm90_ws_persistent") configs.push_back(v.config.str());
  return configs;
}

}  // namespace kiln::ops
