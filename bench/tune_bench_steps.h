#pragma once
// The steps of kiln_tune_bench (bench/tune_bench.cpp says what it measures): its options, the
// searches it runs (kiln tune's own search, with the GPU measurer lent between them where inputs
// may be shared), the checked, alternating comparison with the baselines, and the bucketing
// measurement.
#include <cublasLt.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench/gemm_case.h"
#include "kiln/kernel.h"
#include "kiln/tune.h"
#include "tune/measure.h"

namespace kiln::bench {

struct TuneBenchArgs {
  std::string program = "bf16", shapes, tuneDir = "tune-bench-cache", json = "tune_bench.json", table;
  int random = 30, reps = 30, tuneReps = 15, exhaustiveReps = 7, warmShapes = 3, coldShapes = 2;
  int bucketShapes = 0, bucketNeighbours = 2, maxCandidates = 0, exhaustiveShapes = -1;
  uint64_t seed = 2026;
  double maxSeconds = 0, budget = 0;
  bool exhaustive = true, dryRun = false;
};

std::map<std::string, int64_t> dimsOf(const Shape& s);
std::string str(const Shape& s);
// Where a search's seconds went, and how many candidates it timed.
nlohmann::json phases(const TuneResult& r);
int timedCount(const TuneResult& r);

// The searches of one run: one program, one GPU.
struct Searches {
  const ir::Module& program;
  const runtime::Context& ctx;
  const Target& target;
  const TuneBenchArgs& args;
  // kiln tune's search at `s` with `o` (plus the run's tuning cache, repetitions, budget and limit).
  // `keep`: the measurer it makes stays alive there afterwards; `borrow`: it measures with that one
  // instead (its inputs and reference are shared, so its seconds do not count them).
  std::optional<TuneResult> run(const Shape& s, TuneOptions o, const char* what,
                                std::shared_ptr<tuning::Measurer>* keep = nullptr,
                                tuning::Measurer* borrow = nullptr) const;
};

// The baselines and Kiln's kernels on one case, each kernel checked (row[label]["rel_err"], and
// ["error"] when wrong), then all timed in rotated alternation: medians in ms, baselines first;
// nullopt when a kernel is wrong or does not run.
std::optional<std::vector<double>> compare(GemmCase& g, const std::vector<const Kernel*>& kernels,
                                           const std::vector<std::string>& labels, const Shape& s,
                                           const runtime::Context& ctx, int reps, nlohmann::json& row);

std::optional<Kernel> buildOrSay(const ir::Module& program, const Target& t, const std::string& config);

// Step 5: `winner` (tuned at s) reused at other shapes of its bucket, against their own searches;
// each own / reused time ratio is appended to `costs` (1: reusing costs nothing).
nlohmann::json bucketing(const Searches& search, const Shape& s, const std::string& winner, bool fp8,
                         cublasHandle_t blas, cublasLtHandle_t lt, uint64_t seed, std::vector<double>& costs);

}  // namespace kiln::bench
