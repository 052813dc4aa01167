// The stream-K walk's contract (kern_ops.h, kern.tile_loop {stream_k = W}), checked on the
// simulator's reading of it over many grids: every (tile, K step) is run exactly once; a block
// contributes at most one partial sum; each contribution is consumed by exactly one finisher, which
// waits only on lower blocks; `done` is the K steps the block ran before the unit; the
// data-parallel waves leave the last W (or none, when the tiles fill whole waves) to the runs.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "tests/unit/testing/ws_sim.h"

namespace kiln::testing {
namespace {

struct Grid {
  int64_t tiles, ktiles, blocks, w;
};

void checkWalk(const Grid& g) {
  SCOPED_TRACE("tiles " + std::to_string(g.tiles) + ", ktiles " + std::to_string(g.ktiles) + ", blocks " +
               std::to_string(g.blocks) + ", W " + std::to_string(g.w));
  std::map<std::pair<int64_t, int64_t>, int> runs;  // (tile, K step) -> times run
  std::map<int64_t, int> contributions, consumed;   // block -> count
  for (int64_t b = 0; b < g.blocks; ++b) {
    int64_t done = 0;
    for (const StreamKUnit& u : streamKWalk(g.tiles, g.ktiles, g.blocks, b, g.w)) {
      ASSERT_GT(u.ksteps, 0);
      ASSERT_GE(u.kbase, 0);
      ASSERT_LE(u.kbase + u.ksteps, g.ktiles);
      ASSERT_LT(u.tile, g.tiles);
      EXPECT_EQ(u.done, done) << "block " << b;
      done += u.ksteps;
      for (int64_t k = u.kbase; k < u.kbase + u.ksteps; ++k) ++runs[{u.tile, k}];
      bool finishes = u.kbase + u.ksteps == g.ktiles;
      if (!finishes) ++contributions[b];
      EXPECT_TRUE(u.peers == 0 || (finishes && u.kbase > 0)) << "block " << b << ": only a finisher of a tile begun "
                                                                               "elsewhere has peers";
      for (int64_t j = 1; j <= u.peers; ++j) {
        ASSERT_GE(b - j, 0) << "a finisher waits on a block below 0";
        ++consumed[b - j];
      }
    }
  }
  EXPECT_EQ(int64_t(runs.size()), g.tiles * g.ktiles) << "some (tile, K step) never runs";
  for (const auto& [step, n] : runs) EXPECT_EQ(n, 1) << "tile " << step.first << " step " << step.second;
  for (const auto& [b, n] : contributions) EXPECT_EQ(n, 1) << "block " << b << " contributes " << n << " times";
  EXPECT_EQ(contributions, consumed) << "a contribution nobody adds, or a wait on a block that does not contribute";
}

TEST(StreamKWalk, EveryStepOnceEveryContributionConsumedByOneFinisher) {
  for (int64_t tiles : {1, 2, 3, 7, 9, 20, 64, 131, 132, 133, 200, 264, 288, 512})
    for (int64_t ktiles : {1, 2, 3, 5, 16, 64})
      for (int64_t blocks : {1, 2, 3, 5, 13, 132})
        for (int64_t w : {1, 2})
          if (blocks <= tiles * ktiles) checkWalk({tiles, ktiles, blocks, w});  // the runtime's grid cap
}

TEST(StreamKWalk, DataParallelWavesLeaveTheLastWToTheRuns) {
  // 512 tiles of 64 K steps on 132 blocks: 3 whole waves and 116 tiles. W = 1 shares out the 116,
  // W = 2 the last whole wave too; blocks take data-parallel tiles b, b + 132, ... first.
  // Block 0, W = 1: tiles 0, 132, 264 whole, then its run [0, 56) of the 116 * 64 steps left: the
  // first 56 steps of tile 396.
  using Units = std::vector<StreamKUnit>;  // {tile, kbase, ksteps, done, peers}
  EXPECT_EQ(streamKWalk(512, 64, 132, 0, 1), (Units{{0, 0, 64, 0, 0}, {132, 0, 64, 64, 0}, {264, 0, 64, 128, 0},
                                                    {396, 0, 56, 192, 0}}));
  // W = 2: tiles 0, 132 whole, then the run [0, 120) of the 248 * 64 steps left: tile 264 whole
  // and the first 56 steps of tile 265.
  EXPECT_EQ(streamKWalk(512, 64, 132, 0, 2),
            (Units{{0, 0, 64, 0, 0}, {132, 0, 64, 64, 0}, {264, 0, 64, 128, 0}, {265, 0, 56, 192, 0}}));
  // Block 1, W = 1: its run [56, 112) ends tile 396 (8 steps, begun by block 0: one peer), walked
  // last, after the first 48 steps of tile 397.
  EXPECT_EQ(streamKWalk(512, 64, 132, 1, 1), (Units{{1, 0, 64, 0, 0}, {133, 0, 64, 64, 0}, {265, 0, 64, 128, 0},
                                                    {397, 0, 48, 192, 0}, {396, 56, 8, 240, 1}}));
  // Tiles filling whole waves: all data-parallel, no runs, for either W.
  for (int64_t w : {1, 2})
    for (const StreamKUnit& u : streamKWalk(264, 16, 132, 7, w)) {
      EXPECT_EQ(u.kbase, 0);
      EXPECT_EQ(u.ksteps, 16);
      EXPECT_EQ(u.tile % 132, 7);
    }
}

}  // namespace
}  // namespace kiln::testing
