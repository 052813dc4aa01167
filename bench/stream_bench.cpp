// kiln_stream_bench: where a memory-bound GEMM's operand stream loses against a plain read. It
// times, like kiln_gemm_bench's read ceiling (L2 flushed, CUDA events, median of many), reads of one
// operand's bytes:
//   * sequential: the read ceiling's TMA bulk read (12 x 16 KB per block), on all SMs and on as
//     many blocks as the GEMM has tiles;
//   * tile strips: the GEMM's own copies without its math (kiln_tile_stream, read_ceiling_ptx.h,
//     a stage free once it lands): 64 x 64 boxes of a 2D tensor map, 128-byte swizzle,
//     evict_first, one block per tile strip,
//     a ring of some stages, issued one per freed stage or in bursts (--issue).
//   * the GEMM's protocol without its math (kiln_tile_stream again): a consumer warp releases each
//     stage as it lands, the producer waits for the release (with bursts, for the burst's last
//     stage first), optionally with the small operand's box in each stage (A at M = 64, B at
//     N = 64), optionally shared stream-K style among one block per SM (--gemm-issue).
// For B of M = 64 (a K x N row-major matrix: each box reads 64 rows, 128 bytes of each; the
// neighbouring 128 bytes are the next block's) and A of N = 64 (an M x K row-major matrix: each box
// 64 rows, and the block's next box continues the same rows). It prints figures; it decides nothing.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bench/bench_support.h"
#include "bench/read_ceiling_ptx.h"
#include "kiln/runtime/driver.h"
#include "kiln/runtime/launcher.h"
#include "kiln/runtime/module.h"
#include "kiln/runtime/stream.h"
#include "kiln/runtime/tensor_map.h"

using namespace kiln;

int main(int argc, char** argv) {
  CLI::App app{"Operand streams of memory-bound GEMMs against plain reads"};
  int reps = 30, warmup = 5;
  std::string jsonPath = "stream_bench.json", issueArg = "13x1,13x2,16x1,26x4", onlyArg;
  app.add_option("--reps", reps, "Timed repetitions per read (median reported)");
  app.add_option("--warmup", warmup, "Untimed runs first");
  app.add_option("--json", jsonPath, "Where to write the JSON results");
  app.add_option("--issue", issueArg, "Tile-strip issue policies as STAGESxBURST, comma-separated (stages <= 26)");
  app.add_option("--only", onlyArg, "Only operands whose name contains this (A or B)");
  std::string gemmArg = "13x1x0,13x2x0,13x1x1,13x2x1,13x1x3,13x1x5";
  app.add_option("--gemm-issue", gemmArg,
                 "The GEMM's producer protocol (a consumer warp releases each stage) as STAGESxBURSTxFLAGS, "
                 "comma-separated: flags bit 0 adds the small operand's box per stage (A at M = 64, B at N = 64), "
                 "bit 1 issues it after the streamed one, "
                 "bit 2 starts each block's K walk at a different step, bit 5 (32) shares all strips' boxes evenly "
                 "among one block per SM (stream-K), bit 6 (64) ends each block with an 8 KB bulk store (a tile's "
                 "TMA-store epilogue), bit 7 (128) waits only until the store has read shared memory");
  CLI11_PARSE(app, argc, argv);

  constexpr int kRing = 26 * 8192;  // the tile stream's ring, at most

  struct Operand {
    const char* name;
    uint64_t rows, cols;  // row-major, bf16
    bool walkRows;        // the block's boxes go down the rows (B) or along them (A)
  };
  const Operand operands[] = {{"B of 64x5120x5120 (K x N)", 5120, 5120, true},
                              {"B of 64x5120x20480 (K x N)", 20480, 5120, true},
                              {"B of 128x8192x8192 (K x N)", 8192, 8192, true},
                              {"A of 8192x64x4096 (M x K)", 8192, 4096, false},
                              {"A of 32768x64x4096 (M x K)", 32768, 4096, false}};
  struct Issue {
    uint32_t stages, burst;
  };
  std::vector<Issue> issues;
  for (size_t at = 0; at < issueArg.size();) {
    size_t end = issueArg.find(',', at);
    if (end == std::string::npos) end = issueArg.size();
    unsigned s = 0, b = 0;
    if (std::sscanf(issueArg.substr(at, end - at).c_str(), "%ux%u", &s, &b) != 2 || s < 1 || s > 26 || b < 1 || b > s) {
      std::fprintf(stderr, "kiln_stream_bench: --issue wants STAGESxBURST with 1 <= BURST <= STAGES <= 26, got '%s'\n",
                   issueArg.substr(at, end - at).c_str());
      return 2;
    }
    issues.push_back({s, b});
    at = end + 1;
  }
  struct GemmIssue {
    uint32_t stages, burst, flags;
  };
  std::vector<GemmIssue> gemmIssues;
  for (size_t at = 0; at < gemmArg.size();) {
    size_t end = gemmArg.find(',', at);
    if (end == std::string::npos) end = gemmArg.size();
    unsigned s = 0, b = 0, f = 0;
    if (std::sscanf(gemmArg.substr(at, end - at).c_str(), "%ux%ux%u", &s, &b, &f) != 3 || s < 2 || b < 1 || b >= s ||
        (f & ~231u) != 0 || s * ((f & 1) ? 16384u : 8192u) > unsigned(kRing)) {
      std::fprintf(stderr,
                   "kiln_stream_bench: --gemm-issue wants STAGESxBURSTxFLAGS with 1 <= BURST < STAGES, FLAGS of bits "
                   "0, 1, 2, 5, 6 and 7, "
                   "and the ring within %d bytes; got '%s'\n",
                   kRing, gemmArg.substr(at, end - at).c_str());
      return 2;
    }
    gemmIssues.push_back({s, b, f});
    at = end + 1;
  }
  // The GPU only once the arguments are known good.
  runtime::Driver* drv = bench::driverOrExplain("kiln_stream_bench");
  if (!drv) return 3;
  runtime::Context ctx = runtime::Context::primary(*drv);
  std::printf("GPU: %s\n", bench::gpuDescription().c_str());
  runtime::Module module = runtime::Module::load(ctx, bench::readCeilingPtx(), "stream bench");
  runtime::Function bulk = module.function("kiln_read_ceiling_tma_stream", 12 * 16384);
  runtime::Function tile = module.function("kiln_tile_stream", kRing);
  int sms = ctx.properties().smCount;
  nlohmann::json results = nlohmann::json::array();
  for (const Operand& op : operands) {
    if (!onlyArg.empty() && std::string(op.name).find(onlyArg) == std::string::npos) continue;
    uint64_t bytes = op.rows * op.cols * 2;
    bench::DeviceBuffer src(bytes);
    bench::check(cudaMemset(src.ptr, 1, bytes), "stream source");
    uint32_t strips = uint32_t(op.walkRows ? op.cols / 64 : op.rows / 64);
    uint32_t boxes = uint32_t(op.walkRows ? op.rows / 64 : op.cols / 64);
    std::printf("[%s] %.1f MB, %u strips of %u boxes\n", op.name, bytes / 1e6, strips, boxes);
    nlohmann::json entry = {{"operand", op.name}, {"bytes", bytes}, {"strips", strips}, {"reads", nlohmann::json::array()}};
    auto record = [&](const std::string& how, double ms) {
      std::printf("  %-58s %8.2f us %6.0f GB/s\n", how.c_str(), ms * 1e3, bytes / ms / 1e6);
      entry["reads"].push_back({{"how", how}, {"ms", ms}, {"gbps", bytes / ms / 1e6}});
    };
    uint64_t srcPtr = uint64_t(src.ptr), bytes64 = bytes;
    bench::DeviceBuffer out(uint64_t(std::max<uint32_t>(strips, uint32_t(sms))) * 8192);  // flags bit 6's tiles
    uint64_t outPtr = uint64_t(out.ptr);
    for (uint32_t blocks : {uint32_t(sms), strips}) {
      uint32_t chunk = 16384, stages = 12;
      double ms = bench::medianMs(
          [&](cudaStream_t st) {
            runtime::launch(bulk, runtime::Dim3{blocks}, runtime::Dim3{32}, {}, chunk * stages,
                            runtime::Stream::adopt(ctx, CUstream(st)), {&srcPtr, &bytes64, &chunk, &stages});
          },
          warmup, reps, nullptr);
      record(fmt::format("sequential, TMA 16 KB x 12, {} blocks", blocks), ms);
    }
    runtime::TensorMapDesc d;
    d.name = op.name;
    d.dtype = ir::ScalarType::BF16;
    d.globalAddress = srcPtr;
    d.globalDims = {op.cols, op.rows};
    d.globalStrides = {op.cols * 2};
    d.boxDims = {64, 64};
    d.swizzle = runtime::TmaSwizzle::B128;
    d.l2Promotion = runtime::TmaL2Promotion::B128;
    alignas(64) CUtensorMap map = runtime::encodeTensorMap(ctx, d);
    // kiln_tile_stream's flags: a stage is free once it lands (8), strips along dim 0 for A (16).
    uint32_t landed = 8u | (op.walkRows ? 0u : 16u);
    for (Issue is : issues) {
      uint32_t stages = is.stages, burst = is.burst;
      double ms = bench::medianMs(
          [&](cudaStream_t st) {
            runtime::launch(tile, runtime::Dim3{strips}, runtime::Dim3{64}, {}, stages * 8192,
                            runtime::Stream::adopt(ctx, CUstream(st)), {&map, &map, &boxes, &stages, &burst, &landed, &strips, &outPtr});
          },
          warmup, reps, nullptr);
      record(fmt::format("tile strips, {} x 8 KB boxes in flight, bursts of {}", stages, burst), ms);
    }
    if (!gemmIssues.empty()) {
      // The small operand, read by every block (from L2 after the first): at M = 64, A is 64 x K
      // (row-major, K = the streamed B's rows); at N = 64, B is K x 64 (K = the streamed A's columns).
      uint64_t k = op.walkRows ? op.rows : op.cols;
      bench::DeviceBuffer a(64 * k * 2);
      bench::check(cudaMemset(a.ptr, 1, a.bytes), "stream small operand");
      runtime::TensorMapDesc da = d;
      da.name = op.walkRows ? "A (64 x K)" : "B (K x 64)";
      da.globalAddress = uint64_t(a.ptr);
      da.globalDims = op.walkRows ? std::vector<uint64_t>{k, 64} : std::vector<uint64_t>{64, k};
      da.globalStrides = {op.walkRows ? k * 2 : 128};
      alignas(64) CUtensorMap mapA = runtime::encodeTensorMap(ctx, da);
      for (GemmIssue is : gemmIssues) {
        uint32_t stages = is.stages, burst = is.burst, flags = is.flags | (op.walkRows ? 0u : 16u);
        uint32_t slot = (flags & 1) ? 16384 : 8192;
        uint32_t grid = (flags & 32) ? uint32_t(sms) : strips;
        double ms = bench::medianMs(
            [&](cudaStream_t st) {
              runtime::launch(tile, runtime::Dim3{grid}, runtime::Dim3{64}, {}, stages * slot,
                              runtime::Stream::adopt(ctx, CUstream(st)),
                              {&map, &mapA, &boxes, &stages, &burst, &flags, &strips, &outPtr});
            },
            warmup, reps, nullptr);
        record(fmt::format("GEMM protocol, {} stages, bursts of {}{}{}{}{}", stages, burst,
                           (flags & 1) ? ((flags & 2) ? ", small box after" : ", small box before") : "",
                           (flags & 4) ? ", K walk rotated per block" : "",
                           (flags & 32) ? fmt::format(", stream-K on {} blocks", grid) : "",
                           (flags & 64) ? ((flags & 128) ? ", then an 8 KB bulk store, waited until read"
                                                         : ", then an 8 KB bulk store, waited until written")
                                        : ""),
               ms);
      }
    }
    results.push_back(entry);
  }
  std::ofstream(jsonPath) << nlohmann::json{{"gpu", bench::gpuDescription()}, {"commit", KILN_GIT_COMMIT}, {"results", results}}.dump(2)
                          << "\n";
  std::printf("wrote %s\n", jsonPath.c_str());
  return 0;
}
