// The simulator can fail: the warp-specialized simulator (tests/unit/testing/ws_sim.h) must report
// the hazards a broken sm90_ws_persistent protocol would leave on the GPU, which a run on seeded
// inputs may not show (its producer always runs ahead and its copies land at once): a wgmma
// reading a stage before its copies landed, a TMA store's source overwritten before its read
// finished. Through the harness of sm90_sim_check.h.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dialects/kern/kern_builder.h"
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

// The simulator can fail: sm90-stage-epilogue derives each slot wait from the boxes' order across
// tiles. With bn = 192 (three boxes through two slots) a tile's first box reuses the slot the
// previous tile's last box used, so it must wait for every store (pending 0); one group later
// (pending 1) leaves that store reading the slot while the box overwrites it.
TEST(Sm90Functional, FirstBoxWaitingOneStoreTooFewIsCaught) {
  const std::string cfg =
      "strategy=sm90_ws_persistent bm=128 bn=192 bk=64 stages=4 warps_m=2 warps_n=1 epilogue=tma store_slots=2";
  const Problem p = {200, 400, 128, false, 0, 2};  // 2 x 3 tiles on 2 blocks: each block stores three tiles
  check(cfg, p);
  int loosened = 0;
  auto loosenFirstWaits = [&](ir::Operation& k) {
    k.walk([&](ir::Operation& op) {
      if (op.is("kern.bulk_wait") && op.intAttr("pending", 1) == 0 && op.enclosing("scf.for")) {
        op.setAttr("pending", int64_t{1});
        ++loosened;
      }
    });
  };
  check(cfg, p, loosenFirstWaits, "a TMA store's source in shared memory (byte offset");
  EXPECT_GT(loosened, 0) << "no kern.bulk_wait {pending = 0} in a tile loop: the test no longer mutates anything";
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

// The simulator can fail: bar.sync is barrier.sync.aligned, so the threads of one generation of a
// named barrier must all execute the same instruction (PTX ISA, "barrier"; compute-sanitizer's
// synccheck reports others as divergent). Two cooperating consumer warpgroups that meet at a
// 256-thread barrier, the first in its K loop's first iteration and the second at a copy of it
// before the loop, compute the right product, and the simulator reports the two sites.
TEST(Sm90Functional, AlignedBarrierReachedFromTwoInstructionsIsCaught) {
  int sites = 0;
  auto meetAtTwoSites = [&sites](ir::Operation& k) {
    ir::Value* wg = nullptr;
    ir::Operation* kLoop = nullptr;
    k.walk([&](ir::Operation& op) {
      if (op.numResults() == 1 && op.result()->nameHint() == "wg") wg = op.result();
      if (!kLoop && wg && op.is("scf.for")) kLoop = &op;  // the consumer's first loop: its K loop
    });
    ASSERT_TRUE(wg && kLoop);
    KernBuilder b;
    ir::Value* id = nullptr;
    auto meet = [&](ir::Value* cond) {
      b.ifThen(cond, [&] { b.create("kern.named_barrier", {id}, {}, {{"threads", int64_t{256}}}); });
      ++sites;
    };
    b.setInsertionPoint(kLoop);
    id = b.i32(4);  // after the per-warpgroup barriers (1 + wg) of two consumer warpgroups
    meet(b.cmp("ne", wg, b.i32(0)));
    ir::Block& body = kLoop->region(0).front();
    b.setInsertionPoint(body.front());
    meet(b.andi(b.cmp("eq", wg, b.i32(0)), b.cmp("eq", body.argument(0), b.i32(0))));
  };
  check(k128, {264, 200, 520, false, 0, 2}, meetAtTwoSites, "reached from two different instructions");
  EXPECT_EQ(sites, 2);
}

}  // namespace
}  // namespace kiln
