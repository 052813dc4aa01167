// The simulator can fail: the warp-specialized simulator (tests/unit/testing/ws_sim.h) must report
// the hazards a broken sm90_ws_persistent protocol would leave on the GPU, which a run on seeded
// inputs may not show (its producer always runs ahead and its copies land at once): a wgmma
// reading a stage before its copies landed, a TMA store's source overwritten before its read
// finished, the promoted loops' turns unbalanced. Through the harness of sm90_sim_check.h.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kiln/ir/operation.h"
#include "tests/unit/schedule/sm90_sim_check.h"

namespace kiln {
namespace {
using namespace sm90sim;

// The simulator can fail: a TMA store reads its box from shared memory asynchronously, until
// cp.async.bulk.wait_group.read retires its group. Without the wait before a staging slot is reused
// (pending = cSlots - 1 = 1 for bn = 256: four boxes through two slots), the third box overwrites the
// first while the first box's store may still be reading it.
TEST(Sm90Functional, TmaStoreSourceOverwrittenBeforeItsWaitIsCaught) {
  const std::string cfg =
      "strategy=sm90_ws_persistent bm=128 bn=256 bk=64 stages=4 warps_m=2 warps_n=1 raster=grouped group_m=8 "
      "epilogue=tma";
  const Problem p = {200, 520, 128, false, 0, 2};  // 2 x 3 tiles on 2 blocks: slots reused within and across tiles
  check(cfg, p);  // intact, it passes
  int dropped = 0;
  auto dropSlotWaits = [&](ir::Operation& k) {
    std::vector<ir::Operation*> waits;
    k.walk([&](ir::Operation& op) {
      if (op.is("kern.bulk_wait") && op.intAttr("pending", 0) == 1) waits.push_back(&op);
    });
    for (ir::Operation* op : waits) op->erase();
    dropped = int(waits.size());
  };
  check(cfg, p, dropSlotWaits, "a TMA store's source in shared memory (byte offset");
  EXPECT_GT(dropped, 0) << "no kern.bulk_wait {pending = 1} to drop: the test no longer mutates anything";
  // No wait at all, not even before exit: the groups still outstanding when the block ends are checked.
  check(cfg, p, dropAll("kern.bulk_wait"), "by the block's end");
}

// The simulator can fail: a consumer that reads a stage without waiting on its full barrier may
// read it before the producer's TMA copies land (the simulator lands copies at once, so its
// producer is always ahead; it checks instead that the reading agent saw the phase each copy
// completes). With the consumers' waits gone, the first wgmma is caught, fast and promoted alike.
TEST(Sm90Functional, StageReadBeforeItsCopiesLandedIsCaught) {
  int dropped = 0;
  auto dropConsumerWaits = [&](ir::Operation& k) {
    std::vector<ir::Operation*> waits;
    k.walk([&](ir::Operation& op) {
      if (op.is("kern.role") && op.stringAttr("name") == "consumer")
        op.walk([&](ir::Operation& inner) {
          if (inner.is("kern.mbarrier_wait")) waits.push_back(&inner);
        });
    });
    for (ir::Operation* op : waits) op->erase();
    dropped = int(waits.size());
  };
  const char* landed = "before its agent saw the mbarrier phase that TMA copy completes";
  check(k128, {136, 200, 200, false, 0, 2}, dropConsumerWaits, landed);
  EXPECT_GT(dropped, 0) << "no kern.mbarrier_wait in the consumer role: the test no longer mutates anything";
  Problem fp8 = {136, 200, 400, true, 0, 2};
  fp8.fp8 = true;
  check("strategy=sm90_ws_persistent bk=128 warps_n=1 epilogue=tma fp8_accum=promote_pairs bm=128 bn=128 stages=3 "
        "warps_m=2",
        fp8, dropConsumerWaits, landed);
}

// Promoted sums on cooperating warpgroups issue in turns through named barriers (sm90_promote.cpp).
// Without the last warpgroup's first grant nobody ever gets a turn; without the first
// warpgroup's last wait a barrier generation is left open when the block ends.
TEST(Sm90Functional, PromotedTurnsProtocolErrorsAreCaught) {
  const std::string cfg =
      "strategy=sm90_ws_persistent bk=128 warps_n=1 epilogue=tma fp8_accum=promote bm=128 bn=128 stages=3 warps_m=2";
  Problem p = {136, 200, 400, true, 0, 2};
  p.fp8 = true;
  // The top-level turn ops: outside every scf.for (the per-step ones sit in the K loop).
  auto topLevel = [](const char* name) {
    return [name](ir::Operation& k) {
      std::vector<ir::Operation*> ops;
      k.walk([&](ir::Operation& op) {
        if (!op.is(name) || op.intAttr("threads", 0) != 256) return;
        for (const ir::Operation* in = op.parentOp(); in; in = in->parentOp())
          if (in->is("scf.for") || in->is("kern.tile_loop")) return;
        ops.push_back(&op);
      });
      ASSERT_EQ(ops.size(), 1u) << name;
      for (ir::Operation* op : ops) op->erase();
    };
  };
  check(cfg, p, topLevel("kern.named_barrier_arrive"), "deadlock");
  check(cfg, p, topLevel("kern.named_barrier"), "ends the block with 128 threads arrived");
}

}  // namespace
}  // namespace kiln
