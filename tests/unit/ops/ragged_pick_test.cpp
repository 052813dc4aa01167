// The ragged grouped GEMM through the families (docs/grouped-gemm.md): for each layout the sm90
// can walk (offsets, counts) and operand type (BF16; FP8 with 1x128 x 128x128 block scales), the
// schedule Kiln picks (ops::defaultSchedule, what kiln.ops.grouped_mm and kiln_grouped_bench
// use) is a variant that walks ragged groups (no cluster or split), and it compiles for sm_90a and assembles with no
// spills or stack frame. The configs that cannot walk them are not eligible, saying why.
#include <gtest/gtest.h>

#include "backend/assembler.h"
#include "kiln/compile.h"
#include "kiln/target.h"
#include "ops/default_schedule.h"
#include "ops/gemm_bf16.h"
#include "ops/gemm_fp8.h"
#include "ops/grouped_programs.h"
#include "schedule/gemm_analysis.h"

namespace kiln::ops {
namespace {

using L = GroupedGemmSpec::Layout;
using ir::ScalarType;

TEST(RaggedPick, EveryLayoutPicksAVariantThatWalksTheGroups) {
  struct Case {
    L layout;
    ScalarType t;
    std::map<std::string, int64_t> dims;
  };
  const Case cases[] = {
      {L::Offsets, ScalarType::BF16, {{"G", 8}, {"M", 10240}, {"N", 4096}, {"K", 7168}}},
      {L::Offsets, ScalarType::BF16, {{"G", 8}, {"M", 12416}, {"N", 4096}, {"K", 7168}}},  // stream-K
      {L::Offsets, ScalarType::F8E4M3, {{"G", 8}, {"M", 10240}, {"N", 4096}, {"K", 7168}}},
      {L::Offsets, ScalarType::BF16, {{"G", 4}, {"M", 96}, {"N", 512}, {"K", 1024}}},
      {L::Masked, ScalarType::BF16, {{"G", 8}, {"M", 256}, {"N", 4096}, {"K", 7168}}},
      {L::Masked, ScalarType::F8E4M3, {{"G", 8}, {"M", 2048}, {"N", 4096}, {"K", 7168}}},
      // A capacity off the 128-row tile: kiln_grouped_bench's masked case and the GPU test's.
      {L::Masked, ScalarType::F8E4M3, {{"G", 4}, {"M", 208}, {"N", 4096}, {"K", 7168}}},
      {L::Masked, ScalarType::F8E4M3, {{"G", 4}, {"M", 208}, {"N", 4096}, {"K", 1024}}},
  };
  for (const Case& c : cases) {
    auto module = groupedGemmProgram({c.layout, c.t, ScalarType::BF16}, "moe");
    const ir::Operation& program = *module->body().front();
    const DefaultSchedule pick = defaultSchedule(program, Target::sm90a(), c.dims);
    SCOPED_TRACE(pick.why);
    ASSERT_TRUE(pick.fromFamily);
    EXPECT_EQ(pick.family, c.t == ScalarType::BF16 ? "gemm_bf16" : "gemm_fp8");
    EXPECT_EQ(raggedWalkConflict(pick.config), "");
    ir::DiagnosticEngine diag;
    auto r = compile(*module, Target::sm90a(), pick.config, diag);
    ASSERT_TRUE(r) << diag.str();
    auto cubin = backend::assemble(r->ptx, Target::sm90a().ptxTarget, diag);
    ASSERT_TRUE(cubin) << diag.str();
    const auto& report = cubin->resources.begin()->second;
    EXPECT_EQ(report.stackFrameBytes, 0);
    EXPECT_EQ(report.spillStoreBytes + report.spillLoadBytes, 0);
  }
}

// The last wave (docs/grouped-gemm.md, ops/ragged_waves.h): the MoE forward's groups (12416 rows
// in 8 groups, N = 4096, K = 7168) are expected to make 101 tile rows of 128, 1616 tiles of
// 128x256, 12.24 waves of 132: data-parallel 13, stream-K over the last one 12.42, so the pick is
// the stream-K twin; the dense problem of the same rows (1552 tiles, 11.76 waves) keeps its
// data-parallel pick, and so does the ragged one at K = 1024, where a run's fill and hand-over (~20
// K steps of 16) cost more than the partial wave.
TEST(RaggedPick, TheLastPartialWaveGoesToStreamKWhereItPays) {
  auto pickOf = [](bool ragged, int64_t k) {
    auto module = ragged ? groupedGemmProgram({L::Offsets, ScalarType::BF16, ScalarType::BF16}, "moe") : nullptr;
    std::map<std::string, int64_t> dims = {{"G", 8}, {"M", 12416}, {"N", 4096}, {"K", k}};
    if (ragged) return defaultSchedule(*module->body().front(), Target::sm90a(), dims);
    GemmProblem p{12416, 4096, k, ScalarType::BF16, ScalarType::BF16, ScalarType::BF16};
    ir::DiagnosticEngine diag;
    auto sel = selectGemmBf16(p, Target::sm90a(), diag);
    DefaultSchedule d;
    d.variant = sel ? sel->variant->name : diag.str();
    return d;
  };
  EXPECT_EQ(pickOf(true, 7168).variant, "bf16_gemm_sm90_128x256x64_s4_tma_g16_streamk1") << pickOf(true, 7168).why;
  EXPECT_EQ(pickOf(false, 7168).variant, "bf16_gemm_sm90_128x256x64_s4_tma_rs_g16");
  EXPECT_EQ(pickOf(true, 1024).variant.find("streamk"), std::string::npos) << pickOf(true, 1024).variant;
  // The masked layout walks the same way (its tiles counted from the counts): 8 experts of a
  // capacity of 1552 rows (12416 in all), the same expected tiles and the same pick.
  auto masked = groupedGemmProgram({L::Masked, ScalarType::BF16, ScalarType::BF16}, "moe");
  EXPECT_EQ(defaultSchedule(*masked->body().front(), Target::sm90a(), {{"G", 8}, {"M", 1552}, {"N", 4096}, {"K", 7168}})
                .variant,
            "bf16_gemm_sm90_128x256x64_s4_tma_g16_streamk1");
  // Groups along K never take stream-K (a unit runs its group's K steps).
  GemmProblem kg{7168, 4096, 12416, ScalarType::BF16, ScalarType::BF16, ScalarType::BF16};
  kg.ragged = kg.raggedK = true;
  std::string why;
  const GemmVariant* sk = findGemmBf16Variant("bf16_gemm_sm90_128x256x64_s4_tma_streamk1");
  ASSERT_NE(sk, nullptr);
  EXPECT_FALSE(sk->eligible(kg, Target::sm90a(), &why));
  EXPECT_EQ(why, "the problem has ragged groups, which it cannot walk: they need split_k=1 stream_k=0: a unit runs its "
                 "group's K steps");
}

// Groups along K (the weight gradient, f32 [G, M, N]): each tile runs only its group's ~T / (G bk)
// K steps, so the f32 tile's store weighs ~8x more than in the dense GEMM (kGroupedTerm). Ping-pong
// was predicted to hide it under the other warpgroup's K loop; GPU run 11 (H100) measured the
// ping-pong 128x128 at 1.840 ms against the cooperative 128x256's 1.397 at the MoE shape, so the
// pick stays the cooperative 128x256 with the TMA store, and ping-pong ranks below it along K as in
// the dense problem.
TEST(RaggedPick, GroupsAlongKKeepTheCooperativeTileThatRunMeasuredFastest) {
  auto wgrad = groupedGemmProgram({L::GroupsAlongK, ScalarType::BF16, ScalarType::F32}, "wgrad");
  auto pick = [&](int64_t g, int64_t tokens) {
    return defaultSchedule(*wgrad->body().front(), Target::sm90a(), {{"G", g}, {"M", 7168}, {"N", 4096}, {"K", tokens}});
  };
  const DefaultSchedule moe = pick(8, 12416);
  EXPECT_EQ(moe.config.consumers, Consumers::Cooperative) << moe.variant << ": " << moe.why;
  EXPECT_EQ(moe.config.bm, 128) << moe.variant;
  EXPECT_EQ(moe.config.bn, 256) << moe.variant;
  EXPECT_EQ(moe.config.epilogue, EpilogueStore::Tma) << moe.variant;
  const DefaultSchedule longGroups = pick(2, 131072);
  EXPECT_EQ(longGroups.config.consumers, Consumers::Cooperative) << longGroups.why;
  GemmProblem dense{7168, 4096, 12416, ScalarType::BF16, ScalarType::BF16, ScalarType::BF16};
  GemmProblem kg = dense;
  kg.ragged = kg.raggedK = true, kg.groups = 8, kg.cElemBytes = 4;
  const GemmVariant* pp = findGemmBf16Variant("bf16_gemm_sm90_128x128x64_s5_tma_pp");
  const GemmVariant* coop = findGemmBf16Variant("bf16_gemm_sm90_128x256x64_s4_tma");
  ASSERT_TRUE(pp && coop);
  EXPECT_LT(pp->preference(dense, Target::sm90a()), coop->preference(dense, Target::sm90a()));
  // Measured 1.32x slower: the preference must say at least 1.2x.
  EXPECT_LT(1.2 * pp->preference(kg, Target::sm90a()), coop->preference(kg, Target::sm90a()));
}

TEST(RaggedPick, VariantsThatCannotWalkTheGroupsSayWhy) {
  GemmProblem p{4096, 4096, 4096, ScalarType::BF16, ScalarType::BF16, ScalarType::BF16};
  p.ragged = true;
  std::string why;
  const GemmVariant* tma = findGemmBf16Variant("bf16_gemm_sm90_128x256x64_s4_tma");
  ASSERT_NE(tma, nullptr);
  EXPECT_TRUE(tma->eligible(p, Target::sm90a(), &why)) << why;
  const GemmVariant* cluster = findGemmBf16Variant("bf16_gemm_sm90_128x256x64_s4_tma_c2");
  ASSERT_NE(cluster, nullptr);
  EXPECT_FALSE(cluster->eligible(p, Target::sm90a(), &why));
  EXPECT_EQ(why, "the problem has ragged groups, which it cannot walk: they need cluster_m=1 cluster_n=1: the tiles "
                 "of a cluster may lie in different groups");
  Fp8GemmProblem f{4096, 4096, 4096};
  f.ragged = true;
  f.scaling = Fp8Scaling::Block1x128x128x128;
  int walkers = 0, refused = 0;
  for (const auto& v : gemmFp8Variants()) {
    if (v.eligible(f, Target::sm90a())) {
      EXPECT_EQ(raggedWalkConflict(v.config), "") << v.name;
      ++walkers;
    } else if (!raggedWalkConflict(v.config).empty()) {
      ++refused;
    }
  }
  EXPECT_GE(walkers, 2);
  EXPECT_GE(refused, 1);  // the clusters and split-K variants
}

}  // namespace
}  // namespace kiln::ops
