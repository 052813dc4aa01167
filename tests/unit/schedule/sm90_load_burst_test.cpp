// load_burst in sm90_ws_persistent (sm90_producer.cpp): the producer's first K step of each burst
// also waits for the burst's last stage, so the burst's copies go out back to back. Run in the
// warp-specialized simulator through sm90_sim_check.h: a wait on the wrong stage or phase either
// hangs the simulated launch (reported) or lets a copy overwrite a stage the consumers still read
// (the hazard check), and the output is checked element by element.
#include <gtest/gtest.h>

#include "kiln/ir/operation.h"
#include "tests/unit/schedule/sm90_sim_check.h"

namespace kiln {
namespace {
using namespace sm90sim;

const std::string kRing3 = "strategy=sm90_ws_persistent bm=64 bn=64 bk=64 stages=3 warps_m=1 warps_n=1";
const std::string kRing4 = "strategy=sm90_ws_persistent bm=64 bn=64 bk=64 stages=4 warps_m=1 warps_n=1";

// The producer's waits on `empty` in the compiled kernel (passed as `mutate`, which changes nothing).
std::function<void(ir::Operation&)> countEmptyWaits(int* n) {
  return [n](ir::Operation& k) {
    *n = 0;
    k.walk([&](ir::Operation& op) {
      if (op.is("kern.mbarrier_wait")) ++*n;
    });
  };
}

TEST(Sm90LoadBurst, OneMoreWaitInTheProducer) {
  int plain = 0, burst = 0;
  check(kRing3, {64, 64, 128}, countEmptyWaits(&plain));
  check(kRing3 + " load_burst=2", {64, 64, 128}, countEmptyWaits(&burst));
  EXPECT_GT(plain, 0);
  EXPECT_EQ(burst, plain + 1);
}

TEST(Sm90LoadBurst, BurstsWrapTheRingAndCarryOverBetweenTiles) {
  // 5 K steps a tile (bursts of 2, 2 and a single step), 6 tiles on 2 blocks: the bursts' last
  // stages wrap the 3-stage ring at every phase.
  check(kRing3 + " load_burst=2", {130, 72, 320, false, 0, 2});
  // Bursts of 3 on 4 stages, 7 K steps a tile, K-major B; and K below one step.
  check(kRing4 + " load_burst=3", {130, 72, 448, true, 0, 2});
  check(kRing4 + " load_burst=3", {64, 64, 40, true});
  // Two consumer warpgroups, ragged M, N and K.
  check("strategy=sm90_ws_persistent bm=128 bn=128 bk=64 stages=3 warps_m=2 warps_n=1 raster=grouped group_m=2 "
        "load_burst=2",
        {200, 136, 264, false, 0, 2});
}

TEST(Sm90LoadBurst, WithSplitKTheTmaStoreEpilogueAndClusters) {
  check(kRing3 + " load_burst=2 split_k=2", {130, 72, 320, false, 0, 2});
  check(kRing3 + " load_burst=2 l2_hint=reuse", {64, 320, 320});  // B streamed, as the registered variant
  // reuse_stage holds a tile's last stage one K step into the next tile.
  check("strategy=sm90_ws_persistent bm=128 bn=256 bk=64 stages=3 warps_m=2 warps_n=1 epilogue=tma reuse_stage=true "
        "load_burst=2",
        {264, 520, 200, false, 0, 2});
  // cluster_m=2: a stage is free once both blocks' consumers released it.
  check("strategy=sm90_ws_persistent bm=64 bn=64 bk=64 stages=3 warps_m=1 warps_n=1 cluster_m=2 load_burst=2",
        {264, 136, 320, false, 0, 2});
}

}  // namespace
}  // namespace kiln
