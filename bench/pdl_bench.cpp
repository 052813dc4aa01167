// kiln_pdl_bench: what programmatic dependent launch (sm90 pdl=true) buys on chains of short
// kernels. For each shape the gemm_bf16 family's pick (or --config) is built with pdl off and on;
// each is checked against cuBLAS, then timed as a chain of --chain launches back to back on one
// stream (the next launch's prologue may overlap the previous one's tail only within a chain),
// the time per launch the chain's median / chain; cuBLAS's chain beside them. L2 is flushed before
// each chain (so the first launch reads from memory, the rest from a warm L2, as consecutive
// layers' small weights would not: the figure is for the launch overhead, not the bandwidth). Off,
// on and cuBLAS take turns over --rounds. Prints a line per shape and a table; writes JSON. It
// prints figures; it decides nothing.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bench/bench_support.h"
#include "examples/examples.h"
#include "kiln/kernel.h"
#include "kiln/runtime/driver.h"
#include "kiln/target.h"
#include "ops/gemm_bf16.h"
#include "schedule/config.h"

using namespace kiln;

namespace {
using bench::Shape;
// Issue 43's mid-size shapes (short kernels, where the tuned picks ran below cuBLAS on the H100)
// and two longer ones.
const std::vector<Shape> kDefaultShapes = {{1024, 480, 352},  {1200, 1424, 1608}, {336, 1024, 4064},
                                           {512, 928, 5336},  {1168, 280, 1352},  {288, 1680, 888},
                                           {2280, 1200, 952}, {5216, 952, 4904},  {4096, 4096, 4096}};
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"sm90 pdl off vs on, chains of back-to-back BF16 GEMM launches, against cuBLAS's chain"};
  std::string shapesArg, jsonPath = "pdl_bench.json", configArg;
  int reps = 30, warmup = 3, rounds = 3, chain = 20;
  app.add_option("--shapes", shapesArg, "Shapes as MxNxK;MxNxK (default: issue 43's mid-size shapes)");
  app.add_option("--config", configArg, "One sm90_ws_persistent config for every shape (default: the family's pick)");
  app.add_option("--chain", chain, "Launches back to back per timed repetition");
  app.add_option("--reps", reps, "Timed chains per kernel and round (median reported)");
  app.add_option("--warmup", warmup, "Untimed chains first");
  app.add_option("--rounds", rounds, "Rounds in which off, on and cuBLAS take turns (median of the round medians)");
  app.add_option("--json", jsonPath, "Where to write the JSON results");
  CLI11_PARSE(app, argc, argv);

  runtime::Driver* drv = bench::driverOrExplain("kiln_pdl_bench");
  if (!drv) return 3;
  auto shapes = shapesArg.empty() ? kDefaultShapes : bench::parseShapes(shapesArg);
  runtime::Context ctx = runtime::Context::primary(*drv);
  std::printf("GPU: %s\nchains of %d launches\n", bench::gpuDescription().c_str(), chain);
  Target target = Target::byName("sm_90a").value();
  auto program = examples::gemmBf16();
  cublasHandle_t handle;
  bench::check(cublasCreate(&handle), "cublasCreate");
  nlohmann::json results = nlohmann::json::array();
  std::vector<std::string> table;
  std::vector<double> gains;
  for (const Shape& s : shapes) {
    ir::DiagnosticEngine diag;
    Config c;
    if (!configArg.empty()) {
      c = Config::parse(configArg);
    } else {
      auto sel = ops::selectGemmBf16(ops::GemmProblem{s.M, s.N, s.K}, target, diag);
      if (!sel) {
        std::fprintf(stderr, "[%dx%dx%d] no pick: %s", s.M, s.N, s.K, diag.str().c_str());
        continue;
      }
      c = sel->variant->configFor(ops::GemmProblem{s.M, s.N, s.K});
    }
    if (c.strategy != "sm90_ws_persistent") {
      std::printf("[%dx%dx%d] %s is not sm90_ws_persistent: skipped\n", s.M, s.N, s.K, c.str().c_str());
      continue;
    }
    Config on = c;
    c.pdl = false;
    on.pdl = true;
    auto kOff = Kernel::build(*program, target, c, diag);
    auto kOn = kOff ? Kernel::build(*program, target, on, diag) : std::nullopt;
    if (!kOff || !kOn) {
      std::fprintf(stderr, "[%dx%dx%d] %s", s.M, s.N, s.K, diag.str().c_str());
      continue;
    }
    auto A = bench::randomBf16(size_t(s.M) * s.K, 1), B = bench::randomBf16(size_t(s.K) * s.N, 2);
    bench::DeviceBuffer dA(A.size() * 2), dB(B.size() * 2), dC(size_t(s.M) * s.N * 2), dR(size_t(s.M) * s.N * 2);
    bench::check(cudaMemcpy(dA.ptr, A.data(), dA.bytes, cudaMemcpyHostToDevice), "copy A");
    bench::check(cudaMemcpy(dB.ptr, B.data(), dB.bytes, cudaMemcpyHostToDevice), "copy B");
    auto cublasOnce = [&](cudaStream_t st) { bench::cublasGemmBf16(handle, s.M, s.N, s.K, dA.ptr, dB.ptr, dR.ptr, false, st); };
    bench::check(cublasSetStream(handle, nullptr), "cublasSetStream");
    cublasOnce(nullptr);
    bench::check(cudaDeviceSynchronize(), "cuBLAS reference");
    std::vector<uint16_t> R(size_t(s.M) * s.N);
    bench::check(cudaMemcpy(R.data(), dR.ptr, dR.bytes, cudaMemcpyDeviceToHost), "copy ref");
    std::map<std::string, int64_t> dims{{"M", s.M}, {"N", s.N}, {"K", s.K}};
    auto once = [&](const Kernel& k) {
      return [&](cudaStream_t st) { k.launch(ctx, st, {uint64_t(dA.ptr), uint64_t(dB.ptr), uint64_t(dC.ptr)}, {}, dims); };
    };
    bool ok[2] = {bench::checkBf16Output(once(*kOff), dC, R).ok, bench::checkBf16Output(once(*kOn), dC, R).ok};
    // A chained run: `chain` launches back to back, so within it each launch follows the last.
    auto chained = [&](std::function<void(cudaStream_t)> f) {
      return [f, chain](cudaStream_t st) {
        for (int i = 0; i < chain; ++i) f(st);
      };
    };
    std::vector<double> rounds3[3];
    for (int r = 0; r < rounds && ok[0] && ok[1]; ++r) {
      auto m = bench::alternatingMediansMs({chained(once(*kOff)), chained(once(*kOn)), chained(cublasOnce)}, warmup, reps,
                                           nullptr);
      for (int i = 0; i < 3; ++i) rounds3[i].push_back(m[size_t(i)] * 1000.0 / chain);
    }
    double us[3] = {0, 0, 0};
    for (int i = 0; i < 3 && !rounds3[i].empty(); ++i) {
      std::sort(rounds3[i].begin(), rounds3[i].end());
      us[i] = rounds3[i][rounds3[i].size() / 2];
    }
    if (us[0] > 0 && us[1] > 0) gains.push_back(us[0] / us[1]);
    std::printf("[%dx%dx%d] %s: off %s %.2f us, on %s %.2f us (%.3fx), cuBLAS %.2f us (off %.2fx, on %.2fx)\n", s.M, s.N,
                s.K, c.str().c_str(), ok[0] ? "ok" : "BAD", us[0], ok[1] ? "ok" : "BAD", us[1],
                us[1] > 0 ? us[0] / us[1] : 0.0, us[2], us[0] > 0 ? us[2] / us[0] : 0.0, us[1] > 0 ? us[2] / us[1] : 0.0);
    results.push_back({{"M", s.M}, {"N", s.N}, {"K", s.K}, {"config", c.str()}, {"correct_off", ok[0]},
                       {"correct_on", ok[1]}, {"us_off", us[0]}, {"us_on", us[1]}, {"us_cublas", us[2]},
                       {"round_us_off", rounds3[0]}, {"round_us_on", rounds3[1]}, {"round_us_cublas", rounds3[2]}});
    char line[256];
    std::snprintf(line, sizeof line, "| %5d | %5d | %5d | %7.2f | %7.2f | %7.2f | %6.3f | %5.2f | %5.2f |", s.M, s.N, s.K,
                  us[2], us[0], us[1], us[1] > 0 ? us[0] / us[1] : 0.0, us[0] > 0 ? us[2] / us[0] : 0.0,
                  us[1] > 0 ? us[2] / us[1] : 0.0);
    table.push_back(line);
  }
  cublasDestroy(handle);
  double geo = 0;
  for (double g : gains) geo += std::log(g);
  geo = gains.empty() ? 0.0 : std::exp(geo / double(gains.size()));
  std::ofstream(jsonPath) << nlohmann::json{{"gpu", bench::gpuDescription()}, {"chain", chain}, {"results", results},
                                            {"geomean_off_over_on", geo}}
                                 .dump(2)
                          << "\n";
  std::printf("\n|     M |     N |     K | cuBLAS us | off us | on us | on speedup | vs cuBLAS off | on |\n"
              "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& l : table) std::printf("%s\n", l.c_str());
  std::printf("\npdl on / off: %.3fx faster in geometric mean over %zu shapes (per launch, in chains of %d)\n", geo,
              gains.size(), chain);
  return 0;
}
