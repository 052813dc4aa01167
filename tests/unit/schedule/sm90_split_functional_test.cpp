// split_k and stream_k in sm90_ws_persistent, run in the warp-specialized simulator with all
// blocks together: sums through the workspace, and the hand-over protocol's breakers (a dropped
// release, acquire or flag reset) caught.
#include <gtest/gtest.h>
#include <gtest/gtest-spi.h>

#include <vector>

#include "kiln/ir/operation.h"
#include "tests/unit/schedule/sm90_sim_check.h"

namespace kiln {
namespace {
using namespace sm90sim;

// A protocol breaker: the flag reset erased.
void dropFlagReset(ir::Operation& k) {
  std::vector<ir::Operation*> resets;
  k.walk([&](ir::Operation& op) {
    if (op.is("kern.st_global") && op.operand(0)->type().elem() == ir::ScalarType::I32) resets.push_back(&op);
  });
  ASSERT_EQ(resets.size(), 1u);
  resets.front()->erase();
}

// split_k=S: each tile's K steps in S slices on consecutive units; the slices but the last hand their
// sums over through the workspace and a flag, the last adds them and runs the epilogue (and leaves
// the flag zero: check() verifies). Blocks run together, so a slice can wait on another block's, and
// every read of another block's sums is checked against the releases and acquires before it.
TEST(Sm90Functional, SplitKSlicesSumThroughTheWorkspace) {
  check(std::string(k64) + " split_k=2", {130, 72, 320, false, 0, 2});   // 5 K steps: slices of 3 and 2 (+1 zero-filled)
  check(std::string(k64) + " split_k=3", {64, 64, 640, false, 0, 1});    // one block: the slices in turn
  check(std::string(k128) + " split_k=3", {200, 136, 264, false, 0, 3}); // two consumer groups, one flag each
  check(std::string(k128) + " split_k=2 epilogue=tma", {136, 200, 200, true, 0, 4});
  check(std::string(k128) + " split_k=2 consumers=pingpong", {264, 136, 512, false, 0, 3});
  check(std::string(k64) + " split_k=2 epilogue=tma", {72, 64, 200, false, 2, 3});  // batched
  check(std::string(k64) + " split_k=4", {64, 64, 64, false, 0, 3});  // one K step: slices 1..3 wholly past K
}

// The simulator can fail: each edit below breaks the split-K protocol.
TEST(Sm90Functional, SplitKProtocolErrorsAreCaught) {
  const std::string sk = std::string(k64) + " split_k=2";
  // No release: the finishing slice waits forever.
  check(sk, {130, 72, 320, false, 0, 2}, dropAll("kern.red_release"), "deadlock");
  // No wait: the finishing slice reads sums it has not acquired (the simulator tracks which block
  // wrote each global word and which releases each block has acquired).
  check(sk, {130, 72, 320, false, 0, 2}, dropAll("kern.spin_wait"), "without acquiring that release first");
  // No reset: the flag is left at 1, and the next launch's finishing slice would not wait.
  EXPECT_NONFATAL_FAILURE(check(sk, {64, 64, 320, false, 0, 2}, dropFlagReset), "flag 0 is 1 after the launch");
}

// stream_k=W: data-parallel waves, then each block's run of K steps over the last W waves' tiles; a
// run's last unit that ends inside a tile hands its sums over through the block's slot, and the
// unit that ends the tile (walked last when it begins the run) waits for the lower blocks that
// hold the tile's earlier steps.
TEST(Sm90Functional, StreamKRunsSumThroughTheWorkspace) {
  const std::string sk64 = std::string(k64) + " stream_k=2", sk128 = std::string(k128) + " stream_k=2";
  const std::string tail64 = std::string(k64) + " stream_k=1";
  check(sk64, {130, 72, 320, false, 0, 4});   // 6 tiles x 5 steps on 4 blocks: no waves, runs of 7-8 steps
  check(sk64, {130, 72, 320, false, 0, 2});   // 6 tiles on 2 blocks: 3 whole waves, no run
  check(sk64, {130, 136, 320, false, 0, 3});  // 9 tiles on 3 blocks: whole waves
  check(sk64, {200, 72, 320, false, 0, 3});   // 8 tiles on 3 blocks: 1 wave, then 5 tiles in runs
  check(tail64, {200, 72, 320, false, 0, 3}); // stream_k=1: 2 waves, then 2 tiles in runs of 3-4 steps
  check(tail64, {200, 136, 640, false, 0, 5});// 16 tiles on 5 blocks: 3 waves, 1 tile over 5 blocks (4 peers)
  check(sk64, {64, 64, 640, false, 0, 3});    // 1 tile of 10 steps on 3 blocks: head, middle, tail (2 peers)
  check(sk64, {64, 64, 192, false, 0, 3});    // 3 steps on 3 blocks: a step each
  check(sk64, {64, 64, 320, false, 0, 1});    // one block: the tile whole
  check(sk128, {200, 136, 264, false, 0, 3}); // two consumer groups, one flag and slot each
  check(sk128 + " epilogue=tma", {136, 200, 392, true, 0, 3});
  check(sk64 + " epilogue=tma", {72, 64, 200, false, 3, 4});  // batched: 6 tiles of 4 steps
}

// In clusters the walkers are the clusters: both blocks of a pair take the same units of the
// cluster tile, each its sub-tile (sharing one operand's boxes by multicast), and a finisher's
// peers are the blocks of its rank in the clusters below.
TEST(Sm90Functional, StreamKRunsInClusters) {
  const std::string sk64 = std::string(k64) + " stream_k=2", tail64 = std::string(k64) + " stream_k=1";
  check(sk64 + " cluster_m=2", {200, 72, 320, false, 0, 6});    // 4 pair tiles x 5 steps on 3 pairs: runs of 6-7
  check(tail64 + " cluster_m=2", {264, 136, 640, false, 0, 8});  // 9 pair tiles on 4 pairs: 2 waves, then
                                                                 // 1 tile in runs (3 peers)
  check(tail64 + " cluster_n=2", {136, 200, 448, false, 0, 6});  // pairs along N sharing A, sub-tiles past N
  check(std::string(k128) + " stream_k=1 cluster_m=2 epilogue=tma", {264, 136, 392, true, 0, 4});
  check(sk64 + " cluster_m=2 epilogue=tma", {136, 64, 200, false, 2, 4});  // batched
  // The peers are counted in clusters: a wait on the block just below (another rank of the same
  // cluster, or of the wrong one) reads sums nobody released for this tile.
  check(tail64 + " cluster_m=2", {264, 136, 640, false, 0, 8}, dropAll("kern.spin_wait"),
        "without acquiring that release first");
}

// The simulator can fail: each edit below breaks the stream-K hand-over.
TEST(Sm90Functional, StreamKProtocolErrorsAreCaught) {
  const std::string sk = std::string(k64) + " stream_k=2";
  check(sk, {130, 72, 320, false, 0, 4}, dropAll("kern.red_release"), "deadlock");
  check(sk, {130, 72, 320, false, 0, 4}, dropAll("kern.spin_wait"), "without acquiring that release first");
  // No reset: a contributing block's flag is left at 1 for the next launch.
  EXPECT_NONFATAL_FAILURE(check(sk, {64, 64, 640, false, 0, 3}, dropFlagReset), "is 1 after the launch");
}

}  // namespace
}  // namespace kiln
