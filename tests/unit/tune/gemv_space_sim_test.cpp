// Every kind of config kiln tune's gemv space hands to the GPU (tune/gemv_space.h) computes the
// product in the kern IR simulator against the tile-IR interpreter: one config of each block shape
// (block_threads, bn, row_threads) with the most K slices the space gives it, over a row-major and
// a K-major B, at a small problem of the config's own steps (two tiles along N, the last a sliver;
// K split into slices of about two steps, the last partial). The registered variants' configs are
// simulated by tests/unit/schedule/gemv_split_functional_test.cpp; the space combines block widths,
// thread counts and slice counts they never combine.
#include "ops/gemm_bf16.h"
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "kiln/program_builder.h"
#include "tests/unit/testing/sim_run.h"
#include "tune/candidates.h"
#include "tune/gemv_space.h"

namespace kiln::tuning {
namespace {

// The family's own BF16 GEMM program (GemmVariant::program), the one every variant compiles.
std::unique_ptr<ir::Module> gemvProgram(bool bKMajor) { return ops::GemmVariant{"gemv_space_sim", {}}.program(bKMajor); }

TEST(TuneGemvSpaceSim, EveryBlockShapeWithItsMostSlicesComputesTheProduct) {
  int simulated = 0;
  for (bool bK : {false, true}) {
    auto m = gemvProgram(bK);
    const std::map<std::string, int64_t> dims{{"M", 2}, {"N", 1024}, {"K", 2048}};
    std::string why;
    auto all = candidates(*m->body().front(), Target::sm80(), dims, &why);
    ASSERT_FALSE(all.empty()) << why;
    auto g = gemmShapeOf(*m->body().front(), Target::sm80(), dims, 0, &why);
    ASSERT_TRUE(g) << why;
    // The most slices of each block shape.
    std::map<std::tuple<int, int, int>, Config> kinds;
    for (const Candidate& c : gemvSpace(*g, all.front().config, all.front().score, Target::sm80(), 1000)) {
      Config& k = kinds[{c.config.blockThreads, c.config.bn, c.config.rowThreads}];
      if (k.strategy.empty() || c.config.splitK > k.splitK) k = c.config;
    }
    EXPECT_GE(kinds.size(), bK ? 12u : 8u);
    for (const auto& [shape, c] : kinds) {
      // K steps as the lowering counts them (gemv.h): row_threads x V x vectors on the K path,
      // rows of threads x vectors on the N path (V = 8 at align_b=16).
      const int64_t step = bK ? int64_t(c.rowThreads) * 8 * c.vectors : int64_t(c.blockThreads / (c.bn / 8)) * c.vectors;
      const std::map<std::string, int64_t> small{{"M", 2}, {"N", c.bn + 8}, {"K", step * (2 * c.splitK - 1) + 8}};
      SCOPED_TRACE(fmt::format("{} at N={} K={}", c.str(), small.at("N"), small.at("K")));
      testing::SimRun run = testing::simulateAgainstInterpreter(*m, c, Target::sm80(), small, 5);
      EXPECT_EQ(run.error, "");
      ++simulated;
    }
  }
  std::printf("gemv space: %d block shapes simulated\n", simulated);
}

}  // namespace
}  // namespace kiln::tuning
