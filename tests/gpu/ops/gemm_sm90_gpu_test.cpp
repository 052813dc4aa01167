// GPU correctness of the Hopper (sm90_ws_persistent) BF16 GEMM variants against an fp64 host
// reference and cuBLAS: every bf16_gemm_sm90_* variant, both B layouts; square, skinny, ragged
// (M, N, K not multiples of the tile; K below one K step), M = 1, more tiles than SMs (the
// persistent loop wraps), random-normal and patterned inputs, outputs poisoned (NaN) before every
// launch. Also FP16 operands and output, the batched GEMM (3-D tensor maps) and the fused bias +
// GELU epilogue. Skips, saying why, where there is no GPU or it is not an sm_90 part.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>

#include "bench/bench_support.h"
#include "examples/examples.h"
#include "kiln/compile.h"
#include "kiln/float_formats.h"
#include "kiln/kernel.h"
#include "kiln/runtime/driver.h"
#include "kiln/target.h"
#include "ops/gemm_bf16_sm90.h"
#include "schedule/config.h"
#include "tests/gpu/ops/gemm_checks.h"
#include "tests/gpu/ops/gemm_reference.h"
#include "tests/unit/testing/output_check.h"
#include "tests/unit/schedule/sm90_config_draw.h"
#include "tests/unit/tune/space_kinds.h"

namespace kiln {
namespace {

struct Shape {
  int M, N, K;
};
// 1024 x 1024 with 64x64 tiles is 256 tiles: more than the H200's 132 SMs, so blocks run several.
const Shape kShapes[] = {{128, 128, 64},  {256, 256, 512}, {64, 1024, 256}, {1024, 64, 192}, {77, 136, 264},
                         {200, 136, 40},  {1, 64, 32},     {300, 520, 1000}, {1024, 1024, 128}};

using bench::Float16;

float (*decoderOf(Float16 f))(uint16_t) { return f == Float16::BF16 ? bf16BitsToFloat : f16BitsToFloat; }

using testing::needHopper;

std::vector<std::string> sm90Variants() {
  std::vector<std::string> v;
  for (const auto& x : ops::gemmBf16Variants())
    if (x.config.strategy == "sm90_ws_persistent") v.push_back(x.name);
  return v;
}

class GemmSm90Gpu : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string why;
    if (!needHopper(&why)) GTEST_SKIP() << "no Hopper GPU: " << why;
  }
};

// Every shape of kShapes, both B layouts, random and patterned inputs: against the fp64 reference
// and cuBLAS, with operands and output in format f. The tolerances are a few times one rounding of
// the output (BF16: 8 significant bits, FP16: 11), so FP16 results carried at BF16's precision fail.
void matchesReferenceAndCublas(const std::string& name, const Config& config,
                               const std::function<std::unique_ptr<ir::Module>(bool kMajor)>& program,
                               Float16 f = Float16::BF16) {
  runtime::Context ctx = runtime::Context::primary(*runtime::Driver::get());
  cublasHandle_t handle;
  bench::check(cublasCreate(&handle), "cublasCreate");
  const double vsReference = f == Float16::BF16 ? 8e-3 : 2e-3, vsCublas = f == Float16::BF16 ? 1e-2 : 2e-3;
  for (bool kMajor : {false, true}) {
    ir::DiagnosticEngine diag;
    auto kernel = Kernel::build(*program(kMajor), Target::sm90a(), config, diag);
    ASSERT_TRUE(kernel) << diag.str();
    for (const Shape& s : kShapes) {
      for (bool patterned : {false, true}) {
        SCOPED_TRACE(name + (kMajor ? " kmajor" : " rowmajor") + " M=" + std::to_string(s.M) + " N=" +
                     std::to_string(s.N) + " K=" + std::to_string(s.K) + (patterned ? " patterned" : " random"));
        std::map<std::string, int64_t> dims{{"M", s.M}, {"N", s.N}, {"K", s.K}};
        auto A = patterned ? bench::patternedFloat16(s.M, s.K, 1, f)
                           : bench::randomFloat16(size_t(s.M) * s.K, 11 + s.M, f);
        auto B = patterned ? bench::patternedFloat16(kMajor ? s.N : s.K, kMajor ? s.K : s.N, 2, f)
                           : bench::randomFloat16(size_t(s.K) * s.N, 12 + s.N, f);
        bench::DeviceBuffer dA(A.size() * 2), dB(B.size() * 2), dC(size_t(s.M) * s.N * 2), dR(size_t(s.M) * s.N * 2);
        bench::check(cudaMemcpy(dA.ptr, A.data(), dA.bytes, cudaMemcpyHostToDevice), "copy A");
        bench::check(cudaMemcpy(dB.ptr, B.data(), dB.bytes, cudaMemcpyHostToDevice), "copy B");
        bench::poisonBf16(dC, nullptr);
        kernel->launch(ctx, nullptr, {uint64_t(dA.ptr), uint64_t(dB.ptr), uint64_t(dC.ptr)}, {}, dims);
        bench::check(cudaDeviceSynchronize(), "kernel");
        std::vector<uint16_t> C(size_t(s.M) * s.N);
        bench::check(cudaMemcpy(C.data(), dC.ptr, dC.bytes, cudaMemcpyDeviceToHost), "copy C");
        testing::OutputCheck check =
            testing::checkOutput(C, testing::gemmReference(A, B, s.M, s.N, s.K, kMajor, decoderOf(f)),
                                 testing::kGemmRel, testing::kGemmAbsOfRms, decoderOf(f));
        EXPECT_EQ(check.nonFinite, 0u) << "elements left unwritten (poison) or not finite";
        EXPECT_LT(check.relFrobenius, vsReference);
        EXPECT_EQ(check.outOfBound, 0u) << check.str(C.size());
        bench::cublasGemm16(handle, s.M, s.N, s.K, dA.ptr, dB.ptr, dR.ptr, kMajor, nullptr, f);
        std::vector<uint16_t> R(C.size());
        bench::check(cudaMemcpy(R.data(), dR.ptr, dR.bytes, cudaMemcpyDeviceToHost), "copy cuBLAS");
        EXPECT_LT(bench::compareFloat16(C, R, f).relFrobenius, vsCublas) << "differs from cuBLAS";
      }
    }
  }
  cublasDestroy(handle);
}

TEST_P(GemmSm90Gpu, MatchesReferenceAndCublas) {
  const ops::GemmVariant* v = ops::findGemmBf16Variant(GetParam());
  ASSERT_NE(v, nullptr);
  matchesReferenceAndCublas(GetParam(), v->config, [&](bool kMajor) { return v->program(kMajor); });
}

INSTANTIATE_TEST_SUITE_P(Variants, GemmSm90Gpu, ::testing::ValuesIn(sm90Variants()), testing::ParamName());

// Cluster shapes not (or not all) registered as variants, through the same checks: rows of 2 and
// 4 blocks along N sharing the A tile (cluster_n), and 2 x 2 clusters sharing both, with the
// epilogues and consumers they combine with.
const std::vector<std::string> kClusterConfigs = {
    "bm=64 bn=64 stages=13 warps_m=1 cluster_n=4",
    "bm=64 bn=64 stages=13 warps_m=1 cluster_n=2",
    "bm=64 bn=128 stages=9 warps_m=1 cluster_n=2",
    "bm=128 bn=128 stages=6 warps_m=2 epilogue=tma cluster_n=2",
    "bm=128 bn=256 stages=4 warps_m=2 epilogue=tma reuse_stage=true cluster_n=2",
    "bm=128 bn=128 stages=5 warps_m=2 consumers=pingpong epilogue=tma cluster_n=2",
    "bm=128 bn=256 stages=4 warps_m=2 epilogue=tma cluster_m=2 cluster_n=2",
    "bm=192 bn=192 stages=4 warps_m=3 epilogue=tma store_slots=1 cluster_m=2 cluster_n=2",
    "bm=64 bn=128 stages=9 warps_m=1 cluster_m=2 cluster_n=2",
};

class GemmSm90GpuConfigs : public GemmSm90Gpu {};

TEST_P(GemmSm90GpuConfigs, MatchesReferenceAndCublas) {
  // warps_n=1 unless the config splits the columns between warpgroups (swap_ab).
  bool columnSplit = GetParam().find("warps_n=") != std::string::npos;
  Config config = Config::parse(std::string("strategy=sm90_ws_persistent bk=64 raster=grouped group_m=8 l2_hint=reuse ") +
                                (columnSplit ? "" : "warps_n=1 ") + GetParam());
  matchesReferenceAndCublas(GetParam(), config, [](bool kMajor) {
    return kMajor ? examples::gemmKMajorB() : examples::gemmBf16();
  });
}

INSTANTIATE_TEST_SUITE_P(Clusters, GemmSm90GpuConfigs, ::testing::ValuesIn(kClusterConfigs), testing::ParamName());

// Tiles whose bn is not a multiple of 64 (none registered yet): the last row-major B box copied
// whole and read in part, the output columns past the whole boxes stored directly.
const std::vector<std::string> kNarrowConfigs = {
    "bm=128 bn=160 stages=4 warps_m=2 epilogue=tma",
    "bm=128 bn=208 stages=4 warps_m=2 epilogue=tma cluster_m=2",
    "bm=192 bn=144 stages=4 warps_m=3 epilogue=tma store_slots=1",
    "bm=64 bn=48 stages=8 warps_m=1",
    "bm=128 bn=96 stages=6 warps_m=2 consumers=pingpong epilogue=tma",
};

INSTANTIATE_TEST_SUITE_P(Narrow, GemmSm90GpuConfigs, ::testing::ValuesIn(kNarrowConfigs), testing::ParamName());

// blocks_per_sm=2: two one-warpgroup blocks on each SM (128 registers a thread, half the shared
// memory each), the persistent grid twice the SMs: alone, with stream-K over the doubled grid, with
// split-K, and swapped.
const std::vector<std::string> kTwoPerSmConfigs = {
    "bm=64 bn=128 stages=4 warps_m=1 epilogue=tma blocks_per_sm=2",
    "bm=64 bn=64 stages=6 warps_m=1 stream_k=1 blocks_per_sm=2",
    "bm=128 bn=64 stages=4 warps_m=1 split_k=2 blocks_per_sm=2",
    "bm=64 bn=128 stages=4 warps_m=1 swap_ab=true epilogue=tma stage_store=stmatrix blocks_per_sm=2",
};

INSTANTIATE_TEST_SUITE_P(TwoPerSm, GemmSm90GpuConfigs, ::testing::ValuesIn(kTwoPerSmConfigs), testing::ParamName());

// swap_ab: the tile computed transposed (B's stage as wgmma's A, MN-major through imm-trans-a) and
// staged by stmatrix .trans: tile heights that are not multiples of 64 (104- and 72-row shares,
// whose last 8 rows go out by stmatrix .x2), 144 accumulators, clusters, ping-pong, stream-K.
const std::string kSwap = "swap_ab=true epilogue=tma stage_store=stmatrix ";
const std::vector<std::string> kSwappedConfigs = {
    kSwap + "bm=208 bn=128 stages=4 warps_m=2",
    kSwap + "bm=192 bn=192 stages=4 warps_m=2 store_slots=1",
    kSwap + "bm=144 bn=256 stages=3 warps_m=2 cluster_m=2",
    kSwap + "bm=208 bn=128 stages=4 warps_m=2 cluster_n=2",
    kSwap + "bm=112 bn=128 stages=5 warps_m=2 consumers=pingpong",
    kSwap + "bm=208 bn=128 stages=4 warps_m=2 stream_k=1",
    kSwap + "bm=48 bn=128 stages=8 warps_m=1",
};

INSTANTIATE_TEST_SUITE_P(Swapped, GemmSm90GpuConfigs, ::testing::ValuesIn(kSwappedConfigs), testing::ParamName());

// swap_ab with warps_n: the warpgroups split the tile's columns, each one wgmma as tall as the
// tile (m64n208, m64n232 with an .x2 tail, m64n256), three of them on 192 x 192, in clusters,
// stream-K and split-K.
const std::vector<std::string> kSwappedColumnConfigs = {
    kSwap + "bm=208 bn=128 stages=4 warps_m=1 warps_n=2",
    kSwap + "bm=232 bn=128 stages=3 warps_m=1 warps_n=2",
    kSwap + "bm=256 bn=128 stages=3 warps_m=1 warps_n=2",
    kSwap + "bm=192 bn=192 stages=3 warps_m=1 warps_n=3",
    kSwap + "bm=160 bn=256 stages=3 warps_m=1 warps_n=2 store_slots=1",
    kSwap + "bm=208 bn=128 stages=4 warps_m=1 warps_n=2 cluster_m=2",
    kSwap + "bm=208 bn=128 stages=4 warps_m=1 warps_n=2 cluster_n=2",
    kSwap + "bm=208 bn=128 stages=4 warps_m=1 warps_n=2 stream_k=1",
    kSwap + "bm=208 bn=128 stages=4 warps_m=1 warps_n=2 split_k=2",
    // store_pieces: the boxes staged and stored in row pieces (112, 128 and 40 rows).
    kSwap + "bm=224 bn=128 stages=4 warps_m=1 warps_n=2 store_slots=1 store_pieces=2",
    kSwap + "bm=256 bn=128 stages=4 warps_m=1 warps_n=2 store_slots=1 store_pieces=2",
    kSwap + "bm=160 bn=256 stages=4 warps_m=1 warps_n=2 store_slots=1 store_pieces=4",
};

INSTANTIATE_TEST_SUITE_P(SwappedColumns, GemmSm90GpuConfigs, ::testing::ValuesIn(kSwappedColumnConfigs),
                         testing::ParamName());

// One BF16 config of each kind kiln tune's generated space holds (tests/unit/tune/space_kinds.h,
// the simulator's set): the screen launches every candidate that assembles, so each kind must be
// right on the GPU too.
std::vector<std::string> tunerSpaceKinds() {
  std::vector<std::string> lines;
  for (const tuning::SpaceKind& k : tuning::spaceKinds(false))
    if (!k.shape.fp8) lines.push_back(k.config.str());
  return lines;
}

class GemmSm90GpuSpace : public GemmSm90Gpu {};

TEST_P(GemmSm90GpuSpace, MatchesReferenceAndCublas) {
  matchesReferenceAndCublas(GetParam(), Config::parse(GetParam()), [](bool kMajor) {
    return kMajor ? examples::gemmKMajorB() : examples::gemmBf16();
  });
}

INSTANTIATE_TEST_SUITE_P(TunerSpace, GemmSm90GpuSpace, ::testing::ValuesIn(tunerSpaceKinds()), testing::ParamName());

// The FP16 program (examples::gemmF16) through the schedules of registered variants: one and two
// consumer warpgroups, ping-pong, the TMA store, clusters along M and N, three warpgroups, swapped
// operands.
class GemmSm90GpuF16 : public GemmSm90Gpu {};

TEST_P(GemmSm90GpuF16, MatchesReferenceAndCublas) {
  const ops::GemmVariant* v = ops::findGemmBf16Variant(GetParam());
  ASSERT_NE(v, nullptr);
  matchesReferenceAndCublas(GetParam() + " f16", v->config, examples::gemmF16, Float16::F16);
}

INSTANTIATE_TEST_SUITE_P(Variants, GemmSm90GpuF16,
                         ::testing::Values("bf16_gemm_sm90_64x128x64_s8", "bf16_gemm_sm90_128x256x64_s4_tma_c2",
                                           "bf16_gemm_sm90_128x128x64_s5_tma_pp",
                                           "bf16_gemm_sm90_128x256x64_s4_tma_cn2",
                                           "bf16_gemm_sm90_192x192x64_s4_tma_c2_1slot",
                                           "bf16_gemm_sm90_208x128x64_s4_tma_swap_wn2"),
                         testing::ParamName());

// Batched: C[b] = A[b] · B[b] through 3-D tensor maps (box depth 1), batch walked by the tile loop.
TEST(GemmSm90GpuBatched, MatchesReference) {
  std::string why;
  if (!needHopper(&why)) GTEST_SKIP() << "no Hopper GPU: " << why;
  runtime::Context ctx = runtime::Context::primary(*runtime::Driver::get());
  for (const char* name : {"bf16_gemm_sm90_128x128x64_s6", "bf16_gemm_sm90_64x128x64_s8", "bf16_gemm_sm90_128x128x64_s6_tma",
                           "bf16_gemm_sm90_128x256x64_s4_tma_rs"}) {
    const ops::GemmVariant* v = ops::findGemmBf16Variant(name);
    ASSERT_NE(v, nullptr);
    ir::DiagnosticEngine diag;
    auto kernel = Kernel::build(*examples::batchedGemm(), Target::sm90a(), v->config, diag);
    ASSERT_TRUE(kernel) << diag.str();
    for (Shape s : {Shape{128, 128, 64}, Shape{77, 136, 200}, Shape{256, 64, 96}}) {
      SCOPED_TRACE(std::string(name) + " M=" + std::to_string(s.M) + " N=" + std::to_string(s.N) + " K=" +
                   std::to_string(s.K));
      testing::expectBatchedGemmMatches(*kernel, ctx, 3, s.M, s.N, s.K, 21);
    }
  }
}

// The fused epilogue shared with sm80: C = gelu_tanh(A·B + bias[n]), with direct and TMA stores.
class GemmSm90GpuFused : public ::testing::TestWithParam<std::string> {};

TEST_P(GemmSm90GpuFused, BiasGeluMatchesReference) {
  std::string why;
  if (!needHopper(&why)) GTEST_SKIP() << "no Hopper GPU: " << why;
  runtime::Context ctx = runtime::Context::primary(*runtime::Driver::get());
  const ops::GemmVariant* v = ops::findGemmBf16Variant(GetParam());
  ASSERT_NE(v, nullptr);
  ir::DiagnosticEngine diag;
  auto kernel = Kernel::build(*examples::gemmBiasGelu(), Target::sm90a(), v->config, diag);
  ASSERT_TRUE(kernel) << diag.str();
  testing::expectBiasGeluMatches(*kernel, ctx, 200, 264, 320, 31);
}

INSTANTIATE_TEST_SUITE_P(Variants, GemmSm90GpuFused,
                         ::testing::Values("bf16_gemm_sm90_128x256x64_s4", "bf16_gemm_sm90_128x256x64_s4_tma",
                                           "bf16_gemm_sm90_128x256x64_s4_tma_rs"),
                         [](const auto& info) { return std::string(info.param); });

// The config sweep's draws (tests/unit/schedule/sm90_config_draw.h) on the hardware: the first
// sixteen BF16 configs of its seed that compile for both B layouts, through the checks above. CI
// runs the same draws (and more) in the simulator; this is where the two must agree.
TEST(GemmSm90GpuSweep, DrawnConfigsMatchReferenceAndCublas) {
  std::string why;
  if (!needHopper(&why)) GTEST_SKIP() << "no Hopper GPU: " << why;
  auto configs = sm90draw::firstAccepted(false, 16, [](const std::string& text) {
    Config config = Config::parse(text);
    ir::DiagnosticEngine diag;
    return compile(*examples::gemmBf16(), Target::sm90a(), config, diag) &&
           compile(*examples::gemmKMajorB(), Target::sm90a(), config, diag);
  });
  ASSERT_EQ(configs.size(), 16u);
  for (const std::string& text : configs) {
    SCOPED_TRACE(text);
    matchesReferenceAndCublas(text, Config::parse(text), [](bool kMajor) {
      return kMajor ? examples::gemmKMajorB() : examples::gemmBf16();
    });
  }
}

// The launch contract is checked before anything runs: an N that breaks the 16-byte TMA stride rule.
TEST(GemmSm90GpuLaunch, RejectsBadStridesBeforeLaunching) {
  std::string why;
  if (!needHopper(&why)) GTEST_SKIP() << "no Hopper GPU: " << why;
  const ops::GemmVariant* v = ops::findGemmBf16Variant("bf16_gemm_sm90_128x128x64_s6");
  ASSERT_NE(v, nullptr);
  ir::DiagnosticEngine diag;
  auto kernel = Kernel::build(*v->program(false), Target::sm90a(), v->config, diag);
  ASSERT_TRUE(kernel) << diag.str();
  ir::DiagnosticEngine bad;
  EXPECT_FALSE(kernel->validate({0x10000, 0x20000, 0x40000}, {}, {{"M", 64}, {"N", 60}, {"K", 64}}, bad));
  EXPECT_NE(bad.str().find("N to be a multiple of 8"), std::string::npos) << bad.str();
}

}  // namespace
}  // namespace kiln
