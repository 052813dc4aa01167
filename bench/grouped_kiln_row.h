#pragma once
// One Kiln kernel's row of kiln_grouped_bench, the same for every layout (grouped_ragged.cpp,
// grouped_ragged_fp8.cpp, grouped_kgrouped.cpp, grouped_kgrouped_fp8.cpp): the kernel built from a
// config line, refused shapes and failed launches turned into the row's status (bench_rows.h), its
// output checked before its time is trusted, one printed line and the row's common JSON fields.
#include <cuda_runtime.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/kernel.h"
#include "kiln/runtime/driver.h"

namespace kiln::bench {

using Launch = std::function<void(cudaStream_t)>;

struct KilnRowSpec {
  const ir::Module* program = nullptr;
  std::vector<uint64_t> ptrs;  // the program's arguments in order
  std::map<std::string, int64_t> dims;
  double flops = 0;  // of one launch, for TFLOP/s
  // Runs the kernel once on a poisoned output and says whether its result is right (and may add
  // its error measures to the row).
  std::function<bool(const Launch& run, nlohmann::json& row)> check;
  // Times a checked kernel (ms): medianMs, or alternated with a baseline.
  std::function<double(const Launch& run)> time;
  // The end of the printed line, given the row (its "ms" set); it may add its ratios against the
  // baselines to the row.
  std::function<std::string(nlohmann::json& row)> describe;
};

struct KilnRow {
  std::optional<Kernel> kernel;  // nullopt: not built (json["status"] says why)
  nlohmann::json json;           // config, correct, status, ms, tflops, and what check added
  double ms = 0;                 // 0: not timed
};

// Builds `line` for spec.program on sm_90a and, if it builds and accepts the shapes, checks and
// times it; prints "  Kiln <line>: <status> <ms> ms <TFLOP/s> TFLOP/s <describe>".
KilnRow kilnRow(const runtime::Context& ctx, const std::string& line, const KilnRowSpec& spec);

}  // namespace kiln::bench
