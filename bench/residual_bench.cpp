// kiln_residual_bench: what remove-residual-loop buys. Every sm90_ws_persistent variant of gemm_bf16
// is built twice in one run — with the pass (the default pipeline) and without it
// (KILN_DISABLE_PASSES=remove-residual-loop for that build only) — and timed side by side with
// cuBLAS on the small-M BF16 shapes, with both resource reports. Same method as kiln_gemm_bench
// (shared/BENCH.md): random-normal inputs, output checked against cuBLAS before a time is trusted,
// CUDA events, L2 flushed before every repetition, median of many; here off and on also take turns
// over several rounds. Where the two builds' cubins are byte-identical (ptxas deleted the empty
// residual loop itself), their time ratio is pure noise: the run reports the range of those ratios
// as its noise floor. Prints a line per kernel, a table, and writes JSON. It prints figures; it
// decides nothing.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "backend/resource_report_json.h"
#include "bench/bench_support.h"
#include "examples/examples.h"
#include "kiln/kernel.h"
#include "kiln/resource_report.h"
#include "kiln/runtime/driver.h"
#include "kiln/target.h"
#include "ops/gemm_bf16.h"
#include "schedule/config.h"

using namespace kiln;

namespace {
using bench::Shape;
const std::vector<Shape> kDefaultShapes = {{64, 5120, 5120}, {64, 4096, 6144}, {64, 12288, 4096}, {64, 2048, 12288}};


// Builds with the pass skipped (off) or run (on); the environment is restored either way.
std::optional<Kernel> build(const ir::Module& program, const Target& t, const Config& c, bool passOn,
                            ir::DiagnosticEngine& diag) {
  const char* before = std::getenv("KILN_DISABLE_PASSES");
  std::string saved = before ? before : "";
  if (passOn) unsetenv("KILN_DISABLE_PASSES");
  else setenv("KILN_DISABLE_PASSES", "remove-residual-loop", 1);
  auto k = Kernel::build(program, t, c, diag);
  if (before) setenv("KILN_DISABLE_PASSES", saved.c_str(), 1);
  else unsetenv("KILN_DISABLE_PASSES");
  return k;
}

int countOf(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t p = 0; (p = text.find(what, p)) != std::string::npos; p += what.size()) ++n;
  return n;
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"remove-residual-loop off vs on, sm90 BF16 GEMM variants, against cuBLAS"};
  std::string shapesArg, jsonPath = "residual_bench.json", only;
  int reps = 50, warmup = 5, rounds = 5;
  app.add_option("--shapes", shapesArg, "Shapes as MxNxK;MxNxK (default: the four small-M shapes)");
  app.add_option("--variant", only, "Only variants whose name contains this");
  app.add_option("--reps", reps, "Timed repetitions per kernel (median reported)");
  app.add_option("--warmup", warmup, "Untimed runs first");
  app.add_option("--rounds", rounds, "Alternating off/on rounds of --reps each (median of the round medians)");
  app.add_option("--json", jsonPath, "Where to write the JSON results");
  CLI11_PARSE(app, argc, argv);

  runtime::Driver* drv = bench::driverOrExplain("kiln_residual_bench");
  if (!drv) return 3;
  auto shapes = shapesArg.empty() ? kDefaultShapes : bench::parseShapes(shapesArg);
  runtime::Context ctx = runtime::Context::primary(*drv);
  std::printf("GPU: %s\n", bench::gpuDescription().c_str());
  Target target = Target::byName("sm_90a").value();
  auto program = examples::gemmBf16();

  struct Built {
    std::string name, config;
    Kernel off, on;
    bool sameCubin;
  };
  std::vector<Built> kernels;
  nlohmann::json builds = nlohmann::json::array();
  for (const auto& v : ops::gemmBf16Sm90Variants()) {
    if (!only.empty() && v.name.find(only) == std::string::npos) continue;
    ir::DiagnosticEngine diag;
    auto off = build(*program, target, v.config, false, diag);
    auto on = off ? build(*program, target, v.config, true, diag) : std::nullopt;
    if (!off || !on) {
      std::fprintf(stderr, "skipping %s: %s", v.name.c_str(), diag.str().c_str());
      continue;
    }
    // ptxas may delete the (empty) residual loop itself: then the cubins are the same, and any time
    // difference between off and on is the measurement's noise.
    bool samePtx = off->ptx() == on->ptx(), sameCubin = off->cubin() == on->cubin();
    std::printf("built %s (%s)\n  off: %s, %d PTX lines\n  on:  %s, %d PTX lines%s\n", v.name.c_str(),
                v.config.str().c_str(), off->resources().str().c_str(), countOf(off->ptx(), "\n"),
                on->resources().str().c_str(), countOf(on->ptx(), "\n"),
                samePtx ? " (identical PTX)" : sameCubin ? " (identical cubin)" : "");
    builds.push_back({{"variant", v.name}, {"config", v.config.str()}, {"identical_ptx", samePtx},
                      {"identical_cubin", sameCubin}, {"off", backend::toJson(off->resources())},
                      {"on", backend::toJson(on->resources())}});
    kernels.push_back({v.name, v.config.str(), std::move(*off), std::move(*on), sameCubin});
  }

  cublasHandle_t handle;
  bench::check(cublasCreate(&handle), "cublasCreate");
  nlohmann::json results = nlohmann::json::array();
  std::vector<std::string> table;
  std::vector<double> noise;  // off/on ratios where the cubins are identical
  for (const Shape& s : shapes) {
    auto A = bench::randomBf16(size_t(s.M) * s.K, 1), B = bench::randomBf16(size_t(s.K) * s.N, 2);
    bench::DeviceBuffer dA(A.size() * 2), dB(B.size() * 2), dC(size_t(s.M) * s.N * 2), dR(size_t(s.M) * s.N * 2);
    bench::check(cudaMemcpy(dA.ptr, A.data(), dA.bytes, cudaMemcpyHostToDevice), "copy A");
    bench::check(cudaMemcpy(dB.ptr, B.data(), dB.bytes, cudaMemcpyHostToDevice), "copy B");
    double flops = 2.0 * s.M * s.N * s.K;
    auto runCublas = [&](cudaStream_t st) { bench::cublasGemmBf16(handle, s.M, s.N, s.K, dA.ptr, dB.ptr, dR.ptr, false, st); };
    double cublasMs = bench::medianMs(runCublas, warmup, reps, nullptr);
    std::vector<uint16_t> R(size_t(s.M) * s.N);
    bench::check(cudaMemcpy(R.data(), dR.ptr, dR.bytes, cudaMemcpyDeviceToHost), "copy ref");
    ir::DiagnosticEngine sdiag;
    auto sel = ops::selectGemmBf16(ops::GemmProblem{s.M, s.N, s.K}, target, sdiag);
    std::string selected = sel ? sel->variant->name : "";
    std::printf("[%dx%dx%d] cuBLAS %.4f ms, %.0f TFLOP/s; the family selects %s\n", s.M, s.N, s.K, cublasMs,
                flops / cublasMs / 1e9, selected.c_str());
    nlohmann::json shapeJson = {{"M", s.M}, {"N", s.N}, {"K", s.K}, {"cublas_ms", cublasMs}, {"selected", selected},
                                {"kiln", nlohmann::json::array()}};
    std::map<std::string, int64_t> dims{{"M", s.M}, {"N", s.N}, {"K", s.K}};
    for (auto& b : kernels) {
      double ms[2] = {0, 0}, err[2] = {0, 0}, spread[2] = {0, 0};
      bool ok[2] = {false, false};
      auto runner = [&](int i) {
        const Kernel* k = i == 0 ? &b.off : &b.on;
        return [&, k](cudaStream_t st) { k->launch(ctx, st, {uint64_t(dA.ptr), uint64_t(dB.ptr), uint64_t(dC.ptr)}, {}, dims); };
      };
      for (int i = 0; i < 2; ++i) {
        auto checked = bench::checkBf16Output(runner(i), dC, R);
        ok[i] = checked.ok;
        err[i] = checked.cmp.relFrobenius;
      }
      // Off and on take turns (off-on, on-off, ...), so a drift of clocks or temperature during the
      // run falls on both; each side's time is the median of its per-round medians.
      std::vector<double> rounds2[2];
      for (int r = 0; r < rounds && ok[0] && ok[1]; ++r)
        for (int i : {r % 2, 1 - r % 2}) rounds2[i].push_back(bench::medianMs(runner(i), warmup, reps, nullptr));
      for (int i = 0; i < 2 && !rounds2[i].empty(); ++i) {
        std::sort(rounds2[i].begin(), rounds2[i].end());
        ms[i] = rounds2[i][rounds2[i].size() / 2];
        spread[i] = (rounds2[i].back() - rounds2[i].front()) / ms[i];
      }
      if (b.sameCubin && ms[0] > 0 && ms[1] > 0) noise.push_back(ms[0] / ms[1]);
      auto tf = [&](double m) { return m > 0 ? flops / m / 1e9 : 0.0; };
      std::printf("  %-32s%s off %s %.4f ms (spread %4.1f%%) %4.0f TFLOP/s | on %s %.4f ms (spread %4.1f%%) %4.0f "
                  "TFLOP/s | on speedup %.3fx%s | vs cuBLAS off %.2fx on %.2fx\n",
                  b.name.c_str(), b.name == selected ? "*" : " ", ok[0] ? "ok " : "BAD", ms[0], 100 * spread[0],
                  tf(ms[0]), ok[1] ? "ok " : "BAD", ms[1], 100 * spread[1], tf(ms[1]),
                  ms[0] > 0 && ms[1] > 0 ? ms[0] / ms[1] : 0.0, b.sameCubin ? " (same cubin: noise)" : "",
                  ms[0] > 0 ? cublasMs / ms[0] : 0.0, ms[1] > 0 ? cublasMs / ms[1] : 0.0);
      shapeJson["kiln"].push_back({{"variant", b.name}, {"config", b.config}, {"identical_cubin", b.sameCubin},
                                   {"off", {{"correct", ok[0]}, {"rel_err", err[0]}, {"ms", ms[0]}, {"round_ms", rounds2[0]},
                                            {"tflops", tf(ms[0])}, {"registers", b.off.resources().registers}}},
                                   {"on", {{"correct", ok[1]}, {"rel_err", err[1]}, {"ms", ms[1]}, {"round_ms", rounds2[1]},
                                           {"tflops", tf(ms[1])}, {"registers", b.on.resources().registers}}}});
      char line[320];
      std::snprintf(line, sizeof line, "| %5d | %5d | %5d | %-30s | %7.1f | %7.1f | %7.1f | %6.3f | %3d / %3d | %s |", s.M,
                    s.N, s.K, (b.name + (b.name == selected ? " *" : "")).c_str(), flops / cublasMs / 1e9, tf(ms[0]),
                    tf(ms[1]), ms[0] > 0 && ms[1] > 0 ? ms[0] / ms[1] : 0.0, b.off.resources().registers,
                    b.on.resources().registers, b.sameCubin ? "yes" : "no");
      table.push_back(line);
    }
    results.push_back(shapeJson);
  }
  cublasDestroy(handle);
  std::ofstream(jsonPath) << nlohmann::json{{"gpu", bench::gpuDescription()}, {"builds", builds}, {"results", results}}.dump(2)
                          << "\n";
  std::printf("\n(* = the variant the gemm_bf16 family selects for the shape)\n"
              "|     M |     N |     K | variant | cuBLAS TFLOP/s | off TFLOP/s | on TFLOP/s | on speedup | regs off / on | same cubin |\n"
              "|---:|---:|---:|---|---:|---:|---:|---:|---:|---|\n");
  for (const auto& l : table) std::printf("%s\n", l.c_str());
  if (!noise.empty()) {
    std::sort(noise.begin(), noise.end());
    std::printf("\nnoise floor: off/on time ratios of the %zu pairs with identical cubins run from %.3f to %.3f; a "
                "ratio inside that range says nothing about the pass\n",
                noise.size(), noise.front(), noise.back());
  }
  return 0;
}
