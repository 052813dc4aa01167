// GPU correctness of sm90_ws_persistent with split_k and stream_k (docs/sm90-strategy.md, "Split-K"): K slices
// of each tile on separate blocks, summed through the runtime's workspace under GPU-scope
// release/acquire flags. Against the fp64 host reference: one and two consumer warpgroups,
// ping-pong, both epilogues, both B layouts, ragged M, N, K (slices past K), more units than SMs;
// three launches in a row on one stream (each launch must leave its flags zero for the next) and
// launches on two streams at once (each stream has its own workspace); batched; the fused bias +
// GELU epilogue applied once, after the sum. The same for stream_k ("Stream-K": runs of K steps per
// block, partial sums per block), adding shapes with data-parallel waves. Skips, saying why,
// without an sm_90 GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "bench/bench_support.h"
#include "examples/examples.h"
#include "kiln/kernel.h"
#include "kiln/target.h"
#include "schedule/config.h"
#include "tests/gpu/ops/gemm_checks.h"
#include "tests/gpu/ops/gemm_reference.h"
#include "tests/unit/testing/output_check.h"

namespace kiln {
namespace {

using testing::needHopper;

const std::string kBase = "strategy=sm90_ws_persistent bk=64 warps_n=1 raster=grouped group_m=8 l2_hint=reuse ";
const std::string kConfigs[] = {
    "bm=64 bn=128 stages=9 warps_m=1 split_k=3",
    "bm=64 bn=64 stages=13 warps_m=1 split_k=2",
    "bm=128 bn=128 stages=6 warps_m=2 epilogue=tma split_k=2",
    "bm=128 bn=128 stages=5 warps_m=2 epilogue=tma consumers=pingpong split_k=2",
    "bm=128 bn=256 stages=4 warps_m=2 epilogue=tma split_k=4",
};

struct Shape {
  int M, N, K;
};
// 64x5120: 40 or 80 tiles of a small-M problem; 1024^2: more units than SMs, so blocks run
// several and wait on slices of blocks that started later; K = 40 and 64: slices wholly past K.
const Shape kShapes[] = {{64, 5120, 640}, {77, 136, 264}, {1, 64, 40}, {300, 520, 1000}, {1024, 1024, 128},
                         {128, 256, 4096}, {64, 64, 64}};

struct Buffers {
  std::vector<uint16_t> A, B;
  bench::DeviceBuffer dA, dB, dC;
  Buffers(Shape s, uint64_t seed)
      : A(bench::randomBf16(size_t(s.M) * s.K, seed)),
        B(bench::randomBf16(size_t(s.K) * s.N, seed + 1)),
        dA(A.size() * 2),
        dB(B.size() * 2),
        dC(size_t(s.M) * s.N * 2) {
    bench::check(cudaMemcpy(dA.ptr, A.data(), dA.bytes, cudaMemcpyHostToDevice), "copy A");
    bench::check(cudaMemcpy(dB.ptr, B.data(), dB.bytes, cudaMemcpyHostToDevice), "copy B");
    bench::poisonBf16(dC, nullptr);
  }
  std::vector<uint64_t> args() const { return {uint64_t(dA.ptr), uint64_t(dB.ptr), uint64_t(dC.ptr)}; }
  void expectMatches(Shape s, bool kMajor) const {
    std::vector<uint16_t> C(size_t(s.M) * s.N);
    bench::check(cudaMemcpy(C.data(), dC.ptr, dC.bytes, cudaMemcpyDeviceToHost), "copy C");
    testing::OutputCheck check = testing::checkOutput(C, testing::gemmReference(A, B, s.M, s.N, s.K, kMajor),
                                                      testing::kGemmRel, testing::kGemmAbsOfRms, bf16BitsToFloat);
    EXPECT_LT(check.relFrobenius, 8e-3);
    EXPECT_EQ(check.nonFinite, 0u) << "elements left unwritten (poison) or not finite";
    EXPECT_EQ(check.outOfBound, 0u) << check.str(C.size());
  }
};

std::map<std::string, int64_t> dimsOf(Shape s) { return {{"M", s.M}, {"N", s.N}, {"K", s.K}}; }

class GemmSm90SplitKGpu : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string why;
    if (!needHopper(&why)) GTEST_SKIP() << "no Hopper GPU: " << why;
  }

  // Every shape, both B layouts, three launches in a row on one stream. The output checked is
  // launch 3's (C is poisoned again before it): right only if launches 1 and 2 left every flag at
  // zero (a stale one lets a finishing unit add partial sums before they are written). The shapes
  // come in no particular order of size, so a larger problem follows smaller ones on the same
  // workspace (whose flags a smaller problem must not overwrite).
  void threeLaunchesInARow(const std::vector<Shape>& shapes) {
    runtime::Context ctx = runtime::Context::primary(*runtime::Driver::get());
    Config config = Config::parse(kBase + GetParam());
    for (bool kMajor : {false, true}) {
      ir::DiagnosticEngine diag;
      auto kernel =
          Kernel::build(kMajor ? *examples::gemmKMajorB() : *examples::gemmBf16(), Target::sm90a(), config, diag);
      ASSERT_TRUE(kernel) << diag.str();
      for (const Shape& s : shapes) {
        std::string what = GetParam() + (kMajor ? " kmajor" : " rowmajor") + " M=" + std::to_string(s.M) +
                           " N=" + std::to_string(s.N) + " K=" + std::to_string(s.K);
        SCOPED_TRACE(what);
        // Progress on stderr: a launch that never finishes (a flag never released) shows where.
        std::fprintf(stderr, "  %s\n", what.c_str());
        Buffers buf(s, uint64_t(s.M + s.N));
        for (int launch = 0; launch < 3; ++launch) {
          if (launch == 2) bench::poisonBf16(buf.dC, nullptr);
          kernel->launch(ctx, nullptr, buf.args(), {}, dimsOf(s));
          bench::check(cudaDeviceSynchronize(), "kernel");
        }
        buf.expectMatches(s, kMajor);
      }
    }
  }

  // Launches on two streams at once: each stream has its own workspace.
  void twoStreamsAtOnce(Shape s) {
    runtime::Context ctx = runtime::Context::primary(*runtime::Driver::get());
    ir::DiagnosticEngine diag;
    auto kernel = Kernel::build(*examples::gemmBf16(), Target::sm90a(), Config::parse(kBase + GetParam()), diag);
    ASSERT_TRUE(kernel) << diag.str();
    cudaStream_t st[2];
    for (auto& x : st) bench::check(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking), "stream");
    Buffers one(s, 41), two(s, 43);
    for (int i = 0; i < 4; ++i) {
      kernel->launch(ctx, st[0], one.args(), {}, dimsOf(s));
      kernel->launch(ctx, st[1], two.args(), {}, dimsOf(s));
    }
    bench::check(cudaDeviceSynchronize(), "kernels");
    one.expectMatches(s, false);
    two.expectMatches(s, false);
    for (auto& x : st) cudaStreamDestroy(x);
  }
};

TEST_P(GemmSm90SplitKGpu, ThreeLaunchesInARowMatchTheReference) {
  threeLaunchesInARow(std::vector<Shape>(std::begin(kShapes), std::end(kShapes)));
}

TEST_P(GemmSm90SplitKGpu, TwoStreamsAtOnceHaveTheirOwnWorkspace) { twoStreamsAtOnce({256, 2048, 2048}); }

INSTANTIATE_TEST_SUITE_P(Configs, GemmSm90SplitKGpu, ::testing::ValuesIn(kConfigs), testing::ParamName());

// stream_k (docs/sm90-strategy.md, "Stream-K"): the same checks, on the shapes above and on two
// that reach the data-parallel waves: 2304x4096 in 128x256 tiles is 288 tiles on 132 SMs (one
// data-parallel wave, then 156 tiles in runs of 3.5 K steps), 4224x1024 exactly one wave (no runs).
const std::string kStreamKConfigs[] = {
    "bm=128 bn=256 stages=4 warps_m=2 epilogue=tma stream_k=1",
    "bm=128 bn=256 stages=4 warps_m=2 epilogue=tma stream_k=2",
    "bm=128 bn=128 stages=6 warps_m=2 stream_k=2",
    "bm=64 bn=128 stages=9 warps_m=1 stream_k=1",
};
const Shape kStreamKShapes[] = {{2304, 4096, 192}, {4224, 1024, 256}};

class GemmSm90StreamKGpu : public GemmSm90SplitKGpu {};

TEST_P(GemmSm90StreamKGpu, ThreeLaunchesInARowMatchTheReference) {
  std::vector<Shape> shapes(std::begin(kShapes), std::end(kShapes));
  shapes.insert(shapes.end(), std::begin(kStreamKShapes), std::end(kStreamKShapes));
  threeLaunchesInARow(shapes);
}

TEST_P(GemmSm90StreamKGpu, TwoStreamsAtOnceHaveTheirOwnWorkspace) { twoStreamsAtOnce({2304, 4096, 192}); }

INSTANTIATE_TEST_SUITE_P(Configs, GemmSm90StreamKGpu, ::testing::ValuesIn(kStreamKConfigs), testing::ParamName());

// Batched (the slices of each batch's tiles) and the fused bias + GELU epilogue, which must run
// once, on the sum.
TEST(GemmSm90SplitKGpuPrograms, BatchedAndFusedEpilogue) {
  std::string why;
  if (!needHopper(&why)) GTEST_SKIP() << "no Hopper GPU: " << why;
  runtime::Context ctx = runtime::Context::primary(*runtime::Driver::get());
  struct Batched {
    int batch, m, n, k;
  };
  struct Fused {
    int m, n, k;
  };
  // Both programs through one config; `seed` picks the inputs (the fused run uses seed + 10).
  auto check = [&](const std::string& line, Batched b, Fused f, uint64_t seed) {
    SCOPED_TRACE(line);
    Config config = Config::parse(kBase + line);
    ir::DiagnosticEngine diag;
    auto batched = Kernel::build(*examples::batchedGemm(), Target::sm90a(), config, diag);
    ASSERT_TRUE(batched) << diag.str();
    testing::expectBatchedGemmMatches(*batched, ctx, b.batch, b.m, b.n, b.k, seed);
    auto fused = Kernel::build(*examples::gemmBiasGelu(), Target::sm90a(), config, diag);
    ASSERT_TRUE(fused) << diag.str();
    testing::expectBiasGeluMatches(*fused, ctx, f.m, f.n, f.k, seed + 10);
  };
  check("bm=128 bn=128 stages=6 warps_m=2 epilogue=tma split_k=3", {3, 77, 136, 520}, {200, 264, 1000}, 51);
  // stream_k: the batch's tiles in one walk, and the epilogue once per tile, by the unit ending it.
  check("bm=128 bn=256 stages=4 warps_m=2 epilogue=tma stream_k=1", {3, 520, 1024, 520}, {2304, 1024, 1000}, 53);
}

}  // namespace
}  // namespace kiln
