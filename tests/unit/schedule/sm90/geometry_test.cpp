// sm90::Geometry: the numbers of an sm90_ws_persistent kernel that follow from its options alone
// (how the consumer warpgroups share a tile, their wgmma shape, the staged epilogue's slots).
#include <gtest/gtest.h>

#include "schedule/sm90/geometry.h"

namespace kiln::sm90 {
namespace {

Geometry of(const std::string& keys) {
  return geometryOf(Config::parse("strategy=sm90_ws_persistent bk=64 " + keys));
}

TEST(Sm90Geometry, CooperativeWarpgroupsSplitTheRows) {
  Geometry g = of("bm=128 bn=256 warps_m=2 warps_n=1");
  EXPECT_FALSE(g.pingpong);
  EXPECT_EQ(g.groups, 2);
  EXPECT_EQ(g.tileGroups, 2);
  EXPECT_EQ(g.rowsPerConsumer, 64);
  EXPECT_EQ(g.colsPerConsumer, 256);
  // One m64 block per warpgroup, as wide as the tile: 128 accumulators per thread.
  EXPECT_EQ(g.wgmmaBlocks, 1);
  EXPECT_EQ(g.wgmmaN, 256);
  EXPECT_EQ(g.accPerBlock, 128);
  EXPECT_EQ(g.accumulators(), 128);
  EXPECT_EQ(g.clusterSize, 1);
  EXPECT_FALSE(g.clustered());
  EXPECT_EQ(g.cSlots, 0) << "no staging without epilogue=tma";
}

TEST(Sm90Geometry, PingpongWarpgroupsOwnWholeTiles) {
  Geometry g = of("bm=128 bn=128 warps_m=2 warps_n=1 consumers=pingpong");
  EXPECT_TRUE(g.pingpong);
  EXPECT_EQ(g.groups, 2);
  EXPECT_EQ(g.tileGroups, 1) << "one warpgroup holds a tile's accumulators";
  EXPECT_EQ(g.rowsPerConsumer, 128);
  EXPECT_EQ(g.wgmmaBlocks, 2);
  EXPECT_EQ(g.accumulators(), 128);
}

TEST(Sm90Geometry, SwappedOperandsMakeColumnsTheBlocks) {
  // 208 rows in two warpgroups (104 each, wgmma N), 128 columns split by warps_n=2 into one m64
  // block each.
  Geometry g = of("bm=208 bn=128 warps_m=1 warps_n=2 swap_ab=true epilogue=tma stage_store=stmatrix");
  EXPECT_TRUE(g.swapped);
  EXPECT_EQ(g.groups, 2);
  EXPECT_EQ(g.rowsPerConsumer, 208);
  EXPECT_EQ(g.colsPerConsumer, 64);
  EXPECT_EQ(g.wgmmaBlocks, 1);
  EXPECT_EQ(g.wgmmaN, 208);
  EXPECT_EQ(g.accPerBlock, 104);
  EXPECT_EQ(g.cSlots, 1) << "a warpgroup has one 64-column box";
}

TEST(Sm90Geometry, StagingSlotsAndPieces) {
  EXPECT_EQ(of("bm=128 bn=256 warps_m=2 epilogue=tma").cSlots, 2);
  EXPECT_EQ(of("bm=128 bn=256 warps_m=2 epilogue=tma store_slots=1").cSlots, 1);
  EXPECT_EQ(of("bm=128 bn=64 warps_m=2 epilogue=tma").cSlots, 1) << "at most the warpgroup's boxes";
  Geometry pieces = of("bm=240 bn=128 warps_m=1 warps_n=2 swap_ab=true epilogue=tma stage_store=stmatrix store_pieces=3");
  EXPECT_EQ(pieces.rowsPerPiece, 80);
  EXPECT_EQ(pieces.cSlots, 2) << "one box in three pieces, at most two slots";
  Geometry reuse = of("bm=128 bn=256 warps_m=2 epilogue=tma reuse_stage=true");
  EXPECT_EQ(reuse.cSlots, 2);
  EXPECT_EQ(reuse.ringBoxes, 2) << "four boxes, two of them in the ring stage";
}

TEST(Sm90Geometry, SchedulerAndCluster) {
  Geometry split = of("bm=128 bn=128 warps_m=2 split_k=3");
  EXPECT_EQ(split.splits, 3);
  EXPECT_FALSE(split.streamK);
  EXPECT_TRUE(of("bm=128 bn=128 warps_m=2 stream_k=1").streamK);
  Geometry square = of("bm=128 bn=128 warps_m=2 cluster_m=2 cluster_n=2");
  EXPECT_EQ(square.clusterSize, 4);
  EXPECT_TRUE(square.clustered());
}

TEST(Sm90Geometry, KStepReadsThirtyTwoBytes) {
  EXPECT_EQ(kStepOf(2), 16);
  EXPECT_EQ(kStepOf(1), 32);
}

}  // namespace
}  // namespace kiln::sm90
