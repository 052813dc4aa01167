// kiln_fp8_bench: Kiln's FP8 scaled GEMM (examples::fp8RowwiseGemm: e4m3 A and B, both K-major,
// per-row scale_a and per-column scale_b, bf16 out) side by side with cuBLASLt's FP8 GEMM, in one run,
// on the same buffers (shared/BENCH.md). The baseline is cuBLASLt with tensorwise scales (the fastest
// FP8 GEMM it has), and beside it, where this cuBLASLt runs it, cuBLASLt with the same outer-vector
// (rowwise) scales as Kiln. Every timed kernel's output is checked first, and the baseline's own
// orientation against an fp64 dot product before anything is timed. Prints a line per kernel, a
// table, and writes JSON after every shape.
#include <cublasLt.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>

#include "bench/bench_support.h"
#include "bench/lt_fp8.h"
#include "bench/read_ceiling.h"
#include "examples/examples.h"
#include "kiln/float_formats.h"
#include "kiln/kernel.h"
#include "kiln/resource_report.h"
#include "kiln/runtime/driver.h"
#include "kiln/target.h"
#include "ops/gemm_fp8.h"
#include "schedule/config.h"

using namespace kiln;

namespace {
using bench::Shape;
// The FP8 shapes of shared/BENCH.md.
const std::vector<Shape> kDefaultShapes = {{64, 5120, 5120},   {128, 7168, 2048},   {4096, 7168, 2048},
                                           {8192, 8192, 8192}, {4096, 14336, 4096}, {4096, 4096, 14336}};
// Kiln configs timed when no --config is given: the registered gemm_fp8 variants that sum as
// the baseline does (--fast-accum: the "_fastacc" ones; else those that promote every K step).
std::vector<std::string> defaultConfigs(bool fastAccum) {
  std::vector<std::string> r;
  for (const auto& v : ops::gemmFp8Variants())
    if ((v.config.fp8Accum == Fp8Accum::Fast) == fastAccum) r.push_back(v.config.str());
  return r;
}
// A registered variant is shown by name (the config lines are long).
std::string labelOf(const std::string& cfg) {
  for (const auto& v : ops::gemmFp8Variants())
    if (v.config.str() == cfg) return v.name;
  return cfg;
}

struct Checked {
  bool ok = false;
  double relErr = 0;
  std::string error;  // why not ok
};
// Runs `launch` once into a poisoned `out` and compares with `ref`; a launch that throws (a dim Kiln
// refuses, a cuBLASLt status) fails the check with its message.
Checked checkOnce(const std::function<void(cudaStream_t)>& launch, bench::DeviceBuffer& out,
                  const std::vector<uint16_t>& ref) {
  Checked c;
  std::vector<uint16_t> got(ref.size());
  try {
    bench::poisonBf16(out, nullptr);
    launch(nullptr);
    bench::check(cudaDeviceSynchronize(), "check run");
    bench::check(cudaMemcpy(got.data(), out.ptr, out.bytes, cudaMemcpyDeviceToHost), "copy output");
  } catch (const std::exception& e) {
    c.error = e.what();
    return c;
  }
  auto cmp = bench::compareBf16(got, ref);
  c.relErr = cmp.relFrobenius;
  c.ok = cmp.nonFinite == 0 && cmp.relFrobenius < 1e-2;
  if (!c.ok) c.error = std::to_string(cmp.nonFinite) + " non-finite, rel err " + std::to_string(cmp.relFrobenius);
  return c;
}

int benchMain(int argc, char** argv) {
  CLI::App app{"Kiln's FP8 scaled GEMM against cuBLASLt"};
  std::string shapesArg, jsonPath = "fp8_bench.json";
  int reps = 30, warmup = 5;
  bool fastAccum = false;
  std::vector<std::string> configs;
  app.add_option("--shapes", shapesArg, "Shapes as MxNxK;MxNxK (default: shared/BENCH.md's FP8 list)");
  app.add_option("--reps", reps, "Timed repetitions per kernel (median reported)");
  app.add_option("--warmup", warmup, "Untimed runs first");
  app.add_option("--json", jsonPath, "Where to write the JSON results");
  app.add_option("--config", configs, "Time this Kiln config line (repeatable; default: the gemm_fp8 variants of the accumulation asked for)");
  app.add_flag("--fast-accum", fastAccum,
               "cuBLASLt's FAST_ACCUM (FP8 sums kept in the tensor cores' narrower accumulator; torch._scaled_mm's "
               "default, and BENCH.md's figures, are without), against Kiln's _fastacc variants");
  CLI11_PARSE(app, argc, argv);
  if (configs.empty()) configs = defaultConfigs(fastAccum);
  for (auto& line : configs) {
    ir::DiagnosticEngine diag;
    auto c = Config::parse(line, diag);
    if (!c) {
      std::fprintf(stderr, "kiln_fp8_bench: --config '%s': %s", line.c_str(), diag.str().c_str());
      return 2;
    }
    line = c->str();
  }
  runtime::Driver* drv = bench::driverOrExplain("kiln_fp8_bench");
  if (!drv) return 3;
  auto shapes = shapesArg.empty() ? kDefaultShapes : bench::parseShapes(shapesArg);
  runtime::Context ctx = runtime::Context::primary(*drv);
  std::printf("GPU: %s\ncuBLASLt %zu%s\n", bench::gpuDescription().c_str(), cublasLtGetVersion(),
              fastAccum ? ", fast accumulation" : "");
  Target target = Target::byName("sm_90a").value();
  auto program = examples::fp8RowwiseGemm();
  std::vector<std::pair<std::string, Kernel>> kernels;
  for (const auto& cfg : configs) {
    ir::DiagnosticEngine diag;
    auto k = Kernel::build(*program, target, Config::parse(cfg), diag);
    if (!k) {
      std::fprintf(stderr, "skipping %s: %s", cfg.c_str(), diag.str().c_str());
      continue;
    }
    std::printf("built %-50s %s\n", labelOf(cfg).c_str(), k->resources().str().c_str());
    kernels.emplace_back(cfg, std::move(*k));
  }

  cublasLtHandle_t lt;
  bench::check(cublasLtCreate(&lt), "cublasLtCreate");
  bench::DeviceBuffer workspace(bench::kLtWorkspaceBytes), unitScale(sizeof(float));
  const float one = 1.0f;
  bench::check(cudaMemcpy(unitScale.ptr, &one, sizeof one, cudaMemcpyHostToDevice), "unit scale");
  bench::ReadCeiling readCeiling(ctx);
  nlohmann::json results = nlohmann::json::array();
  std::vector<std::string> table;
  double logAll = 0, logSmall = 0;  // the best Kiln config / cuBLASLt, over all shapes and M <= 128
  int nAll = 0, nSmall = 0;
  double logPick = 0;  // the family's pick / cuBLASLt
  int nPick = 0;
  for (const Shape& s : shapes) {
    const size_t MN = size_t(s.M) * s.N;
    auto A = bench::randomE4m3(size_t(s.M) * s.K, 1), B = bench::randomE4m3(size_t(s.N) * s.K, 2);
    auto sa = bench::randomScales(size_t(s.M), 3), sb = bench::randomScales(size_t(s.N), 4);
    bench::DeviceBuffer dA(A.size()), dB(B.size()), dSa(sa.size() * 4), dSb(sb.size() * 4), dP(MN * 2), dC(MN * 2);
    bench::check(cudaMemcpy(dA.ptr, A.data(), dA.bytes, cudaMemcpyHostToDevice), "copy A");
    bench::check(cudaMemcpy(dB.ptr, B.data(), dB.bytes, cudaMemcpyHostToDevice), "copy B");
    bench::check(cudaMemcpy(dSa.ptr, sa.data(), dSa.bytes, cudaMemcpyHostToDevice), "copy scale_a");
    bench::check(cudaMemcpy(dSb.ptr, sb.data(), dSb.bytes, cudaMemcpyHostToDevice), "copy scale_b");
    const double flops = 2.0 * s.M * s.N * s.K;
    const double readBytes = double(s.M) * s.K + double(s.K) * s.N, bytes = readBytes + 2.0 * double(MN);

    bench::LtFp8Gemm tensorwise(lt, s, unitScale.ptr, unitScale.ptr, false, fastAccum, workspace);
    if (!tensorwise.ok())
      throw std::runtime_error("cuBLASLt FP8 GEMM (tensorwise) unavailable: " + tensorwise.why());
    auto runLt = [&](cudaStream_t st) { tensorwise.run(dA.ptr, dB.ptr, dP.ptr, st); };
    // P = A·B, unit scales: the reference every kernel is checked against, after the baseline's own
    // layout is checked against fp64, before anything is timed.
    runLt(nullptr);
    bench::check(cudaDeviceSynchronize(), "cuBLASLt");
    std::vector<uint16_t> P(MN), ref(MN);
    bench::check(cudaMemcpy(P.data(), dP.ptr, dP.bytes, cudaMemcpyDeviceToHost), "copy P");
    double sampleErr = bench::ltSampleError(s, A, B, P);
    size_t nonFinite = std::count_if(P.begin(), P.end(), [](uint16_t x) { return !std::isfinite(bf16BitsToFloat(x)); });
    if (!(sampleErr <= 2e-2) || nonFinite) {
      std::fprintf(stderr, "kiln_fp8_bench: [%dx%dx%d] cuBLASLt's A·B is wrong: sampled error %.3g against fp64 "
                   "(limit 2e-2), %zu non-finite; the call's layout is broken, no figures\n", s.M, s.N, s.K,
                   sampleErr, nonFinite);
      return 4;
    }
    // Kiln's epilogue order: (acc · scale_a) · scale_b in f32, rounded once to bf16.
    for (size_t m = 0; m < size_t(s.M); ++m)
      for (size_t n = 0; n < size_t(s.N); ++n)
        ref[m * s.N + n] = floatToBf16Bits(bf16BitsToFloat(P[m * s.N + n]) * sa[m] * sb[n]);

    bench::LtFp8Gemm rowwise(lt, s, dSa.ptr, dSb.ptr, true, fastAccum, workspace);
    auto runRow = [&](cudaStream_t st) { rowwise.run(dA.ptr, dB.ptr, dC.ptr, st); };
    Checked rowCheck;
    if (rowwise.ok()) rowCheck = checkOnce(runRow, dC, ref);
    const std::string rowError = rowCheck.ok ? "" : rowwise.ok() ? rowCheck.error : rowwise.why();
    double ltMs = bench::medianMs(runLt, warmup, reps, nullptr);
    double rowMs = rowCheck.ok ? bench::medianMs(runRow, warmup, reps, nullptr) : 0;
    auto read = readCeiling.measure(size_t(readBytes), warmup, reps);
    std::printf("[%dx%dx%d] cuBLASLt %.4f ms, %.0f TFLOP/s, %.0f GB/s (A·B sampled against fp64: err %.1e); "
                "read of A and B %.4f ms (%.0f GB/s, %s)\n",
                s.M, s.N, s.K, ltMs, flops / ltMs / 1e9, bytes / ltMs / 1e6, sampleErr, read.ms,
                readBytes / read.ms / 1e6, read.how.c_str());
    if (rowCheck.ok)
      std::printf("  cuBLASLt rowwise scales %.4f ms, %.0f TFLOP/s, %.0f GB/s, err %.1e\n", rowMs, flops / rowMs / 1e9,
                  bytes / rowMs / 1e6, rowCheck.relErr);
    else
      std::printf("  cuBLASLt rowwise scales: %s: %s\n", rowwise.ok() ? "BAD" : "unsupported", rowError.c_str());
    nlohmann::json shapeJson = {{"M", s.M}, {"N", s.N}, {"K", s.K}, {"cublaslt_ms", ltMs},
                                {"cublaslt_tflops", flops / ltMs / 1e9}, {"cublaslt_gbps", bytes / ltMs / 1e6},
                                {"cublaslt_sample_err", sampleErr},
                                {"cublaslt_rowwise_ms", rowCheck.ok ? nlohmann::json(rowMs) : nlohmann::json(nullptr)},
                                {"cublaslt_rowwise_error", rowError},
                                {"read_ms", read.ms}, {"read_gbps", readBytes / read.ms / 1e6}, {"read_how", read.how},
                                {"kiln", nlohmann::json::array()}};
    double bestMs = 0, bestVs = 0, bestLtMs = 0;
    std::string best, pick;
    {
      ir::DiagnosticEngine diag;
      ops::Fp8GemmProblem problem{s.M, s.N, s.K};
      problem.fastAccum = fastAccum;
      if (auto sel = ops::selectGemmFp8(problem, target, diag)) pick = sel->variant->config.str();
    }
    for (auto& [cfg, k] : kernels) {
      std::map<std::string, int64_t> dims{{"M", s.M}, {"N", s.N}, {"K", s.K}};
      // Tensors in declaration order (kiln/kernel.h): A, B, scale_a, scale_b, C.
      auto run = [&, &k = k](cudaStream_t st) {
        k.launch(ctx, st, {uint64_t(dA.ptr), uint64_t(dB.ptr), uint64_t(dSa.ptr), uint64_t(dSb.ptr), uint64_t(dC.ptr)},
                 {}, dims);
      };
      Checked c = checkOnce(run, dC, ref);
      // Timed in alternation with cuBLASLt, its ratio to that paired median (shared/BENCH.md).
      auto [ms, pairedMs] = c.ok ? bench::alternatingMedianMs(run, runLt, warmup, reps, nullptr)
                                 : std::pair<double, double>{0, 0};
      double vs = c.ok ? pairedMs / ms : 0, tflops = c.ok ? flops / ms / 1e9 : 0, gbps = c.ok ? bytes / ms / 1e6 : 0;
      const auto& res = k.resources();
      if (c.ok)
        std::printf("  %-50s ok  %.4f ms %.0f TFLOP/s %.0f GB/s (%.2fx cuBLASLt at %.4f ms, %.2fx read time) err %.1e, "
                    "%d regs, %d B spills\n",
                    labelOf(cfg).c_str(), ms, tflops, gbps, vs, pairedMs, ms / read.ms, c.relErr, res.registers,
                    res.spillStoreBytes + res.spillLoadBytes);
      else
        std::printf("  %-50s BAD %s\n", labelOf(cfg).c_str(), c.error.c_str());
      shapeJson["kiln"].push_back({{"config", cfg}, {"name", labelOf(cfg)}, {"correct", c.ok}, {"rel_err", c.relErr}, {"error", c.error},
                                   {"ms", ms}, {"cublaslt_ms", pairedMs}, {"vs_cublaslt", vs}, {"tflops", tflops},
                                   {"gbps", gbps}, {"registers", res.registers},
                                   {"spill_bytes", res.spillStoreBytes + res.spillLoadBytes}});
      if (c.ok && vs > bestVs) bestVs = vs, bestMs = ms, bestLtMs = pairedMs, best = labelOf(cfg);
      if (cfg == pick) {
        shapeJson["family_pick"] = {{"config", cfg}, {"name", labelOf(cfg)}, {"ms", ms}, {"vs_cublaslt", vs}};
        std::printf("  family pick: %s, %.2fx cuBLASLt\n", labelOf(cfg).c_str(), vs);
        if (c.ok) logPick += std::log(vs), ++nPick;
      }
    }
    if (bestVs > 0) {
      logAll += std::log(bestVs), ++nAll;
      if (s.M <= 128) logSmall += std::log(bestVs), ++nSmall;
    }
    shapeJson["best_config"] = best;
    shapeJson["best_ms"] = bestMs;
    results.push_back(shapeJson);
    char line[512];
    std::snprintf(line, sizeof line, "| %5d | %5d | %5d | %7.1f | %7s | %7.1f | %5.2f | %s |", s.M, s.N, s.K,
                  bestVs > 0 ? flops / bestLtMs / 1e9 : flops / ltMs / 1e9,
                  rowCheck.ok ? std::to_string(int(flops / rowMs / 1e9)).c_str() : "-",
                  bestVs > 0 ? flops / bestMs / 1e9 : 0.0, bestVs, best.empty() ? "(none correct)" : best.c_str());
    table.push_back(line);
    std::fflush(stdout);
    // Written after every shape, so a run cut short still leaves what it measured.
    std::ofstream(jsonPath) << nlohmann::json{{"gpu", bench::gpuDescription()}, {"commit", KILN_GIT_COMMIT},
                                              {"cublaslt_version", cublasLtGetVersion()},
                                              {"cublaslt_fast_accum", fastAccum}, {"results", results}}
                                   .dump(2)
                            << "\n";
  }
  cublasLtDestroy(lt);
  std::printf("\n|     M |     N |     K | cuBLASLt TFLOP/s (beside the best) | rowwise TFLOP/s | Kiln best TFLOP/s "
              "| Kiln / cuBLASLt | best |\n|---:|---:|---:|---:|---:|---:|---:|---|\n");
  for (const auto& l : table) std::printf("%s\n", l.c_str());
  if (nAll) std::printf("\ngeomean best Kiln / cuBLASLt, all shapes: %.3f (%d shapes)\n", std::exp(logAll / nAll), nAll);
  if (nSmall)
    std::printf("geomean best Kiln / cuBLASLt, M <= 128:   %.3f (%d shapes)\n", std::exp(logSmall / nSmall), nSmall);
  if (nPick) std::printf("geomean family pick / cuBLASLt:          %.3f (%d shapes)\n", std::exp(logPick / nPick), nPick);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return benchMain(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln_fp8_bench: %s\n", e.what());
    return 1;
  }
}
