// kiln_grouped_bench: the grouped (MoE) GEMMs on the H200. --layout ragged / masked (and the
// default, all) time groups of different row counts given by offsets or counts, BF16 and FP8
// (grouped_ragged.h); --layout kgrouped, groups along K (the weight gradient, torch._grouped_mm's
// 2D x 2D: dW_g = X_gᵀ · dY_g, grouped_kgrouped.cpp); --layout equal, the aligned grouped GEMM:
// G experts of M / G rows each: rows [g M/G, (g+1) M/G) of A multiply B[g] (B is [G, K, N]), C = A_g · B_g. Kiln runs it as one kernel
// (tile.group_index over the row blocks, {align} = M / G), through sm90_ws_persistent and, for
// reference, the sm80 default; the baseline is cuBLAS's strided-batched GEMM over the G equal
// groups (cublasGemmStridedBatchedEx), which computes the same products. Same method as
// kiln_gemm_bench (shared/BENCH.md): random-normal inputs, every output checked against cuBLAS's
// before its time is trusted, CUDA events, L2 flushed before every repetition, each kernel
// alternating with the baseline, median. Prints a line per kernel and a table, writes JSON; it
// decides nothing.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bench/bench_rows.h"
#include "bench/bench_support.h"
#include "bench/grouped_ragged.h"
#include "examples/examples.h"
#include "kiln/kernel.h"
#include "kiln/resource_report.h"
#include "kiln/runtime/driver.h"
#include "kiln/target.h"
#include "schedule/config.h"

using namespace kiln;

namespace {

struct GroupedShape {
  int G, M, N, K;
};
// Mixtral-like expert GEMMs (8 experts, 4096 -> 14336 and back) at two token counts, and one with
// more, smaller experts.
const std::vector<GroupedShape> kDefaultShapes = {
    {8, 8192, 14336, 4096}, {8, 8192, 4096, 14336}, {8, 2048, 14336, 4096}, {64, 16384, 2048, 2048}};

std::vector<GroupedShape> parseGrouped(const std::string& s) {
  std::vector<GroupedShape> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t end = s.find(';', pos);
    std::string item = s.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    GroupedShape g{};
    if (std::sscanf(item.c_str(), "%dx%dx%dx%d", &g.G, &g.M, &g.N, &g.K) != 4 || g.G <= 0 || g.M % g.G != 0) {
      std::fprintf(stderr, "kiln_grouped_bench: '%s' is not GxMxNxK with G dividing M\n", item.c_str());
      std::exit(2);
    }
    out.push_back(g);
    pos = end == std::string::npos ? s.size() : end + 1;
  }
  return out;
}

}  // namespace

std::vector<int> parseInts(const std::string& s) {
  std::vector<int> out;
  for (size_t pos = 0; pos < s.size();) {
    size_t end = std::min(s.find(',', pos), s.size());
    out.push_back(std::stoi(s.substr(pos, end - pos)));
    pos = end + 1;
  }
  return out;
}

int main(int argc, char** argv) {
  CLI::App app{"Kiln's grouped (MoE) GEMMs: ragged and masked groups against cuBLAS / cuBLASLt and the same work as one "
               "dense GEMM; equal groups against cuBLAS's strided-batched GEMM"};
  std::string shapesArg, jsonPath = "grouped_bench.json", layout = "all", rowsArg;
  bench::RaggedOptions ragged;
  bool fp8Only = false;
  std::vector<std::string> configs = {
      "strategy=sm90_ws_persistent bm=128 bn=256 bk=64 stages=4 warps_m=2 warps_n=1 epilogue=tma raster=grouped "
      "group_m=16 l2_hint=reuse",
      "strategy=sm90_ws_persistent bm=128 bn=128 bk=64 stages=6 warps_m=2 warps_n=1 epilogue=tma raster=grouped "
      "group_m=8 l2_hint=reuse",
      "strategy=sm80_multistage bm=128 bn=128 bk=32 stages=3 warps_m=2 warps_n=2"};
  int reps = 30, warmup = 5;
  app.add_option("--shapes", shapesArg, "Shapes as GxMxNxK;... (G groups of M / G rows)");
  app.add_option("--config", configs, "Kiln schedules to time (repeatable; default: two sm90 tiles and the sm80 default)");
  app.add_option("--reps", reps, "Timed repetitions per kernel (median reported)");
  app.add_option("--warmup", warmup, "Untimed runs first");
  app.add_option("--json", jsonPath, "Where to write the JSON results");
  app.add_option("--layout", layout, "equal, ragged, masked, kgrouped, or all (the default)");
  app.add_option("--rows", rowsArg, "Ragged: each expert's rows (default: 8 experts of 512..2048, seed 41); masked: "
                                    "each expert's count; kgrouped: each expert's tokens (0: an empty group)");
  app.add_option("--max-rows", ragged.maxRows, "Masked: the rows each expert's A holds (default: the largest count)");
  app.add_option("--n", ragged.N, "Ragged and masked: N (default 4096)");
  app.add_option("--k", ragged.K, "Ragged and masked: K (default 7168); kgrouped: M, the weight gradient's rows");
  app.add_flag("--fp8-only", fp8Only, "Ragged, masked and kgrouped: FP8 with block scales only (default: BF16, then FP8)");
  CLI11_PARSE(app, argc, argv);
  if (layout != "all" && layout != "equal" && layout != "ragged" && layout != "masked" && layout != "kgrouped")
    return std::fprintf(stderr, "kiln_grouped_bench: --layout '%s' is not equal, ragged, masked, kgrouped or all\n",
                        layout.c_str()),
           2;
  nlohmann::json raggedRows = nlohmann::json::array();
  // Ragged and masked: the given schedules, else the family's pick and the variants that walk
  // ragged groups (bench::raggedConfigs; the equal layout's defaults cannot walk them).
  if (app.count("--config")) ragged.configs = configs;
  ragged.warmup = warmup, ragged.reps = reps;
  for (const char* which : {"ragged", "masked"}) {
    if (layout != "all" && layout != which) continue;
    bench::RaggedOptions o = ragged;
    o.masked = std::string(which) == "masked";
    // The issue's MoE shape (8 experts of 512..2048 rows); masked: DeepGEMM's 4 experts of <= 256.
    o.rows = !rowsArg.empty() ? parseInts(rowsArg) : o.masked ? bench::moeRows(4, 16, 256, 41) : bench::moeRows(8, 512, 2048, 41);
    if (o.masked && o.maxRows == 0) o.maxRows = o.rows.empty() ? 0 : *std::max_element(o.rows.begin(), o.rows.end());
    for (bool fp8 : {false, true}) {
      if (fp8Only && !fp8) continue;
      o.fp8 = fp8;
      raggedRows.push_back(bench::runRagged(o));
      std::ofstream(jsonPath) << nlohmann::json{{"gpu", bench::gpuDescription()}, {"commit", KILN_GIT_COMMIT},
                                                {"ragged", raggedRows}}.dump(2) << "\n";
    }
  }
  // Groups along K: the ragged forward's tokens per expert, its weight gradient; FP8 (1x128 scales
  // along K) with each expert's tokens rounded up to whole 128-token blocks (the recipe's rule).
  if (layout == "all" || layout == "kgrouped") {
    bench::RaggedOptions o = ragged;
    o.rows = !rowsArg.empty() ? parseInts(rowsArg) : bench::moeRows(8, 512, 2048, 41);
    for (bool fp8 : {false, true}) {
      if (fp8Only && !fp8) continue;
      o.fp8 = fp8;
      raggedRows.push_back(fp8 ? bench::runKGroupedFp8(o) : bench::runKGrouped(o));
      std::ofstream(jsonPath) << nlohmann::json{{"gpu", bench::gpuDescription()}, {"commit", KILN_GIT_COMMIT},
                                                {"ragged", raggedRows}}.dump(2) << "\n";
    }
  }
  if (layout != "all" && layout != "equal") return 0;

  runtime::Driver* drv = bench::driverOrExplain("kiln_grouped_bench");
  if (!drv) return 3;
  auto shapes = shapesArg.empty() ? kDefaultShapes : parseGrouped(shapesArg);
  runtime::Context ctx = runtime::Context::primary(*drv);
  std::printf("GPU: %s\n", bench::gpuDescription().c_str());
  Target target = Target::byName("sm_90a").value();
  cublasHandle_t handle;
  bench::check(cublasCreate(&handle), "cublasCreate");
  nlohmann::json results = nlohmann::json::array();
  std::vector<std::string> table;
  for (const GroupedShape& s : shapes) {
    const int rows = s.M / s.G;
    auto program = examples::groupedGemm(rows);
    auto A = bench::randomBf16(size_t(s.M) * s.K, 1), B = bench::randomBf16(size_t(s.G) * s.K * s.N, 2);
    std::vector<int32_t> ids(size_t(s.M));
    for (int i = 0; i < s.M; ++i) ids[size_t(i)] = i / rows;
    bench::DeviceBuffer dA(A.size() * 2), dB(B.size() * 2), dIds(ids.size() * 4), dC(size_t(s.M) * s.N * 2),
        dR(size_t(s.M) * s.N * 2);
    bench::check(cudaMemcpy(dA.ptr, A.data(), dA.bytes, cudaMemcpyHostToDevice), "copy A");
    bench::check(cudaMemcpy(dB.ptr, B.data(), dB.bytes, cudaMemcpyHostToDevice), "copy B");
    bench::check(cudaMemcpy(dIds.ptr, ids.data(), dIds.bytes, cudaMemcpyHostToDevice), "copy ids");
    // cuBLAS, column-major: each group's row-major C_g = A_g · B_g is C_gᵀ = B_gᵀ · A_gᵀ.
    auto runCublas = [&](cudaStream_t st) {
      const float alpha = 1.0f, beta = 0.0f;
      bench::check(cublasSetStream(handle, st), "cublasSetStream");
      bench::check(cublasGemmStridedBatchedEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, s.N, rows, s.K, &alpha, dB.ptr,
                                              CUDA_R_16BF, s.N, int64_t(s.K) * s.N, dA.ptr, CUDA_R_16BF, s.K,
                                              int64_t(rows) * s.K, &beta, dR.ptr, CUDA_R_16BF, s.N, int64_t(rows) * s.N,
                                              s.G, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                   "cublasGemmStridedBatchedEx");
    };
    runCublas(nullptr);
    bench::check(cudaDeviceSynchronize(), "cuBLAS");
    std::vector<uint16_t> R(size_t(s.M) * s.N);
    bench::check(cudaMemcpy(R.data(), dR.ptr, dR.bytes, cudaMemcpyDeviceToHost), "copy R");
    const double flops = 2.0 * s.M * s.N * s.K;
    std::map<std::string, int64_t> dims{{"G", s.G}, {"M", s.M}, {"N", s.N}, {"K", s.K}};
    std::printf("[G=%d %dx%dx%d, groups of %d rows]\n", s.G, s.M, s.N, s.K, rows);
    nlohmann::json shapeJson = {{"G", s.G}, {"M", s.M}, {"N", s.N}, {"K", s.K}, {"kiln", nlohmann::json::array()}};
    for (const std::string& line : configs) {
      ir::DiagnosticEngine diag;
      auto config = Config::parse(line, diag);
      auto kernel = config ? Kernel::build(*program, target, *config, diag) : std::nullopt;
      if (!kernel) {
        std::printf("  %s: not built: %s", line.c_str(), diag.str().c_str());
        continue;
      }
      const std::vector<uint64_t> ptrs = {uint64_t(dA.ptr), uint64_t(dB.ptr), uint64_t(dIds.ptr), uint64_t(dC.ptr)};
      auto run = [&](cudaStream_t st) { kernel->launch(ctx, st, ptrs, {}, dims); };
      bench::Comparison cmp;
      bool ok = false;
      double ms = 0, cublasMs = 0;
      // An unsupported shape (or a launch that fails) is a row, and the run goes on.
      std::optional<std::string> status = bench::unsupportedShape(*kernel, ptrs, {}, dims);
      if (!status)
        status = bench::guardedRow([&] {
          bench::CheckedRun checked = bench::checkBf16Output(run, dC, R);
          cmp = checked.cmp;
          ok = checked.ok;
          if (ok) std::tie(ms, cublasMs) = bench::alternatingMedianMs(run, runCublas, warmup, reps, nullptr);
        });
      if (status) {
        std::printf("  %-110s %s\n", line.c_str(), status->c_str());
        shapeJson["kiln"].push_back({{"config", line}, {"correct", false}, {"status", *status}});
        continue;
      }
      auto tf = [&](double m) { return m > 0 ? flops / m / 1e9 : 0.0; };
      std::printf("  %-110s %s %.4f ms %6.0f TFLOP/s (%.2fx cuBLAS at %.4f ms, %.0f TFLOP/s) err %.1e, %d regs\n",
                  line.c_str(), ok ? "ok " : "BAD", ms, tf(ms), ms > 0 ? cublasMs / ms : 0.0, cublasMs, tf(cublasMs),
                  cmp.relFrobenius, kernel->resources().registers);
      shapeJson["kiln"].push_back({{"config", line}, {"correct", ok}, {"rel_err", cmp.relFrobenius}, {"ms", ms},
                                   {"tflops", tf(ms)}, {"cublas_ms", cublasMs}, {"cublas_tflops", tf(cublasMs)},
                                   {"vs_cublas", ms > 0 ? cublasMs / ms : 0.0},
                                   {"registers", kernel->resources().registers}});
      char row[256];
      std::snprintf(row, sizeof row, "| %3d | %6d | %6d | %6d | %-40.40s | %7.1f | %7.1f | %5.2f |", s.G, s.M, s.N, s.K,
                    line.c_str(), tf(cublasMs), tf(ms), ms > 0 ? cublasMs / ms : 0.0);
      table.push_back(row);
    }
    results.push_back(shapeJson);
  }
  cublasDestroy(handle);
  std::ofstream(jsonPath) << nlohmann::json{{"gpu", bench::gpuDescription()}, {"commit", KILN_GIT_COMMIT},
                                            {"ragged", raggedRows}, {"results", results}}
                                 .dump(2)
                          << "\n";
  std::printf("\n|   G |      M |      N |      K | schedule | cuBLAS TFLOP/s | Kiln TFLOP/s | Kiln / cuBLAS |\n"
              "|---:|---:|---:|---:|---|---:|---:|---:|\n");
  for (const auto& r : table) std::printf("%s\n", r.c_str());
  return 0;
}
