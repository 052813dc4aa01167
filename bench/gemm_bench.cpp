// kiln_gemm_bench: Kiln's BF16 GEMM schedules side by side with cuBLAS, in one run, on the same
// buffers (shared/BENCH.md): random-normal inputs, output checked against cuBLAS before a time is
// trusted, CUDA events, L2 flushed before every repetition, median of many, each kernel timed in
// alternation with cuBLAS and compared with that cuBLAS median. Prints a progress line per kernel,
// a table, and writes JSON.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <tuple>

#include "bench/bench_rows.h"
#include "bench/bench_support.h"
#include "bench/read_ceiling.h"
#include "examples/examples.h"
#include "kiln/kernel.h"
#include "kiln/resource_report.h"
#include "kiln/runtime/driver.h"
#include "kiln/target.h"
#include "ops/gemm_bf16.h"
#include "ops/gemm_configs.h"
#include "schedule/config.h"

using namespace kiln;

namespace {
using bench::Shape;
// The BF16 shapes of shared/BENCH.md.
const std::vector<Shape> kDefaultShapes = {{8192, 8192, 8192}, {4096, 4096, 4096}, {2048, 2048, 2048},
                                           {8192, 1024, 4096}, {8192, 64, 4096},   {64, 5120, 5120},
                                           {128, 8192, 8192},  {4096, 14336, 4096}, {4096, 4096, 14336},
                                           {16384, 1024, 1024}};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Kiln BF16 GEMM schedules against cuBLAS"};
  std::string shapesArg, jsonPath = "gemm_bench.json";
  int reps = 30, warmup = 5;
  std::string family = "all", variantsArg;
  app.add_option("--shapes", shapesArg, "Shapes as MxNxK;MxNxK (default: shared/BENCH.md's BF16 list)");
  app.add_option("--reps", reps, "Timed repetitions per kernel (median reported)");
  app.add_option("--warmup", warmup, "Untimed runs first");
  app.add_option("--json", jsonPath, "Where to write the JSON results");
  app.add_option("--family", family, "Which schedules: sm80, sm90 (the registered Hopper variants) or all")
      ->check(CLI::IsMember({"sm80", "sm90", "all"}));
  app.add_option("--variants", variantsArg,
                 "Only these registered variants, by name, comma-separated (the family's pick is timed too)");
  std::vector<std::string> extraConfigs;
  app.add_option("--config", extraConfigs,
                 "Also time this config line (repeatable; with --variants, only those and these), e.g. a variant's line with one key changed");
  CLI11_PARSE(app, argc, argv);
  for (const auto& line : extraConfigs) {
    ir::DiagnosticEngine diag;
    if (!Config::parse(line, diag)) {
      std::fprintf(stderr, "kiln_gemm_bench: --config '%s': %s", line.c_str(), diag.str().c_str());
      return 2;
    }
  }
  std::vector<std::string> only;
  {
    std::stringstream ss(variantsArg);
    for (std::string name; std::getline(ss, name, ',');) {
      if (name.empty()) continue;
      if (!ops::findGemmBf16Variant(name)) {
        std::string known;
        for (const auto& v : ops::gemmBf16Variants()) known += (known.empty() ? "" : ", ") + v.name;
        std::fprintf(stderr, "kiln_gemm_bench: no registered variant '%s'; the variants are: %s\n", name.c_str(),
                     known.c_str());
        return 2;
      }
      only.push_back(name);
    }
  }

  runtime::Driver* drv = bench::driverOrExplain("kiln_gemm_bench");
  if (!drv) return 3;
  std::vector<Shape> shapes = kDefaultShapes;
  try {
    if (!shapesArg.empty()) shapes = bench::parseShapes(shapesArg);
  } catch (const std::exception& e) {  // a malformed --shapes is a usage error, not an abort
    std::fprintf(stderr, "kiln_gemm_bench: --shapes '%s': %s\n", shapesArg.c_str(), e.what());
    return 2;
  }
  runtime::Context ctx = runtime::Context::primary(*drv);
  std::printf("GPU: %s\n", bench::gpuDescription().c_str());
  Target target = Target::byName("sm_90a").value();
  auto program = examples::gemmBf16();

  struct Built {
    std::string config;
    Kernel kernel;
  };
  std::vector<Built> kernels;
  std::vector<std::string> configs;
  if (family != "sm90") configs = ops::gemmBf16TestConfigs();
  if (family != "sm80")
    for (const auto& c : ops::gemmBf16Sm90BenchConfigs()) configs.push_back(c);
  if (!only.empty()) {
    configs.clear();
    for (const auto& name : only) configs.push_back(ops::findGemmBf16Variant(name)->config.str());
  }
  for (const auto& line : extraConfigs) configs.push_back(Config::parse(line).str());
  // The family's pick for each shape is timed too, built if not listed: on sm_90a, or with
  // --family sm80 on sm_90 (no wgmma), where it picks among the sm80_multistage variants.
  Target pickTarget = family == "sm80" ? Target::byName("sm_90").value() : target;
  auto pickFor = [&](const Shape& s) -> std::string {
    ops::GemmProblem p;
    p.m = s.M, p.n = s.N, p.k = s.K;
    ir::DiagnosticEngine diag;
    auto sel = ops::selectGemmBf16(p, pickTarget, diag);
    return sel ? sel->variant->config.str() : std::string();
  };
  for (const Shape& s : shapes)
    if (std::string pick = pickFor(s); !pick.empty() && std::find(configs.begin(), configs.end(), pick) == configs.end())
      configs.push_back(pick);
  int done = 0;
  for (const auto& cfg : configs) {
    std::fprintf(stderr, "\rcompiling %d/%zu", ++done, configs.size());
    ir::DiagnosticEngine diag;
    auto k = Kernel::build(*program, target, Config::parse(cfg), diag);
    if (!k) {
      std::fprintf(stderr, "skipping %s: %s", cfg.c_str(), diag.str().c_str());
      continue;
    }
    // Registered variants are shown by name (the sm90 config lines are long).
    std::string label = cfg;
    for (const auto& v : ops::gemmBf16Variants())
      if (v.config == Config::parse(cfg)) label = v.name;
    std::printf("built %-50s %s\n", label.c_str(), k->resources().str().c_str());
    kernels.push_back({label, std::move(*k)});
  }

  cublasHandle_t handle;
  bench::check(cublasCreate(&handle), "cublasCreate");
  bench::ReadCeiling readCeiling(ctx);
  nlohmann::json results = nlohmann::json::array();
  std::vector<std::string> table;
  // Geometric means of Kiln / cuBLAS: the two goals (M, N >= 1024; small M or N).
  double logLarge = 0, logSmall = 0, logPickLarge = 0, logPickSmall = 0;
  int nLarge = 0, nSmall = 0, nPickLarge = 0, nPickSmall = 0;
  // Host seconds since t (the benchmark's own wall time, printed per shape: where device minutes go).
  auto since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  for (const Shape& s : shapes) {
    auto shapeStart = std::chrono::steady_clock::now();
    double checkS = 0, timeS = 0;
    auto A = bench::randomBf16(size_t(s.M) * s.K, 1), B = bench::randomBf16(size_t(s.K) * s.N, 2);
    bench::DeviceBuffer dA(A.size() * 2), dB(B.size() * 2), dC(size_t(s.M) * s.N * 2), dR(size_t(s.M) * s.N * 2);
    bench::check(cudaMemcpy(dA.ptr, A.data(), dA.bytes, cudaMemcpyHostToDevice), "copy A");
    bench::check(cudaMemcpy(dB.ptr, B.data(), dB.bytes, cudaMemcpyHostToDevice), "copy B");
    double flops = 2.0 * s.M * s.N * s.K;
    // Bytes every GEMM must move at least once (A, B read, C written): small-M shapes are bound by it
    // (shared/BENCH.md: report achieved bandwidth against the ~4.0 TB/s copy ceiling).
    double bytes = 2.0 * (double(s.M) * s.K + double(s.K) * s.N + double(s.M) * s.N);
    auto runCublas = [&](cudaStream_t st) { bench::cublasGemmBf16(handle, s.M, s.N, s.K, dA.ptr, dB.ptr, dR.ptr, false, st); };
    double cublasMs = bench::medianMs(runCublas, warmup, reps, nullptr);
    // The copy ceiling for this shape, measured like the kernels: a device-to-device copy that moves
    // the same bytes (reads half, writes half), L2 flushed first. What a memory-bound GEMM aims at.
    double copyMs = 0;
    {
      size_t half = size_t(bytes / 2) & ~size_t(255);
      bench::DeviceBuffer src(half), dst(half);
      bench::check(cudaMemset(src.ptr, 1, half), "copy source");
      copyMs = bench::medianMs(
          [&](cudaStream_t st) {
            bench::check(cudaMemcpyAsync(dst.ptr, src.ptr, half, cudaMemcpyDeviceToDevice, st), "ceiling copy");
          },
          warmup, reps, nullptr);
    }
    // The read ceiling: a plain streaming kernel reading A's and B's bytes once (bench/read_ceiling.h).
    // A memory-bound GEMM writes little, so this, not the copy, is the floor its time can reach.
    double readBytes = 2.0 * (double(s.M) * s.K + double(s.K) * s.N);
    auto read = readCeiling.measure(size_t(readBytes), warmup, reps);
    double setupS = since(shapeStart);
    std::vector<uint16_t> R(size_t(s.M) * s.N);
    bench::check(cudaMemcpy(R.data(), dR.ptr, dR.bytes, cudaMemcpyDeviceToHost), "copy ref");
    std::printf("[%dx%dx%d] cuBLAS %.4f ms, %.0f TFLOP/s, %.0f GB/s; copy of the same bytes %.4f ms (%.0f GB/s); "
                "read of A and B %.4f ms (%.0f GB/s, %s; loads %.4f ms, TMA %.4f ms)\n",
                s.M, s.N, s.K, cublasMs, flops / cublasMs / 1e9, bytes / cublasMs / 1e6, copyMs, bytes / copyMs / 1e6,
                read.ms, readBytes / read.ms / 1e6, read.how.c_str(), read.ldMs, read.tmaMs);
    nlohmann::json shapeJson = {{"M", s.M}, {"N", s.N}, {"K", s.K}, {"cublas_ms", cublasMs},
                                {"cublas_tflops", flops / cublasMs / 1e9}, {"cublas_gbps", bytes / cublasMs / 1e6},
                                {"copy_ms", copyMs}, {"copy_gbps", bytes / copyMs / 1e6},
                                {"read_ms", read.ms}, {"read_gbps", readBytes / read.ms / 1e6},
                                {"read_how", read.how}, {"read_ld_ms", read.ldMs}, {"read_tma_ms", read.tmaMs},
                                {"read_plain_ms", read.plainMs},
                                {"kiln", nlohmann::json::array()}};
    // The kernel with the best ratio to its paired cuBLAS time, and that time.
    double bestMs = 1e30, bestVs = 0, bestCublasMs = 0;
    std::string best, pickLabel;
    const std::string pick = pickFor(s);
    for (auto& [cfg, k] : kernels) {
      std::map<std::string, int64_t> dims{{"M", s.M}, {"N", s.N}, {"K", s.K}};
      const std::vector<uint64_t> ptrs = {uint64_t(dA.ptr), uint64_t(dB.ptr), uint64_t(dC.ptr)};
      auto run = [&](cudaStream_t st) { k.launch(ctx, st, ptrs, {}, dims); };
      bench::Comparison cmp;
      bool ok = false;
      double ms = 0, pairedCublasMs = 0;
      // A shape this kernel does not support (a dim it needs a multiple of, ...) is a row, not the
      // end of the run; so is a launch that fails while measuring.
      std::optional<std::string> status = bench::unsupportedShape(k, ptrs, {}, dims);
      if (!status)
        status = bench::guardedRow([&] {
          auto checkStart = std::chrono::steady_clock::now();
          bench::CheckedRun checked = bench::checkBf16Output(run, dC, R);
          cmp = checked.cmp;
          ok = checked.ok;
          checkS += since(checkStart);
          // Each kernel is timed in alternation with cuBLAS (shared/BENCH.md), and its ratio is to that
          // cuBLAS median: a clock drifting over the shape's minute moves both alike.
          auto timeStart = std::chrono::steady_clock::now();
          if (ok) std::tie(ms, pairedCublasMs) = bench::alternatingMedianMs(run, runCublas, warmup, reps, nullptr);
          timeS += since(timeStart);
        });
      if (status) {
        std::printf("  %-50s %s\n", cfg.c_str(), status->c_str());
        shapeJson["kiln"].push_back({{"config", cfg}, {"correct", false}, {"status", *status}});
        continue;
      }
      double vsCublas = ok ? pairedCublasMs / ms : 0.0;
      std::printf("  %-50s %s %.4f ms %.0f TFLOP/s %.0f GB/s (%.2fx cuBLAS at %.4f ms, %.2fx copy time, %.2fx read "
                  "time) err %.1e\n",
                  cfg.c_str(), ok ? "ok " : "BAD", ms, ok ? flops / ms / 1e9 : 0.0, ok ? bytes / ms / 1e6 : 0.0,
                  vsCublas, pairedCublasMs, ok ? ms / copyMs : 0.0, ok ? ms / read.ms : 0.0, cmp.relFrobenius);
      shapeJson["kiln"].push_back({{"config", cfg}, {"correct", ok}, {"rel_err", cmp.relFrobenius}, {"ms", ms},
                                   {"cublas_ms", pairedCublasMs}, {"vs_cublas", vsCublas},
                                   {"tflops", ok ? flops / ms / 1e9 : 0}, {"gbps", ok ? bytes / ms / 1e6 : 0},
                                   {"registers", k.resources().registers},
                                   {"spill_bytes", k.resources().spillStoreBytes + k.resources().spillLoadBytes}});
      if (ok && vsCublas > bestVs) bestVs = vsCublas, bestMs = ms, bestCublasMs = pairedCublasMs, best = cfg;
      if (k.config() == pick) {
        pickLabel = cfg;
        shapeJson["family_pick"] = {{"config", cfg}, {"ms", ms}, {"vs_cublas", vsCublas}};
        std::printf("  family pick: %s, %.2fx cuBLAS\n", cfg.c_str(), vsCublas);
        if (ok) {
          bool large = s.M >= 1024 && s.N >= 1024;
          (large ? logPickLarge : logPickSmall) += std::log(vsCublas);
          ++(large ? nPickLarge : nPickSmall);
        }
      }
    }
    if (bestMs < 1e30) {
      bool large = s.M >= 1024 && s.N >= 1024;
      (large ? logLarge : logSmall) += std::log(bestVs);
      ++(large ? nLarge : nSmall);
    }
    // The report so far goes out before the diagnostic line, so a log of both streams keeps lines whole.
    std::fflush(stdout);
    std::fprintf(stderr, "[%dx%dx%d] host wall %.1f s: inputs, cuBLAS and copy %.1f s, checks %.1f s, timing %.1f s\n",
                 s.M, s.N, s.K, since(shapeStart), setupS, checkS, timeS);
    shapeJson["best_config"] = best;
    shapeJson["best_ms"] = bestMs;
    results.push_back(shapeJson);
    char line[512];
    std::snprintf(line, sizeof line, "| %5d | %5d | %5d | %7.1f | %7.1f | %5.2f | %s |", s.M, s.N, s.K,
                  flops / bestCublasMs / 1e9, flops / bestMs / 1e9, bestVs, best.c_str());
    table.push_back(line);
    // Written after every shape, so a run cut short still leaves what it measured.
    std::ofstream(jsonPath) << nlohmann::json{{"gpu", bench::gpuDescription()}, {"results", results}}.dump(2) << "\n";
  }
  cublasDestroy(handle);
  std::printf("\n|     M |     N |     K | cuBLAS TFLOP/s (beside the best) | Kiln best TFLOP/s | Kiln / cuBLAS | best |\n"
              "|---:|---:|---:|---:|---:|---:|---|\n");
  for (const auto& l : table) std::printf("%s\n", l.c_str());
  if (nLarge) std::printf("\ngeomean Kiln / cuBLAS, M and N >= 1024: %.3f (%d shapes)\n", std::exp(logLarge / nLarge), nLarge);
  if (nSmall) std::printf("geomean Kiln / cuBLAS, small M or N:     %.3f (%d shapes)\n", std::exp(logSmall / nSmall), nSmall);
  if (nPickLarge)
    std::printf("family pick, geomean / cuBLAS, M and N >= 1024: %.3f (%d shapes)\n",
                std::exp(logPickLarge / nPickLarge), nPickLarge);
  if (nPickSmall)
    std::printf("family pick, geomean / cuBLAS, small M or N:     %.3f (%d shapes)\n",
                std::exp(logPickSmall / nPickSmall), nPickSmall);
  return 0;
}
