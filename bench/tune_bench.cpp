// kiln_tune_bench: what `kiln tune` buys on the BF16 GEMM, and what it costs, in one run on the GPU
// (shared/BENCH.md). For each shape (the --shapes list, then --random shapes drawn from --seed,
// M, N, K log-uniform in [256, 16384], multiples of 8):
//   1. kiln::tune searches it (the default finalists) and records the winner in a fresh tuning
//      cache: the search's seconds, with the compile cache as the run found it (empty for the first
//      shape when KILN_CACHE_DIR names an empty folder: the cold figure);
//   2. for the first --warm-shapes shapes, the search again with the compile cache warm and the
//      tuning cache bypassed (the warm figure), and a cached lookup;
//   3. an exhaustive search (every candidate that assembles timed): the reference;
//   4. cuBLAS, the family's heuristic pick (kiln::select), the tuned winner and the exhaustive
//      winner on the same buffers, each checked against cuBLAS, then timed in rotated alternation
//      (L2 flushed before every launch, median of --reps).
// Prints a line per shape and a table; writes JSON after every shape.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "bench/bench_support.h"
#include "examples/examples.h"
#include "kiln/kernel.h"
#include "kiln/runtime/driver.h"
#include "kiln/select.h"
#include "kiln/tune.h"

using namespace kiln;

namespace {

// M, N, K drawn log-uniformly in [256, 16384] and rounded to a multiple of 8 (the shapes).
std::vector<bench::Shape> randomShapes(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> logSize(std::log(256.0), std::log(16384.0));
  auto draw = [&] { return std::max(256, int(std::lround(std::exp(logSize(rng)) / 8.0)) * 8); };
  std::vector<bench::Shape> out;
  for (int i = 0; i < n; ++i) {
    int m = draw(), nn = draw(), k = draw();
    out.push_back({m, nn, k});
  }
  return out;
}

double geomean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += std::log(x);
  return v.empty() ? 0 : std::exp(s / double(v.size()));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"What kiln tune buys on the BF16 GEMM against cuBLAS, and what it costs"};
  std::string shapesArg, jsonPath = "tune_bench.json", tuneDir = "tune-bench-cache";
  int random = 30, reps = 30, warmShapes = 4, tuneReps = 15;
  uint64_t seed = 2026;
  app.add_option("--shapes", shapesArg, "Shapes as MxNxK;MxNxK, measured first");
  app.add_option("--random", random, "How many random shapes follow them");
  app.add_option("--seed", seed, "The random shapes' seed");
  app.add_option("--reps", reps, "Timed repetitions in the final comparison (median reported)");
  app.add_option("--tune-reps", tuneReps, "Timed repetitions per finalist in each search");
  app.add_option("--warm-shapes", warmShapes, "For this many shapes, search again with the compile cache warm");
  app.add_option("--tune-dir", tuneDir, "The tuning cache this run writes (emptied first)");
  app.add_option("--json", jsonPath, "Where to write the JSON results");
  CLI11_PARSE(app, argc, argv);

  std::vector<bench::Shape> shapes;
  try {
    if (!shapesArg.empty()) shapes = bench::parseShapes(shapesArg);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln_tune_bench: --shapes '%s': %s\n", shapesArg.c_str(), e.what());
    return 2;
  }
  for (const auto& s : randomShapes(random, seed)) shapes.push_back(s);
  runtime::Driver* drv = bench::driverOrExplain("kiln_tune_bench");
  if (!drv) return 3;
  runtime::Context ctx = runtime::Context::primary(*drv);
  std::printf("GPU: %s\n", bench::gpuDescription().c_str());
  std::error_code ec;
  std::filesystem::remove_all(tuneDir, ec);
  const Target target = targetOf(ctx).value();
  auto program = examples::gemmBf16();
  cublasHandle_t handle;
  bench::check(cublasCreate(&handle), "cublasCreate");

  nlohmann::json results = nlohmann::json::array();
  std::vector<double> tunedVsCublas, pickVsCublas, tunedVsExhaustive;
  std::vector<std::string> table;
  for (size_t si = 0; si < shapes.size(); ++si) {
    const bench::Shape s = shapes[si];
    const std::map<std::string, int64_t> dims{{"M", s.M}, {"N", s.N}, {"K", s.K}};
    nlohmann::json row = {{"M", s.M}, {"N", s.N}, {"K", s.K}};
    auto search = [&](TuneOptions o, const char* what) -> std::optional<TuneResult> {
      o.cacheDir = tuneDir;
      o.reps = tuneReps;
      ir::DiagnosticEngine diag;
      auto r = tune(*program, ctx, dims, o, diag);
      if (!r) std::printf("[%dx%dx%d] %s search failed: %s", s.M, s.N, s.K, what, diag.str().c_str());
      return r;
    };
    auto tuned = search({}, "default");
    if (!tuned) continue;
    row["tune_s"] = tuned->seconds;
    row["tuned"] = {{"config", tuned->config}, {"us_in_search", tuned->microseconds}, {"why", tuned->why}};
    int timedCount = 0;
    for (const auto& c : tuned->candidates) timedCount += c.microseconds >= 0;
    row["candidates"] = tuned->candidates.size();
    row["timed"] = timedCount;
    if (int(si) < warmShapes) {
      TuneOptions again;
      again.useCache = false;
      again.record = false;
      if (auto w = search(again, "warm")) row["tune_warm_s"] = w->seconds;
      if (auto hit = search({}, "cached")) row["cached_lookup_s"] = hit->seconds, row["cached_hit"] = hit->fromCache;
    }
    TuneOptions all;
    all.exhaustive = true;
    all.record = false;
    auto exhaustive = search(all, "exhaustive");
    if (!exhaustive) continue;
    int exhaustiveTimed = 0;
    for (const auto& c : exhaustive->candidates) exhaustiveTimed += c.microseconds >= 0;
    row["exhaustive"] = {{"config", exhaustive->config}, {"seconds", exhaustive->seconds}, {"timed", exhaustiveTimed}};
    const Selection pick = select(*program, target, dims);

    // The final comparison, on one set of buffers checked against cuBLAS.
    auto A = bench::randomBf16(size_t(s.M) * s.K, 1), B = bench::randomBf16(size_t(s.K) * s.N, 2);
    bench::DeviceBuffer dA(A.size() * 2), dB(B.size() * 2), dC(size_t(s.M) * s.N * 2), dR(size_t(s.M) * s.N * 2);
    bench::check(cudaMemcpy(dA.ptr, A.data(), dA.bytes, cudaMemcpyHostToDevice), "copy A");
    bench::check(cudaMemcpy(dB.ptr, B.data(), dB.bytes, cudaMemcpyHostToDevice), "copy B");
    auto runCublas = [&](cudaStream_t st) { bench::cublasGemmBf16(handle, s.M, s.N, s.K, dA.ptr, dB.ptr, dR.ptr, false, st); };
    runCublas(nullptr);
    std::vector<uint16_t> R(size_t(s.M) * s.N);
    bench::check(cudaMemcpy(R.data(), dR.ptr, dR.bytes, cudaMemcpyDeviceToHost), "copy ref");
    const std::vector<std::string> labels = {"pick", "tuned", "exhaustive"};
    const std::vector<std::string> configs = {pick.config, tuned->config, exhaustive->config};
    std::vector<Kernel> kernels;
    std::vector<std::function<void(cudaStream_t)>> launches{runCublas};
    const std::vector<uint64_t> ptrs = {uint64_t(dA.ptr), uint64_t(dB.ptr), uint64_t(dC.ptr)};
    bool ok = true;
    for (size_t i = 0; i < configs.size() && ok; ++i) {
      ir::DiagnosticEngine diag;
      auto k = Kernel::build(*program, target, configs[i], diag);
      if (!k) {
        std::printf("[%dx%dx%d] %s does not build: %s", s.M, s.N, s.K, labels[i].c_str(), diag.str().c_str());
        ok = false;
        break;
      }
      kernels.push_back(std::move(*k));
    }
    if (!ok) continue;
    for (size_t i = 0; i < kernels.size(); ++i) {
      const Kernel* k = &kernels[i];
      auto run = [&, k](cudaStream_t st) { k->launch(ctx, st, ptrs, {}, dims); };
      bench::CheckedRun checked = bench::checkBf16Output(run, dC, R);
      row[labels[i]]["rel_err"] = checked.cmp.relFrobenius;
      if (!checked.ok) {
        std::printf("[%dx%dx%d] %s gave a wrong result (rel. error %.2e)\n", s.M, s.N, s.K, labels[i].c_str(),
                    checked.cmp.relFrobenius);
        ok = false;
      }
      launches.push_back(run);
    }
    if (!ok) continue;
    std::vector<double> ms = bench::alternatingMediansMs(launches, 3, reps, nullptr);
    row["cublas_ms"] = ms[0];
    for (size_t i = 0; i < labels.size(); ++i) {
      row[labels[i]]["config"] = configs[i];
      row[labels[i]]["ms"] = ms[i + 1];
      row[labels[i]]["vs_cublas"] = ms[0] / ms[i + 1];
    }
    row["tuned_vs_exhaustive"] = ms[3] / ms[2];
    pickVsCublas.push_back(ms[0] / ms[1]);
    tunedVsCublas.push_back(ms[0] / ms[2]);
    tunedVsExhaustive.push_back(ms[3] / ms[2]);
    std::printf("[%dx%dx%d] cuBLAS %.4f ms; pick %.2fx, tuned %.2fx, exhaustive %.2fx cuBLAS; tuned / exhaustive "
                "%.3f; search %.1f s (%d of %zu timed)%s\n",
                s.M, s.N, s.K, ms[0], ms[0] / ms[1], ms[0] / ms[2], ms[0] / ms[3], ms[3] / ms[2], tuned->seconds,
                timedCount, tuned->candidates.size(),
                row.contains("tune_warm_s") ? (", warm " + std::to_string(row["tune_warm_s"].get<double>()) + " s").c_str() : "");
    std::fflush(stdout);
    char line[600];
    std::snprintf(line, sizeof line, "| %d×%d×%d | %.1f | %.2f | %.2f | %.3f | %.1f | `%s` |", s.M, s.N, s.K,
                  ms[0] * 1e3, ms[0] / ms[1], ms[0] / ms[2], ms[3] / ms[2], tuned->seconds, tuned->config.c_str());
    table.push_back(line);
    results.push_back(row);
    nlohmann::json summary = {{"shapes", results.size()},
                              {"geomean_pick_vs_cublas", geomean(pickVsCublas)},
                              {"geomean_tuned_vs_cublas", geomean(tunedVsCublas)},
                              {"geomean_tuned_vs_exhaustive", geomean(tunedVsExhaustive)}};
    std::ofstream(jsonPath) << nlohmann::json{{"gpu", bench::gpuDescription()}, {"commit", KILN_GIT_COMMIT},
                                              {"seed", seed}, {"summary", summary}, {"results", results}}
                                   .dump(2)
                            << "\n";
  }
  cublasDestroy(handle);
  std::printf("\n| M×N×K | cuBLAS us | pick / cuBLAS | tuned / cuBLAS | tuned / exhaustive | search s | tuned |\n"
              "|---|---:|---:|---:|---:|---:|---|\n");
  for (const auto& l : table) std::printf("%s\n", l.c_str());
  std::printf("\ngeomean over %zu shapes: pick %.3fx cuBLAS, tuned %.3fx cuBLAS, tuned %.3f of exhaustive\n",
              tunedVsCublas.size(), geomean(pickVsCublas), geomean(tunedVsCublas), geomean(tunedVsExhaustive));
  return 0;
}
