// The candidates kiln tune considers: the family's variants that run the program, best first, the
// family's pick first of all, the one-step neighbours of the best few, and the generated space,
// without duplicates.
#include "tune/candidates.h"

#include <gtest/gtest.h>

#include <set>

#include "examples/examples.h"
#include "kiln/program_builder.h"
#include "kiln/select.h"
#include "ops/default_schedule.h"

namespace kiln::tuning {
namespace {

const std::map<std::string, int64_t> kSquare{{"M", 4096}, {"N", 4096}, {"K", 4096}};

TEST(TuneCandidates, TheFamilysPickComesFirstAndNothingRepeats) {
  auto m = examples::gemmBf16();
  const ir::Operation& program = *m->body().front();
  std::string why;
  auto c = candidates(program, Target::sm90a(), kSquare, &why);
  ASSERT_FALSE(c.empty()) << why;
  EXPECT_EQ(c.front().config.str(), select(*m, Target::sm90a(), kSquare).config);
  std::set<std::string> lines;
  for (const auto& x : c) EXPECT_TRUE(lines.insert(x.config.str()).second) << "twice: " << x.config.str();
  for (size_t i = 2; i < c.size(); ++i) EXPECT_GE(c[i - 1].score, c[i].score);
  EXPECT_LE(c.size(), size_t(kDefaultMaxCandidates));
  // The neighbours of the best variants are there, ranked just below their parent.
  size_t neighbours = 0;
  for (const auto& x : c) neighbours += x.origin.rfind("neighbour of ", 0) == 0;
  EXPECT_GE(neighbours, 4u);
  EXPECT_EQ(c.back().origin, "sm80 default");
}

TEST(TuneCandidates, OnlyVariantsThatRunTheProblem) {
  auto m = examples::gemmBf16();
  std::string why;
  // sm_80: no sm90_ws_persistent variant is eligible there.
  for (const auto& x : candidates(*m->body().front(), Target::sm80(), kSquare, &why))
    EXPECT_NE(x.config.strategy, "sm90_ws_persistent") << x.origin;
}

TEST(TuneCandidates, NeighboursChangeOneOptionByOneStep) {
  Config c = Config::parse(
      "strategy=sm90_ws_persistent bm=128 bn=256 bk=64 stages=4 warps_m=2 warps_n=1 raster=grouped group_m=16");
  auto n = neighbours(c);
  std::set<std::string> what;
  for (const auto& [cfg, w] : n) {
    what.insert(w);
    int changed = (cfg.stages != c.stages) + (cfg.groupM != c.groupM) + (cfg.clusterM != c.clusterM);
    EXPECT_EQ(changed, 1) << w;
  }
  EXPECT_TRUE(what.count("stages 4 -> 3"));
  EXPECT_TRUE(what.count("stages 4 -> 5"));
  EXPECT_TRUE(what.count("group_m 16 -> 8"));
  EXPECT_TRUE(what.count("cluster_m 1 -> 2"));
  EXPECT_TRUE(neighbours(Config::parse("strategy=rowwise")).empty());
}

TEST(TuneCandidates, ARowwiseProgramGetsRowwiseVariantsOnly) {
  auto rows = examples::find("softmax");
  ASSERT_NE(rows, nullptr);
  auto sm = rows->build();
  std::string why;
  auto c = candidates(*sm->body().front(), Target::sm90a(), {{"M", 4096}, {"N", 4096}}, &why);
  ASSERT_FALSE(c.empty()) << why;
  for (const auto& x : c) EXPECT_EQ(x.config.strategy, "rowwise");
  EXPECT_EQ(c.front().config.str(), select(*sm, Target::sm90a(), {{"M", 4096}, {"N", 4096}}).config);
}

TEST(TuneCandidates, AProgramNoFamilyRunsSaysWhy) {
  ProgramBuilder p("gemm_two_outputs");
  auto [M, N, K] = p.dims("M", "N", "K");
  auto A = p.input("A", bf16, {M, K});
  auto B = p.input("B", bf16, {K, N});
  auto C = p.output("C", bf16, {M, N});
  auto D = p.output("D", f32, {M, N});
  p.tile({M, N}, [&](Coord m, Coord n) {
    Tile acc = p.zeros(f32, {m, n});
    p.reduce(K, [&](Coord k) { acc = dot(A(m, k), B(k, n), acc); });
    C(m, n) = cast(bf16, acc);
    D(m, n) = acc;
  });
  auto m = p.finish();
  std::string why;
  EXPECT_TRUE(candidates(*m->body().front(), Target::sm90a(), kSquare, &why).empty());
  EXPECT_EQ(why, "a GEMM with more than one output");
}

}  // namespace
}  // namespace kiln::tuning
