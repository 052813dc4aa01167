// The gemv option space kiln tune searches where gemm_bf16 picks gemv (tune/gemv_space.h): the
// family's pick among the candidates with K split across blocks up to the bound the tiles per SM
// give, none twice (each its own kernel, so its own compile-cache entry), every candidate
// assembling without spills, and what cannot run pruned before compiling with the reason.
#include "ops/gemm_bf16.h"
#include "tune/gemv_space.h"

#include <gtest/gtest.h>

#include <set>

#include "backend/assembler.h"
#include "backend/sha256.h"
#include "examples/examples.h"
#include "kiln/compile.h"
#include "kiln/program_builder.h"
#include "kiln/select.h"

namespace kiln::tuning {
namespace {

// The family's own BF16 GEMM program (GemmVariant::program), the one every variant compiles.
std::unique_ptr<ir::Module> gemvProgram(bool bKMajor) { return ops::GemmVariant{"gemv_space", {}}.program(bKMajor); }

struct Space {
  Config pick;
  GemmShape shape;
  std::vector<Candidate> cands;
  SpaceStats stats;
};

Space spaceOf(const ir::Module& m, const Target& t, const std::map<std::string, int64_t>& dims) {
  Space s;
  std::string why;
  auto all = candidates(*m.body().front(), t, dims, &why);
  EXPECT_FALSE(all.empty()) << why;
  s.pick = all.front().config;
  auto g = gemmShapeOf(*m.body().front(), t, dims, 0, &why);
  EXPECT_TRUE(g) << why;
  s.shape = *g;
  s.cands = gemvSpace(s.shape, s.pick, all.front().score, t, 1000, &s.stats);
  return s;
}

TEST(TuneGemvSpace, HoldsTheFamilysPickAndSplitsK) {
  auto m = examples::gemmBf16();
  const std::map<std::string, int64_t> dims{{"M", 1}, {"N", 4096}, {"K", 4096}};
  Space s = spaceOf(*m, Target::sm90a(), dims);
  ASSERT_EQ(s.pick.strategy, "gemv");
  EXPECT_EQ(s.pick.str(), select(*m, Target::sm90a(), dims).config);
  ASSERT_FALSE(s.cands.empty());
  EXPECT_EQ(s.cands.front().config.str(), s.pick.str());
  EXPECT_EQ(s.stats.generated, s.stats.invalid + s.stats.pruned + s.stats.kept);
  EXPECT_EQ(s.stats.kept, int(s.cands.size()));
  std::set<std::string> lines;
  std::set<int> splits, widths, threads;
  for (const Candidate& c : s.cands) {
    EXPECT_TRUE(lines.insert(c.config.str()).second) << "twice: " << c.config.str();
    EXPECT_EQ(c.config.strategy, "gemv");
    EXPECT_EQ(c.config.bm, s.pick.bm);
    EXPECT_EQ(c.origin, "space: gemv");
    EXPECT_EQ(gemvRefusal(c.config, s.shape, Target::sm90a()), "") << c.config.str();
    EXPECT_LE(c.config.splitK, gemvMaxSplits(c.config, s.shape, Target::sm90a())) << c.config.str();
    splits.insert(c.config.splitK);
    widths.insert(c.config.bn);
    threads.insert(c.config.blockThreads);
  }
  // 128 tiles of 32 columns: K split up to two waves of resident blocks (4 a SM at 256 threads),
  // 1056 / 128 -> 9 slices, the family's 3 among them.
  EXPECT_GT(s.pick.splitK, 1);
  EXPECT_TRUE(splits.count(s.pick.splitK));
  EXPECT_EQ(*splits.rbegin(), 16);  // 64 tiles of 64 columns at 128 threads
  EXPECT_GE(splits.size(), 6u);
  EXPECT_EQ(widths, (std::set<int>{8, 16, 32, 64}));
  EXPECT_EQ(threads, (std::set<int>{128, 256, 512}));
  // kiln tune's candidates hold them, the pick first.
  std::string why;
  int gemv = 0;
  for (const Candidate& c : candidates(*m->body().front(), Target::sm90a(), dims, &why)) gemv += c.origin == "space: gemv";
  EXPECT_EQ(gemv, int(s.cands.size()) - 1);  // the pick comes as the family's variant
}

TEST(TuneGemvSpace, NoGemvSpaceWhereTheFamilyPicksTensorCores) {
  auto m = examples::gemmBf16();
  std::string why;
  // M = 8 too on sm_90a (gemvPreferredRows: 2 where the sm90 variants run the problem).
  for (int64_t rows : {16, 8})
    for (const Candidate& c : candidates(*m->body().front(), Target::sm90a(), {{"M", rows}, {"N", 4096}, {"K", 4096}}, &why))
      EXPECT_NE(c.origin, "space: gemv") << c.config.str();
}

// Every candidate of two shapes (M = 1 over a row-major B on sm_90a; M = 8 over a K-major B on
// sm_80) assembles without spilling, and each is a kernel of its own (distinct PTX: the compile
// cache's key is the PTX's hash).
TEST(TuneGemvSpace, EveryCandidateAssemblesWithoutSpills) {
  struct Case {
    Target t;
    bool bKMajor;
    std::map<std::string, int64_t> dims;
  };
  for (const Case& k : {Case{Target::sm90a(), false, {{"M", 1}, {"N", 4096}, {"K", 4096}}},
                        Case{Target::sm80(), true, {{"M", 8}, {"N", 1024}, {"K", 2048}}}}) {
    auto m = gemvProgram(k.bKMajor);
    Space s = spaceOf(*m, k.t, k.dims);
    ASSERT_EQ(s.pick.strategy, "gemv");
    EXPECT_GT(s.cands.size(), 20u);
    std::set<std::string> ptxs;
    for (const Candidate& c : s.cands) {
      SCOPED_TRACE(k.t.name + " " + c.config.str());
      ir::DiagnosticEngine diag;
      auto r = kiln::compile(*m, k.t, c.config, diag);
      ASSERT_TRUE(r) << diag.str();
      EXPECT_TRUE(ptxs.insert(backend::toHex(backend::Sha256::of(r->ptx))).second) << "the same PTX as another";
      auto cubin = backend::assemble(r->ptx, k.t.ptxTarget, diag);
      ASSERT_TRUE(cubin) << diag.str();
      const auto& rep = cubin->resources.begin()->second;
      EXPECT_FALSE(rep.spills()) << rep.str();
      EXPECT_EQ(rep.stackFrameBytes, 0) << rep.str();
    }
  }
}

TEST(TuneGemvSpace, WhatCannotRunIsPrunedWithItsReason) {
  GemmShape g;
  g.m = 16, g.n = 4096, g.k = 4096, g.sms = 132;
  const Target t = Target::sm90a();
  // bm = 16 rows of sums over 8 columns a thread: 172 registers, more than 512 threads leave.
  const Config heavy = Config::parse("strategy=gemv bm=16 bn=64 block_threads=512 vectors=1");
  EXPECT_EQ(gemvRefusal(heavy, g, t),
            "needs about 172 registers a thread (bm=16 rows of sums, 1 loads of B in flight), over the 128 that "
            "block_threads=512 leaves each");
  EXPECT_EQ(gemvRefusal(Config::parse("strategy=gemv bm=16 bn=64 block_threads=256 vectors=1"), g, t), "");
  EXPECT_EQ(gemvRefusal(Config::parse("strategy=gemv bm=1 bn=24 block_threads=256"), g, t),
            "bn=24 is not 8 columns (one load) times a power of two up to 32");
  EXPECT_EQ(gemvRefusal(Config::parse("strategy=gemv bm=1 bn=64 block_threads=256 split_k=64"), GemmShape{1, 4096, 256}, t),
            "split_k=64 is more slices than K's 2 steps of 128");
  const std::string invalid = gemvRefusal(Config::parse("strategy=gemv bm=1 bn=64 block_threads=96"), g, t);
  EXPECT_NE(invalid.find("bn=64 has 8 slices of 8 columns, which the 3 warps of block_threads=96 cannot share evenly"),
            std::string::npos)
      << invalid;
  // The space around a bm = 16 config refuses its 512-thread blocks, saying why.
  SpaceStats stats;
  auto space = gemvSpace(g, Config::parse("strategy=gemv bm=16 bn=32 block_threads=256 vectors=1"), 1, t, 1000, &stats);
  EXPECT_FALSE(space.empty());
  ASSERT_FALSE(stats.refused.empty());
  EXPECT_EQ(stats.invalid, int(stats.refused.size()));
  for (const auto& [line, why] : stats.refused) {
    EXPECT_NE(line.find("block_threads=512"), std::string::npos) << line;
    EXPECT_EQ(why.rfind("needs about ", 0), 0u) << line << ": " << why;
  }
  for (const Candidate& c : space) EXPECT_NE(c.config.blockThreads, 512) << c.config.str();
}

}  // namespace
}  // namespace kiln::tuning
