#pragma once
// The schedules the GPU tests and the benchmark exercise for the BF16 GEMM: every registered
// variant of the gemm_bf16 family (src/ops/gemm_bf16.h), as one-line configs.
#include <string>
#include <vector>

#include "ops/gemm_bf16.h"

namespace kiln::ops {

inline const std::vector<std::string>& gemmBf16TestConfigs() {
  static const std::vector<std::string> configs = [] {
    std::vector<std::string> r;
    for (const auto& v : gemmBf16Variants()) r.push_back(v.config.str());
    return r;
  }();
  return configs;
}

}  // namespace kiln::ops
