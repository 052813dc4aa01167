#pragma once
// The schedules the GPU tests and the benchmark exercise for the BF16 GEMM, from the registered
// gemm_bf16 family (src/ops/gemm_bf16.h): its sm80_multistage variants and its sm90_ws_persistent ones.
#include <string>
#include <vector>

#include "ops/gemm_bf16.h"

namespace kiln::ops {

// The config line of every registered sm80_multistage variant, in table order.
inline const std::vector<std::string>& gemmBf16TestConfigs() {
  static const std::vector<std::string> configs = [] {
    std::vector<std::string> r;
    for (const auto& v : gemmBf16Variants())
      if (v.config.strategy == "sm80_multistage") r.push_back(v.config.str());
    return r;
  }();
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
