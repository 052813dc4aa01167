// The GEMM option space kiln tune generates: every config the strategy accepts, none twice, within
// the limit; tile sizes fitted to the problem; split-K only where the slices fit one wave and keep
// whole K steps; stream-K only where a wave is partial; what the program's numerics and output
// allow (an f32 output's TMA store staged by pairs, never stmatrix; FP8 keeps its accumulation); sm80 configs on a
// target without wgmma.
#include "tune/gemm_space.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "examples/examples.h"
#include "kiln/program_builder.h"

namespace kiln::tuning {
namespace {

GemmShape bf16(int64_t m, int64_t n, int64_t k) {
  GemmShape g;
  g.m = m, g.n = n, g.k = k, g.sms = 132;
  return g;
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

TEST(TuneGemmSpace, EveryConfigIsValidAndNoneRepeats) {
  for (const GemmShape& g : {bf16(1024, 480, 352), bf16(8192, 8192, 8192), bf16(336, 1024, 4064)}) {
    SpaceStats stats;
    auto space = gemmSpace(g, Target::sm90a(), 200, &stats);
    ASSERT_FALSE(space.empty());
    EXPECT_LE(space.size(), 200u);
    EXPECT_EQ(stats.kept, int(space.size()));
    EXPECT_EQ(stats.generated, stats.invalid + stats.pruned + stats.kept);
    EXPECT_GT(stats.invalid, 0);  // the strategy's rules refuse some (registers, shared memory)
    std::set<std::string> lines;
    for (const Candidate& c : space) {
      ir::DiagnosticEngine diag;
      EXPECT_TRUE(validate(c.config, Target::sm90a(), {2, 2}, diag)) << c.config.str() << "\n" << diag.str();
      EXPECT_TRUE(lines.insert(c.config.str()).second) << "twice: " << c.config.str();
      EXPECT_EQ(c.origin, "space: " + spaceClass(c.config));
      EXPECT_GT(c.score, 0);
    }
    for (size_t i = 1; i < space.size(); ++i) EXPECT_GE(space[i - 1].score, space[i].score);
  }
}

TEST(TuneGemmSpace, TileSizesFitTheProblem) {
  // M = 544: four swapped tiles of 136 rows, where 128-row tiles need five (the last a quarter
  // full); N = 480: three 160-column tiles.
  auto space = gemmSpace(bf16(544, 480, 2072), Target::sm90a(), 1000);
  bool rows136 = false, cols160 = false;
  for (const Candidate& c : space) {
    rows136 = rows136 || (c.config.swapAB && c.config.bm == 136);
    cols160 = cols160 || (!c.config.swapAB && c.config.bn == 160);
  }
  EXPECT_TRUE(rows136);
  EXPECT_TRUE(cols160);
}

TEST(TuneGemmSpace, SplitKFillsOneWaveWithWholeSlices) {
  const GemmShape g = bf16(336, 1024, 4064);
  int split = 0;
  for (const Candidate& c : gemmSpace(g, Target::sm90a(), 1000)) {
    const Config& x = c.config;
    if (x.splitK <= 1) continue;
    ++split;
    const int64_t tiles = ceilDiv(g.m, x.bm) * ceilDiv(g.n, x.bn);
    EXPECT_LE(tiles * x.splitK, g.sms) << x.str();
    EXPECT_GE(ceilDiv(g.k, x.bk) / x.splitK, kMinSliceSteps) << x.str();
    EXPECT_EQ(x.clusterM * x.clusterN, 1) << x.str();
  }
  EXPECT_GT(split, 5);
  // Short K: no slices (352 is six K steps).
  for (const Candidate& c : gemmSpace(bf16(1024, 480, 352), Target::sm90a(), 1000)) EXPECT_EQ(c.config.splitK, 1);
}

TEST(TuneGemmSpace, StreamKOnlyWhereAWaveIsPartial) {
  const GemmShape g = bf16(4096, 4096, 4096);
  int streamK = 0;
  for (const Candidate& c : gemmSpace(g, Target::sm90a(), 1000)) {
    if (!c.config.streamK) continue;
    ++streamK;
    const int64_t tiles = ceilDiv(g.m, c.config.bm) * ceilDiv(g.n, c.config.bn);
    EXPECT_NE(tiles % g.sms, 0) << c.config.str();
    if (c.config.streamK == 2) EXPECT_GT(tiles, g.sms) << c.config.str();
  }
  EXPECT_GT(streamK, 0);
}

TEST(TuneGemmSpace, ClustersShareTheOperandWhoseRowsAreOffSectors) {
  // K = 1608: A's rows (3216 bytes) are off 32-byte sectors, so pairs along N (sharing A) come;
  // with N = 1420 too (B's rows off sectors), 2 x 2 clusters.
  auto has = [](const GemmShape& g, int cm, int cn) {
    for (const Candidate& c : gemmSpace(g, Target::sm90a(), 1000))
      if (c.config.clusterM == cm && c.config.clusterN == cn) return true;
    return false;
  };
  EXPECT_TRUE(has(bf16(1200, 1424, 1608), 2, 1));
  EXPECT_TRUE(has(bf16(1200, 1424, 1608), 1, 2));
  EXPECT_FALSE(has(bf16(1200, 1424, 1608), 2, 2));
  EXPECT_TRUE(has(bf16(1200, 1420, 1608), 2, 2));
  EXPECT_FALSE(has(bf16(1200, 1424, 1600), 1, 2));
}

// C f32 [M, N] = A bf16 [M, K] · B bf16 [K, N].
std::unique_ptr<ir::Module> f32OutputGemm() {
  ProgramBuilder p("gemm_f32_out");
  auto [M, N, K] = p.dims("M", "N", "K");
  Tensor A = p.input("A", ir::ScalarType::BF16, {M, K});
  Tensor B = p.input("B", ir::ScalarType::BF16, {K, N});
  Tensor C = p.output("C", ir::ScalarType::F32, {M, N});
  p.tile({M, N}, [&](Coord m, Coord n) {
    Tile acc = p.zeros(ir::ScalarType::F32, {m, n});
    p.reduce(K, [&](Coord k) { acc = dot(A(m, k), B(k, n), acc); });
    C(m, n) = acc;
  });
  return p.finish();
}

// An f32 output: the TMA-store epilogue staged by st.shared.v2 pairs, its ring sized for the f32
// boxes (32 columns: a 64-column tile stages two slots where bf16 stages one); stmatrix staging
// (swap_ab's transposed tiles) refused before compiling with the config rules' sentence.
TEST(TuneGemmSpace, AnF32OutputStagesPairsAndRefusesStmatrix) {
  auto program = f32OutputGemm();
  std::string why;
  auto g = gemmShapeOf(*program->body().front(), Target::sm90a(), {{"M", 2048}, {"N", 2048}, {"K", 2048}}, 132, &why);
  ASSERT_TRUE(g) << why;
  EXPECT_EQ(g->cElemBytes, 4);
  SpaceStats stats;
  auto space = gemmSpace(*g, Target::sm90a(), 1000, &stats);
  ASSERT_FALSE(space.empty());
  int tma = 0, narrowTma = 0;
  for (const Candidate& c : space) {
    if (c.config.strategy != "sm90_ws_persistent") continue;
    // The compiler's own check for this program's operands and output, ring depth included.
    ir::DiagnosticEngine diag;
    EXPECT_TRUE(validate(c.config, Target::sm90a(), {2, 2, 4}, diag)) << c.config.str() << "\n" << diag.str();
    if (c.config.epilogue != EpilogueStore::Tma) continue;
    ++tma;
    narrowTma += c.config.bn == 64;
    EXPECT_EQ(c.config.stageStore, StageStore::Pairs) << c.config.str();
    EXPECT_FALSE(c.config.swapAB) << c.config.str();
  }
  EXPECT_GT(tma, 10);
  EXPECT_GT(narrowTma, 0);
  // Every stmatrix config refused: for the f32 output's sentence, or where a bf16 output's rules
  // refuse it too (registers, shared memory), for theirs.
  int stmatrix = 0;
  const std::string sentence =
      "error: stage_store=stmatrix moves 16-bit matrices; an f32 output is staged by st.shared.v2 pairs: "
      "use stage_store=pairs";
  for (const auto& [line, reason] : stats.refused) {
    const Config c = Config::parse(line);
    if (c.stageStore != StageStore::Stmatrix) continue;
    EXPECT_TRUE(c.swapAB) << line;
    ir::DiagnosticEngine diag;
    if (reason == sentence) ++stmatrix;
    else EXPECT_FALSE(validate(c, Target::sm90a(), {2, 2, 2}, diag)) << line << ": " << reason;
  }
  EXPECT_GT(stmatrix, 10);
}

TEST(TuneGemmSpace, Fp8KeepsItsAccumulationAndPrefetchesTheScales) {
  auto program = examples::fp8RowwiseGemm();
  std::string why;
  auto g = gemmShapeOf(*program->body().front(), Target::sm90a(), {{"M", 4096}, {"N", 7168}, {"K", 2048}}, 0, &why);
  ASSERT_TRUE(g) << why;
  EXPECT_TRUE(g->fp8);
  EXPECT_EQ(g->elemBytes, 1);
  EXPECT_TRUE(g->epilogueLoads);
  EXPECT_EQ(g->sms, Target::sm90a().referenceSms);
  auto space = gemmSpace(*g, Target::sm90a(), 1000);
  ASSERT_FALSE(space.empty());
  std::set<Fp8Accum> accums;
  for (const Candidate& c : space) {
    if (c.config.strategy != "sm90_ws_persistent") continue;  // sm80's FP8 mma.sync sums in f32 itself
    EXPECT_EQ(c.config.bk, 128);
    accums.insert(c.config.fp8Accum);
    EXPECT_EQ(c.config.epilogueLoads, EpilogueLoads::Prefetch) << c.config.str();
    EXPECT_FALSE(c.config.swapAB) << c.config.str();
  }
  // The family's promoted sums, one K step at a time or two; never the tensor cores' own.
  EXPECT_EQ(accums, (std::set<Fp8Accum>{Fp8Accum::Promote, Fp8Accum::PromotePairs}));
  g->fp8Accum = Fp8Accum::Fast;
  for (const Candidate& c : gemmSpace(*g, Target::sm90a(), 1000))
    if (c.config.strategy == "sm90_ws_persistent") EXPECT_EQ(c.config.fp8Accum, Fp8Accum::Fast);
}

TEST(TuneGemmSpace, AGroupedGemmsTilesStayInsideItsGroups) {
  auto program = examples::groupedGemm();
  std::string why;
  auto g = gemmShapeOf(*program->body().front(), Target::sm90a(), {{"M", 4096}, {"N", 4096}, {"K", 4096}, {"G", 8}},
                       0, &why);
  ASSERT_TRUE(g) << why;
  ASSERT_GT(g->groupAlign, 0);
  auto space = gemmSpace(*g, Target::sm90a(), 1000);
  ASSERT_FALSE(space.empty());
  for (const Candidate& c : space) EXPECT_EQ(g->groupAlign % (int64_t(c.config.bm) * c.config.clusterM), 0);
}

TEST(TuneGemmSpace, ATargetWithoutWgmmaGetsSm80Configs) {
  auto space = gemmSpace(bf16(2048, 2048, 2048), Target::sm80(), 1000);
  ASSERT_FALSE(space.empty());
  for (const Candidate& c : space) {
    EXPECT_EQ(c.config.strategy, "sm80_multistage");
    ir::DiagnosticEngine diag;
    EXPECT_TRUE(validate(c.config, Target::sm80(), {2, 2}, diag)) << c.config.str() << "\n" << diag.str();
  }
}

TEST(TuneGemmSpace, Sm90aGetsTheBestTwoSm80TilesOfEachWarpGrid) {
  std::map<std::string, int> grids;
  // A realistic limit: the sm90 tiles with their schedules fill it before any other sm80 tile.
  for (const Candidate& c : gemmSpace(bf16(1024, 480, 352), Target::sm90a(), 180))
    if (c.config.strategy == "sm80_multistage") ++grids[spaceClass(c.config)];
  EXPECT_GE(grids.size(), 4u);
  for (const auto& [grid, n] : grids) EXPECT_EQ(n, kPerClass) << grid;
}

TEST(TuneGemmSpace, OneWarpgroupTilesAlsoRunTwoPerSm) {
  int two = 0;
  for (const Candidate& c : gemmSpace(bf16(1200, 1424, 1608), Target::sm90a(), 1000)) {
    if (c.config.blocksPerSm != 2) continue;
    ++two;
    EXPECT_EQ(c.config.warpsM * c.config.warpsN, 1) << c.config.str();
    EXPECT_EQ(c.config.clusterM * c.config.clusterN, 1) << c.config.str();
    EXPECT_LE(2 * (sm90Shape(c.config, 2).smemBytes + 1024), Target::sm90a().smemPerSm) << c.config.str();
    // The deepest ring that leaves room for the second block.
    Config deeper = c.config;
    ++deeper.stages;
    EXPECT_GT(2 * (sm90Shape(deeper, 2).smemBytes + 1024), Target::sm90a().smemPerSm) << c.config.str();
  }
  EXPECT_GT(two, 5);
}

TEST(TuneGemmSpace, AProgramThatIsNotAGemmHasNoShape) {
  auto softmax = examples::find("softmax")->build();
  std::string why;
  EXPECT_FALSE(gemmShapeOf(*softmax->body().front(), Target::sm90a(), {{"M", 64}, {"N", 64}}, 0, &why));
  EXPECT_EQ(why.rfind("not a GEMM: ", 0), 0u) << why;
}

}  // namespace
}  // namespace kiln::tuning
