// kiln_fp8_bench: Kiln's FP8 scaled GEMM against cuBLASLt in the SAME scaling mode, in one run, on
// the same buffers (shared/BENCH.md): tensorwise (SCALAR_32F), rowwise (OUTER_VEC_32F), and
// DeepSeek-V3's blockwise 1x128 x 128x128 (VEC128_32F x BLK128x128_32F) and 1x128 x 1x128
// (VEC128_32F both), e4m3 operands (both K-major), bf16 out; the programs are ops/fp8_programs.h's.
// Every timed kernel's output is checked first: cuBLASLt's against an fp64 evaluation of sampled
// outputs with the mode's exact scale semantics, Kiln's against cuBLASLt's whole output and the
// same fp64 samples. Kiln's kernels are the gemm_fp8 family's variants for the mode (or --config);
// a mode no variant runs yet is reported with the compiler's reason. Small-M shapes are measured
// against the copy bandwidth and the read ceiling too; DeepGEMM's published H800 figures are
// printed beside the blockwise rows for orientation (another GPU and another run: never a ratio).
// Prints a line per kernel, a table per mode, and writes JSON after every shape.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "bench/bench_support.h"
#include "bench/fp8_scaled.h"
#include "bench/read_ceiling.h"
#include "kiln/kernel.h"
#include "kiln/resource_report.h"
#include "kiln/runtime/driver.h"
#include "kiln/target.h"
#include "ops/gemm_fp8.h"
#include "schedule/config.h"

using namespace kiln;

namespace {
using bench::Shape;
using ops::Fp8Scaling;

// shared/BENCH.md's FP8 shapes, then the issue's: DeepSeek-V3's 4096x24576x1536 and
// 4096x7168x16384, and M = 64 at both (memory-bound: against the copy bandwidth).
const std::vector<Shape> kDefaultShapes = {
    {64, 5120, 5120},    {128, 7168, 2048},    {4096, 7168, 2048}, {8192, 8192, 8192},
    {4096, 14336, 4096}, {4096, 4096, 14336},  {4096, 24576, 1536}, {4096, 7168, 16384},
    {64, 24576, 1536},   {64, 7168, 16384}};
const Fp8Scaling kAllModes[] = {Fp8Scaling::Tensorwise, Fp8Scaling::Rowwise, Fp8Scaling::Block1x128x128x128,
                                Fp8Scaling::Block1x128x1x128};

// DeepGEMM's README (2025-02, H800 SXM5, NVCC 12.8), 1x128 x 128x128: TFLOP/s and GB/s. Quoted
// beside Kiln's blockwise rows for orientation only.
struct Published {
  int M, N, K, tflops, gbps;
};
const Published kDeepGemmH800[] = {
    {64, 2112, 7168, 206, 1688},    {64, 24576, 1536, 289, 2455},   {64, 32768, 512, 219, 2143},
    {64, 7168, 16384, 336, 2668},   {64, 4096, 7168, 287, 2320},    {64, 7168, 2048, 295, 2470},
    {128, 2112, 7168, 352, 1509},   {128, 24576, 1536, 535, 2448},  {128, 32768, 512, 358, 2103},
    {128, 7168, 16384, 645, 2604},  {128, 4096, 7168, 533, 2221},   {128, 7168, 2048, 510, 2277},
    {4096, 2112, 7168, 1058, 527},  {4096, 24576, 1536, 990, 786},  {4096, 32768, 512, 590, 1232},
    {4096, 7168, 16384, 1358, 343}, {4096, 4096, 7168, 1304, 500},  {4096, 7168, 2048, 1025, 697}};

const Published* deepGemmFigure(const Shape& s) {
  for (const auto& p : kDeepGemmH800)
    if (p.M == s.M && p.N == s.N && p.K == s.K) return &p;
  return nullptr;
}

// The Kiln configs timed for a mode: --config lines, else the gemm_fp8 variants eligible for the
// mode's problem at any shape (their accumulation as asked), else -- a mode no variant runs yet --
// the rowwise variants' lines, which then report why they do not compile for it.
std::vector<std::string> configsFor(Fp8Scaling mode, bool fastAccum, const std::vector<std::string>& forced) {
  if (!forced.empty()) return forced;
  std::vector<std::string> eligible, rowwise;
  Target t = Target::byName("sm_90a").value();
  for (const auto& v : ops::gemmFp8Variants()) {
    if ((v.config.fp8Accum == Fp8Accum::Fast) != fastAccum) continue;
    ops::Fp8GemmProblem p{4096, 4096, 4096};
    p.fastAccum = fastAccum;
    rowwise.push_back(v.config.str());
    p.scaling = mode;
    if (v.eligible(p, t)) eligible.push_back(v.config.str());
  }
  return eligible.empty() ? rowwise : eligible;
}

std::string labelOf(const std::string& cfg) {
  for (const auto& v : ops::gemmFp8Variants())
    if (v.config.str() == cfg) return v.name;
  return cfg;
}

constexpr size_t kWorkspaceBytes = 32u << 20;

struct Checked {
  bool ok = false;
  double relErr = 0, sampleErr = 0;
  std::string error;
};

// Runs `launch` once into a poisoned `out`; its output must be finite, within 2e-2 of fp64 on the
// sampled outputs and (when `ref` is not empty) within 1e-2 of `ref` in relative Frobenius norm.
Checked checkOnce(const std::function<void(cudaStream_t)>& launch, bench::DeviceBuffer& out, const Shape& s,
                  const bench::Fp8Scales& sc, const std::vector<uint8_t>& A, const std::vector<uint8_t>& B,
                  const std::vector<uint16_t>& ref, std::vector<uint16_t>* got = nullptr) {
  Checked c;
  std::vector<uint16_t> mine(size_t(s.M) * s.N);
  try {
    bench::poisonBf16(out, nullptr);
    launch(nullptr);
    bench::check(cudaDeviceSynchronize(), "check run");
    bench::check(cudaMemcpy(mine.data(), out.ptr, out.bytes, cudaMemcpyDeviceToHost), "copy output");
  } catch (const std::exception& e) {
    c.error = e.what();
    return c;
  }
  c.sampleErr = bench::sampledError(s, sc, A, B, mine, uint64_t(s.M) * 31 + uint64_t(s.N) * 7 + uint64_t(s.K));
  bool refOk = true;
  if (!ref.empty()) {
    auto cmp = bench::compareBf16(mine, ref);
    c.relErr = cmp.relFrobenius;
    refOk = cmp.nonFinite == 0 && cmp.relFrobenius < 1e-2;
  }
  c.ok = c.sampleErr <= 2e-2 && refOk;
  if (!c.ok)
    c.error = "sampled error against fp64 " + std::to_string(c.sampleErr) + " (limit 2e-2), rel err against cuBLASLt " +
              std::to_string(c.relErr) + " (limit 1e-2)";
  if (got) *got = std::move(mine);
  return c;
}

struct ModeTotals {
  double logBest = 0, logPick = 0;
  int nBest = 0, nPick = 0;
  std::vector<std::string> table;
};

}  // namespace

static int benchMain(int argc, char** argv) {
  CLI::App app{"Kiln's FP8 scaled GEMM against cuBLASLt in the same scaling mode"};
  std::string shapesArg, jsonPath = "fp8_bench.json", modesArg = "all";
  int reps = 30, warmup = 5;
  bool fastAccum = false;
  std::vector<std::string> forced;
  app.add_option("--shapes", shapesArg, "Shapes as MxNxK;MxNxK (default: BENCH.md's FP8 list and the issue's)");
  app.add_option("--scaling", modesArg,
                 "Modes, comma-separated: tensorwise, rowwise, block_1x128_128x128, block_1x128_1x128, or all");
  app.add_option("--reps", reps, "Timed repetitions per kernel (median reported)");
  app.add_option("--warmup", warmup, "Untimed runs first");
  app.add_option("--json", jsonPath, "Where to write the JSON results");
  app.add_option("--config", forced, "Time this Kiln config line in every mode (repeatable; default: the family's)");
  app.add_flag("--fast-accum", fastAccum, "cuBLASLt's FAST_ACCUM, against Kiln's _fastacc variants");
  CLI11_PARSE(app, argc, argv);
  std::vector<Fp8Scaling> modes;
  for (size_t pos = 0; pos <= modesArg.size();) {
    size_t end = std::min(modesArg.find(',', pos), modesArg.size());
    std::string name = modesArg.substr(pos, end - pos);
    if (name == "all") modes.assign(std::begin(kAllModes), std::end(kAllModes));
    else if (auto m = ops::parseFp8Scaling(name)) modes.push_back(*m);
    else return std::fprintf(stderr, "kiln_fp8_bench: --scaling '%s' is not a mode\n", name.c_str()), 2;
    pos = end + 1;
  }
  for (auto& line : forced) {
    ir::DiagnosticEngine diag;
    auto c = Config::parse(line, diag);
    if (!c) return std::fprintf(stderr, "kiln_fp8_bench: --config '%s': %s", line.c_str(), diag.str().c_str()), 2;
    line = c->str();
  }
  runtime::Driver* drv = bench::driverOrExplain("kiln_fp8_bench");
  if (!drv) return 3;
  auto shapes = shapesArg.empty() ? kDefaultShapes : bench::parseShapes(shapesArg);
  runtime::Context ctx = runtime::Context::primary(*drv);
  std::printf("GPU: %s\ncuBLASLt %zu%s\n", bench::gpuDescription().c_str(), cublasLtGetVersion(),
              fastAccum ? ", fast accumulation" : "");
  Target target = Target::byName("sm_90a").value();
  cublasLtHandle_t lt;
  bench::check(cublasLtCreate(&lt), "cublasLtCreate");
  bench::DeviceBuffer workspace(kWorkspaceBytes);
  bench::ReadCeiling readCeiling(ctx);
  nlohmann::json results = nlohmann::json::array();
  std::map<Fp8Scaling, ModeTotals> totals;
  for (Fp8Scaling mode : modes) {
    const std::string modeName(ops::fp8ScalingName(mode));
    auto program = ops::fp8GemmProgram({mode}, "fp8_" + modeName);
    std::vector<std::pair<std::string, std::optional<Kernel>>> kernels;
    for (const auto& cfg : configsFor(mode, fastAccum, forced)) {
      ir::DiagnosticEngine diag;
      auto k = Kernel::build(*program, target, Config::parse(cfg), diag);
      std::printf("[%s] %s %-46s %s", modeName.c_str(), k ? "built" : "NOT BUILT", labelOf(cfg).c_str(),
                  k ? (k->resources().str() + "\n").c_str() : diag.str().c_str());
      kernels.emplace_back(cfg, std::move(k));
    }
    for (const Shape& s : shapes) {
      const size_t MN = size_t(s.M) * s.N;
      auto A = bench::randomE4m3(size_t(s.M) * s.K, 1), B = bench::randomE4m3(size_t(s.N) * s.K, 2);
      bench::Fp8Scales sc = bench::randomFp8Scales(mode, s, 3);
      std::vector<float> ltScaleB = bench::padScaleB(sc);
      bench::DeviceBuffer dA(A.size()), dB(B.size()), dSa(sc.a.size() * 4), dSb(sc.b.size() * 4),
          dLtSb(ltScaleB.size() * 4), dP(MN * 2), dC(MN * 2);
      bench::check(cudaMemcpy(dA.ptr, A.data(), dA.bytes, cudaMemcpyHostToDevice), "copy A");
      bench::check(cudaMemcpy(dB.ptr, B.data(), dB.bytes, cudaMemcpyHostToDevice), "copy B");
      bench::check(cudaMemcpy(dSa.ptr, sc.a.data(), dSa.bytes, cudaMemcpyHostToDevice), "copy scale_a");
      bench::check(cudaMemcpy(dSb.ptr, sc.b.data(), dSb.bytes, cudaMemcpyHostToDevice), "copy scale_b");
      bench::check(cudaMemcpy(dLtSb.ptr, ltScaleB.data(), dLtSb.bytes, cudaMemcpyHostToDevice), "copy scale_b (Lt)");
      const double flops = 2.0 * s.M * s.N * s.K;
      const double readBytes = double(s.M) * s.K + double(s.K) * s.N, bytes = readBytes + 2.0 * double(MN);
      auto tf = [&](double ms) { return ms > 0 ? flops / ms / 1e9 : 0.0; };
      auto gbps = [&](double ms) { return ms > 0 ? bytes / ms / 1e6 : 0.0; };

      bench::LtScaledGemm ltGemm(lt, s, mode, dSa.ptr, dLtSb.ptr, fastAccum, workspace);
      auto runLt = [&](cudaStream_t st) { ltGemm.run(dA.ptr, dB.ptr, dP.ptr, st); };
      std::vector<uint16_t> ref;
      Checked ltCheck;
      if (ltGemm.ok()) ltCheck = checkOnce(runLt, dP, s, sc, A, B, {}, &ref);
      if (!ltCheck.ok) ref.clear();
      const std::string ltError = ltGemm.ok() ? ltCheck.error : "unsupported: " + ltGemm.why();
      double ltMs = ltCheck.ok ? bench::medianMs(runLt, warmup, reps, nullptr) : 0;
      nlohmann::json shapeJson = {{"scaling", modeName}, {"M", s.M}, {"N", s.N}, {"K", s.K},
                                  {"cublaslt_ok", ltCheck.ok}, {"cublaslt_error", ltError},
                                  {"cublaslt_sample_err", ltCheck.sampleErr}, {"cublaslt_ms", ltMs},
                                  {"cublaslt_tflops", tf(ltMs)}, {"kiln", nlohmann::json::array()}};
      std::printf("[%s %dx%dx%d] cuBLASLt %s", modeName.c_str(), s.M, s.N, s.K,
                  ltCheck.ok ? "" : ("BAD/unavailable: " + ltError + "\n").c_str());
      if (ltCheck.ok)
        std::printf("%.4f ms, %.0f TFLOP/s, %.0f GB/s (sampled against fp64: err %.1e)\n", ltMs, tf(ltMs),
                    gbps(ltMs), ltCheck.sampleErr);
      if (s.M <= 128) {  // memory-bound: the copy of the same bytes and the read ceiling
        bench::DeviceBuffer src{size_t(readBytes)}, dst{size_t(readBytes)};
        double copyMs = bench::medianMs(
            [&](cudaStream_t st) { bench::check(cudaMemcpyAsync(dst.ptr, src.ptr, src.bytes, cudaMemcpyDeviceToDevice, st), "copy"); },
            warmup, reps, nullptr);
        auto read = readCeiling.measure(size_t(readBytes), warmup, reps);
        shapeJson["copy_gbps"] = 2 * readBytes / copyMs / 1e6;
        shapeJson["read_ms"] = read.ms;
        shapeJson["read_gbps"] = readBytes / read.ms / 1e6;
        std::printf("  copy of A's and B's bytes: %.0f GB/s (read + written); read ceiling %.0f GB/s (%s)\n",
                    2 * readBytes / copyMs / 1e6, readBytes / read.ms / 1e6, read.how.c_str());
      }
      const Published* dg = mode == Fp8Scaling::Block1x128x128x128 ? deepGemmFigure(s) : nullptr;
      if (dg) {
        shapeJson["deepgemm_h800_published"] = {{"tflops", dg->tflops}, {"gbps", dg->gbps}};
        std::printf("  DeepGEMM, published on H800 (orientation only): %d TFLOP/s, %d GB/s\n", dg->tflops, dg->gbps);
      }
      std::string pick;
      {
        ir::DiagnosticEngine diag;
        ops::Fp8GemmProblem problem{s.M, s.N, s.K};
        problem.fastAccum = fastAccum;
        problem.scaling = mode;
        if (auto sel = ops::selectGemmFp8(problem, target, diag)) pick = sel->variant->config.str();
      }
      double bestVs = 0, bestMs = 0, bestLtMs = 0;
      std::string best;
      for (auto& [cfg, k] : kernels) {
        if (!k) continue;
        std::map<std::string, int64_t> dims{{"M", s.M}, {"N", s.N}, {"K", s.K}};
        // Tensors in declaration order (ops/fp8_programs.h): A, B, scale_a, scale_b, C.
        auto run = [&, &k = k](cudaStream_t st) {
          k->launch(ctx, st, {uint64_t(dA.ptr), uint64_t(dB.ptr), uint64_t(dSa.ptr), uint64_t(dSb.ptr), uint64_t(dC.ptr)},
                    {}, dims);
        };
        Checked c = checkOnce(run, dC, s, sc, A, B, ref);
        auto [ms, pairedMs] = c.ok && ltCheck.ok ? bench::alternatingMedianMs(run, runLt, warmup, reps, nullptr)
                              : c.ok             ? std::pair{bench::medianMs(run, warmup, reps, nullptr), 0.0}
                                                 : std::pair{0.0, 0.0};
        double vs = ms > 0 && pairedMs > 0 ? pairedMs / ms : 0;
        const auto& res = k->resources();
        std::printf("  %-46s %s %.4f ms %.0f TFLOP/s %.0f GB/s (%.2fx cuBLASLt at %.4f ms) fp64 err %.1e, %d regs, "
                    "%d B spills%s%s\n",
                    labelOf(cfg).c_str(), c.ok ? "ok " : "BAD", ms, tf(ms), gbps(ms), vs, pairedMs, c.sampleErr,
                    res.registers, res.spillStoreBytes + res.spillLoadBytes, c.ok ? "" : " -- ", c.error.c_str());
        shapeJson["kiln"].push_back({{"config", cfg}, {"name", labelOf(cfg)}, {"correct", c.ok}, {"error", c.error},
                                     {"rel_err", c.relErr}, {"sample_err", c.sampleErr}, {"ms", ms},
                                     {"cublaslt_ms", pairedMs}, {"vs_cublaslt", vs}, {"tflops", tf(ms)},
                                     {"gbps", gbps(ms)}, {"registers", res.registers},
                                     {"spill_bytes", res.spillStoreBytes + res.spillLoadBytes}});
        // Without cuBLASLt (it refuses some shapes, e.g. blockwise at M off 4) the fastest correct one.
        const bool ltless = !ltCheck.ok && c.ok && ms > 0 && (bestMs == 0 || ms < bestMs);
        if (vs > bestVs || ltless) bestVs = vs, bestMs = ms, bestLtMs = pairedMs, best = labelOf(cfg);
        if (cfg == pick && c.ok && ms > 0) {
          shapeJson["family_pick"] = {{"config", cfg}, {"name", labelOf(cfg)}, {"ms", ms},
                                      {"vs_cublaslt", vs > 0 ? nlohmann::json(vs) : nlohmann::json()}};
          if (vs > 0) totals[mode].logPick += std::log(vs), ++totals[mode].nPick;
        }
      }
      if (bestVs > 0) totals[mode].logBest += std::log(bestVs), ++totals[mode].nBest;
      shapeJson["best_config"] = best;
      results.push_back(shapeJson);
      char line[512];
      std::snprintf(line, sizeof line, "| %5d | %5d | %5d | %7.1f | %7.1f | %5.2f | %s | %s |", s.M, s.N, s.K,
                    tf(bestVs > 0 ? bestLtMs : ltMs), tf(bestMs), bestVs,
                    best.empty() ? "(none correct)" : (best + (ltCheck.ok ? "" : " (cuBLASLt refused the shape)")).c_str(),
                    dg ? std::to_string(dg->tflops).c_str() : "");
      totals[mode].table.push_back(line);
      std::fflush(stdout);
      // Written after every shape, so a run cut short still leaves what it measured.
      std::ofstream(jsonPath) << nlohmann::json{{"gpu", bench::gpuDescription()}, {"commit", KILN_GIT_COMMIT},
                                                {"cublaslt_version", cublasLtGetVersion()},
                                                {"cublaslt_fast_accum", fastAccum}, {"results", results}}
                                     .dump(2)
                              << "\n";
    }
  }
  cublasLtDestroy(lt);
  for (Fp8Scaling mode : modes) {
    const ModeTotals& t = totals[mode];
    std::printf("\n%s\n|     M |     N |     K | cuBLASLt TFLOP/s | Kiln best TFLOP/s | Kiln / cuBLASLt | best | "
                "DeepGEMM H800 (published) |\n|---:|---:|---:|---:|---:|---:|---|---:|\n",
                std::string(ops::fp8ScalingName(mode)).c_str());
    for (const auto& l : t.table) std::printf("%s\n", l.c_str());
    if (t.nBest) std::printf("geomean best Kiln / cuBLASLt: %.3f (%d shapes)\n", std::exp(t.logBest / t.nBest), t.nBest);
    if (t.nPick) std::printf("geomean family pick / cuBLASLt: %.3f (%d shapes)\n", std::exp(t.logPick / t.nPick), t.nPick);
  }
  return 0;
}

int main(int argc, char** argv) {
  try {
    return benchMain(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln_fp8_bench: %s\n", e.what());
    return 1;
  }
}
