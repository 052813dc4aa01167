// sm90-multistage-ring on the whole pipeline, in the warp-specialized simulator (through the
// harness of sm90_sim_check.h): the lowering's kernel over a ring of one stage (the pass skipped,
// KILN_DISABLE_PASSES=sm90-multistage-ring) computes the product too, in every protocol the ring
// carries (clusters' remote releases, ping-pong turns, reuse_stage's deferred release, split-K),
// and each form's wgmma wait is what keeps it correct: the simulator reports a release made while
// the group that read the stage may still be in flight.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kiln/ir/operation.h"
#include "tests/unit/schedule/sm90_sim_check.h"

namespace kiln {
namespace {
using namespace sm90sim;

// Runs `body` with sm90-multistage-ring skipped; the environment is restored.
template <typename F>
void withoutTheRing(F&& body) {
  const char* before = std::getenv("KILN_DISABLE_PASSES");
  std::optional<std::string> saved = before ? std::optional<std::string>(before) : std::nullopt;
  setenv("KILN_DISABLE_PASSES", "sm90-multistage-ring", 1);
  body();
  if (saved) setenv("KILN_DISABLE_PASSES", saved->c_str(), 1);
  else unsetenv("KILN_DISABLE_PASSES");
}

// The consumers' K loops: the scf.for ops whose body commits a wgmma group.
std::vector<ir::Operation*> consumerKLoops(ir::Operation& k) {
  std::vector<ir::Operation*> loops;
  k.walk([&](ir::Operation& op) {
    if (!op.is("scf.for")) return;
    for (const auto& inner : op.body().operations())
      if (inner->is("kern.wgmma_commit")) {
        loops.push_back(&op);
        return;
      }
  });
  return loops;
}

// The K loops' wgmma waits, and their body's ops that arrive on a barrier (the releases).
std::vector<ir::Operation*> kLoopWaits(ir::Operation& k) {
  std::vector<ir::Operation*> waits;
  for (ir::Operation* loop : consumerKLoops(k))
    for (const auto& op : loop->body().operations())
      if (op->is("kern.wgmma_wait")) waits.push_back(op.get());
  return waits;
}

bool arrives(ir::Operation& op) {
  bool hit = false;
  op.walk([&](const ir::Operation& in) { hit |= in.is("kern.mbarrier_arrive") || in.is("kern.mbarrier_arrive_remote"); });
  return hit;
}

TEST(Sm90MultistageRing, TheRingOfOneComputesTheProduct) {
  withoutTheRing([] {
    // The one-stage kernel waits for no group: its only stage's release is its next step's copies'
    // condition. It is what the lowering writes, so every protocol of the ring runs on it.
    int waitsOfZero = 0;
    auto count = [&](ir::Operation& k) {
      for (ir::Operation* w : kLoopWaits(k)) waitsOfZero += w->intAttr("pending", -1) == 0;
    };
    check(k128, {264, 200, 520, false, 0, 2}, count);  // 9 K steps a tile, tiles in turn on 2 blocks
    EXPECT_GT(waitsOfZero, 0) << "the K loop no longer waits for 0 groups without the ring pass";
    check(k64, {130, 72, 200, true, 0, 2});             // K-major B, ragged
    check(std::string(k128) + " consumers=pingpong", {264, 136, 200, false, 0, 2});
    check(std::string(k128) + " cluster_m=2", {520, 264, 200, false, 0, 2});
    check(std::string(k128) + " cluster_n=2", {264, 520, 136, false, 0, 2});
    check("strategy=sm90_ws_persistent bm=128 bn=256 bk=64 stages=3 warps_m=2 warps_n=1 epilogue=tma "
          "reuse_stage=true",
          {264, 520, 200, false, 0, 2});
    check(std::string(k64) + " split_k=2", {130, 72, 320, false, 0, 2});
  });
}

// A ring of one with a group left in flight: the next step releases the stage while the previous
// step's wgmmas may still read it.
TEST(Sm90MultistageRing, RingOfOneWithAGroupInFlightIsCaught) {
  withoutTheRing([] {
    int loosened = 0;
    auto keepOneInFlight = [&](ir::Operation& k) {
      for (ir::Operation* w : kLoopWaits(k))
        if (w->intAttr("pending", -1) == 0) w->setAttr("pending", int64_t{1}), ++loosened;
    };
    check(k64, {64, 64, 256, false, 0, 1}, keepOneInFlight, "hazard");
    EXPECT_GT(loosened, 0) << "no wait of 0 in the one-stage K loop: the test no longer mutates anything";
  });
}

// The widened ring keeps one group in flight, so its releases must follow the step's wait of 1:
// moved back to the top of the step (where the ring of one has them), with the conditions they
// compute, they give a stage back while the group that read it may still be in flight.
TEST(Sm90MultistageRing, WidenedReleasesBeforeTheirWaitAreCaught) {
  int moved = 0, waitsOfOne = 0;
  auto releaseFirst = [&](ir::Operation& k) {
    for (ir::Operation* loop : consumerKLoops(k)) {
      ir::Block& body = loop->body();
      // What the yield needs (the next ring position) stays; the rest after the wait moves.
      std::set<const ir::Operation*> next;
      std::vector<const ir::Operation*> work = {body.back()};
      while (!work.empty()) {
        const ir::Operation* op = work.back();
        work.pop_back();
        for (const ir::Value* v : op->operands())
          if (const ir::Operation* d = v->definingOp(); d && d->parentBlock() == &body && next.insert(d).second)
            work.push_back(d);
      }
      std::vector<ir::Operation*> tail;
      bool pastWait = false;
      for (const auto& op : body.operations()) {
        if (op->is("kern.wgmma_wait")) {
          waitsOfOne += op->intAttr("pending", -1) == 1;
          pastWait = true;
        } else if (pastWait && op.get() != body.back() && !next.count(op.get())) {
          tail.push_back(op.get());
        }
      }
      bool releases = false;
      for (ir::Operation* op : tail) releases |= arrives(*op);
      if (!releases) continue;
      auto front = body.operations().begin();
      for (ir::Operation* op : tail) body.insert(front, body.take(op)), ++moved;
    }
  };
  check(k64, {64, 64, 256, false, 0, 1});  // intact, it passes
  check(k64, {64, 64, 256, false, 0, 1}, releaseFirst, "hazard");
  check(k128, {128, 128, 512, false, 0, 1}, releaseFirst, "hazard");  // two consumer warpgroups, 3 stages
  check(std::string(k128) + " consumers=pingpong", {256, 128, 512, false, 0, 1}, releaseFirst, "hazard");
  check(std::string(k64) + " cluster_m=2", {128, 64, 512, false, 0, 2}, releaseFirst, "hazard");
  EXPECT_GT(moved, 0) << "no release after the K loop's wait: the test no longer mutates anything";
  EXPECT_GT(waitsOfOne, 0) << "the widened K loop no longer keeps one group in flight";
}

}  // namespace
}  // namespace kiln
