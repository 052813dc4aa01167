// The schedule `kiln run` uses without --config (src/ops/default_schedule.h): a family's pick for
// a GEMM it can run (a grouped one where the pick's tiles fit in its groups), the sm80 default for
// anything else, each saying where it came from.
#include "ops/default_schedule.h"

#include <gtest/gtest.h>

#include "backend/assembler.h"
#include "examples/examples.h"
#include "kiln/compile.h"
#include "kiln/ir/parser.h"
#include "ops/gemm_bf16.h"
#include "ops/fp8_programs.h"
#include "kiln/program_builder.h"
#include "ops/gemm_fp8.h"

namespace kiln::ops {
namespace {

const std::map<std::string, int64_t> k4096 = {{"M", 4096}, {"N", 4096}, {"K", 4096}};

Config fallbackConfig() {
  ir::DiagnosticEngine diag;
  return *Config::parse(kFallbackSchedule, diag);
}

TEST(DefaultSchedule, Bf16GemmTakesTheFamilysPick) {
  auto program = examples::gemmBf16();
  DefaultSchedule d = defaultSchedule(*program->body().front(), Target::sm90a(), k4096);
  ir::DiagnosticEngine diag;
  auto pick = selectGemmBf16({4096, 4096, 4096}, Target::sm90a(), diag);
  ASSERT_TRUE(pick) << diag.str();
  EXPECT_TRUE(d.fromFamily);
  EXPECT_EQ(d.config, pick->variant->config);
  EXPECT_EQ(d.config.strategy, "sm90_ws_persistent");
  EXPECT_EQ(d.why, "gemm_bf16's pick for M=4096, N=4096, K=4096: " + pick->str());
  // The same program on sm_80 takes the family's sm80 pick.
  d = defaultSchedule(*program->body().front(), Target::sm80(), k4096);
  EXPECT_TRUE(d.fromFamily);
  EXPECT_EQ(d.config.strategy, "sm80_multistage");
}

TEST(DefaultSchedule, Fp8GemmTakesAPromotingPick) {
  auto program = examples::fp8RowwiseGemm();
  const std::map<std::string, int64_t> dims = {{"M", 8192}, {"N", 8192}, {"K", 8192}};
  DefaultSchedule d = defaultSchedule(*program->body().front(), Target::sm90a(), dims);
  ir::DiagnosticEngine diag;
  auto pick = selectGemmFp8({8192, 8192, 8192}, Target::sm90a(), diag);
  ASSERT_TRUE(pick) << diag.str();
  EXPECT_TRUE(d.fromFamily);
  EXPECT_EQ(d.config, pick->variant->config);
  EXPECT_NE(d.config.fp8Accum, Fp8Accum::Fast);
  EXPECT_EQ(d.why.rfind("gemm_fp8's pick for M=8192, N=8192, K=8192: " + pick->variant->name + " (heuristic, score ", 0),
            0u)
      << d.why;
  // No FP8 family on sm_80 (it needs wgmma): the fallback, with the family's reason.
  d = defaultSchedule(*program->body().front(), Target::sm80(), dims);
  EXPECT_FALSE(d.fromFamily);
  EXPECT_EQ(d.config, fallbackConfig());
  EXPECT_NE(d.why.find("no gemm_fp8 variant can run this problem on sm_80"), std::string::npos) << d.why;
}

// Every FP8 scaling mode and operand format the family runs is picked from it, not the sm80
// default: block scales (tile.dot_scaled) are read by sm90's analysis, which alone lowers them.
TEST(DefaultSchedule, EveryFp8ModeAndFormatTakesTheFamilysPick) {
  using S = Fp8Scaling;
  for (S mode : {S::Tensorwise, S::Rowwise, S::Block1x128x128x128, S::Block1x128x1x128})
    for (ir::ScalarType a : {ir::ScalarType::F8E4M3, ir::ScalarType::F8E5M2}) {
      auto module = fp8GemmProgram({mode, a, ir::ScalarType::F8E4M3, ir::ScalarType::BF16}, "fp8");
      DefaultSchedule d = defaultSchedule(*module->body().front(), Target::sm90a(), {{"M", 264}, {"N", 392}, {"K", 4096}});
      EXPECT_TRUE(d.fromFamily) << fp8ScalingName(mode) << " " << ir::scalarName(a) << ": " << d.why;
      EXPECT_EQ(d.config.strategy, "sm90_ws_persistent") << d.why;
    }
}

// The family's 128x128 promote_pairs tile loads its epilogue's scales before the K loop (36
// values a thread beside 192 sums); a program whose epilogue reads more (a bias) or stores f32
// takes the same pick prefetching them instead (forEpilogueLoads), and every one of them
// assembles spill-free. Without the adaptation the bias program spills 136 bytes, the f32 one 24.
TEST(DefaultSchedule, Fp8PairsTileLoadsEarlyWhereItsScalesFit) {
  using S = ir::ScalarType;
  const std::map<std::string, int64_t> dims = {{"M", 4096}, {"N", 24576}, {"K", 1536}};
  auto withBias = [] {
    ProgramBuilder p("fp8_rowwise_bias");
    auto [M, N, K] = p.dims("M", "N", "K");
    auto A = p.input("A", f8e4m3, {M, K});
    auto B = p.input("B", f8e4m3, {K, N}, /*order=*/{0, 1});
    auto SA = p.input("scale_a", f32, {M});
    auto SB = p.input("scale_b", f32, {N});
    auto bias = p.input("bias", f32, {N});
    auto C = p.output("C", bf16, {M, N});
    p.tile({M, N}, [&](Coord m, Coord n) {
      Tile acc = p.zeros(f32, {m, n});
      p.reduce(K, [&](Coord k) { acc = dot(A(m, k), B(k, n), acc); });
      C(m, n) = cast(bf16, scale(scale(acc, SA(m)), SB(n)) + bias(n));
    });
    return p.finish();
  };
  struct Case {
    std::string what;
    std::unique_ptr<ir::Module> program;
    EpilogueLoads loads;
  };
  std::vector<Case> cases;
  cases.push_back({"rowwise", fp8GemmProgram({Fp8Scaling::Rowwise}, "fp8"), EpilogueLoads::Early});
  cases.push_back({"tensorwise", fp8GemmProgram({Fp8Scaling::Tensorwise}, "fp8"), EpilogueLoads::Early});
  cases.push_back({"rowwise, f32 out", fp8GemmProgram({Fp8Scaling::Rowwise, S::F8E4M3, S::F8E4M3, S::F32}, "fp8"),
                   EpilogueLoads::Prefetch});
  cases.push_back({"rowwise with a bias", withBias(), EpilogueLoads::Prefetch});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    DefaultSchedule d = defaultSchedule(*c.program->body().front(), Target::sm90a(), dims);
    ASSERT_TRUE(d.fromFamily) << d.why;
    EXPECT_EQ(d.variant, "fp8_gemm_sm90_128x128x128_s6_tma_pairs") << d.why;
    EXPECT_EQ(d.config.fp8Accum, Fp8Accum::PromotePairs);
    EXPECT_EQ(d.config.epilogueLoads, c.loads);
    ir::DiagnosticEngine diag;
    auto r = compile(*c.program, Target::sm90a(), d.config, diag);
    ASSERT_TRUE(r) << diag.str();
    auto cubin = backend::assemble(r->ptx, Target::sm90a().ptxTarget, diag);
    ASSERT_TRUE(cubin) << diag.str();
    EXPECT_FALSE(cubin->resources.begin()->second.spills()) << cubin->resources.begin()->second.str();
  }
}

TEST(DefaultSchedule, OtherProgramsTakeAFallbackOrRowwise) {
  DefaultSchedule d;
  // A grouped GEMM (groups of 64 rows): the pick where its tiles fit in them (64-row tiles at
  // M = 64), the fallback where they are taller (a 128-row pick at 4096^3).
  auto grouped = examples::groupedGemm();
  d = defaultSchedule(*grouped->body().front(), Target::sm90a(), {{"G", 4}, {"M", 64}, {"N", 5120}, {"K", 5120}});
  EXPECT_TRUE(d.fromFamily) << d.why;
  EXPECT_EQ(64 % (d.config.bm * d.config.clusterM), 0) << d.config.str();
  // The fallback is fitted to the groups: bm=64 (the plain default's 128 straddles two groups of
  // 64 rows, which the lowering refuses, so `kiln run --example grouped_gemm` failed), and it
  // compiles on every target.
  for (const Target& t : {Target::sm80(), Target::sm89(), Target::sm90a()}) {
    d = defaultSchedule(*grouped->body().front(), t, {{"G", 4}, {"M", 4096}, {"N", 1024}, {"K", 1024}});
    EXPECT_FALSE(d.fromFamily);
    Config expected = fallbackConfig();
    expected.bm = 64;
    EXPECT_EQ(d.config, expected) << d.config.str();
    EXPECT_NE(d.why.find("the sm80 default with bm=64 (warps_m=2), so no block straddles two groups"), std::string::npos)
        << d.why;
    ir::DiagnosticEngine diag;
    EXPECT_TRUE(compile(*grouped, t, d.config, diag)) << t.name << ": " << diag.str();
  }
  d = defaultSchedule(*grouped->body().front(), Target::sm90a(), {{"G", 4}, {"M", 4096}, {"N", 4096}, {"K", 4096}});
  EXPECT_EQ(d.why.rfind("a grouped GEMM whose groups ({align = 64}) are shorter than the rows of gemm_bf16's pick, ", 0),
            0u)
      << d.why;
  // Not a GEMM at all: the rowwise family's pick (tests/unit/ops/rowwise_test.cpp has more).
  ir::DiagnosticEngine diag;
  auto copy = ir::parseModule(R"(
tile.program() {sym_name = "copy", dims = ["M", "N"]} {
  %X = tile.input() {name = "X"} : tensor<bf16, [M, N]>
  %Y = tile.output() {name = "Y"} : tensor<bf16, [M, N]>
  tile.for_tiles() {dims = ["M", "N"]} {
  ^bb0(%m: coord<[M]>, %n: coord<[N]>):
    %0 = tile.load(%X, %m, %n) : tile<bf16, [M, N]>
    tile.store(%Y, %m, %n, %0)
    tile.yield()
  }
}
)", diag);
  ASSERT_TRUE(copy) << diag.str();
  d = defaultSchedule(*copy->body().front(), Target::sm90a(), {{"M", 64}, {"N", 64}});
  EXPECT_TRUE(d.fromFamily);
  EXPECT_EQ(d.config.strategy, "rowwise");
  EXPECT_EQ(d.family, "rowwise");
  EXPECT_FALSE(d.variant.empty());
  EXPECT_EQ(d.why.rfind("rowwise's pick for M=64, N=64: row_t", 0), 0u) << d.why;
}

}  // namespace
}  // namespace kiln::ops
