// stagger=N on sm90_ws_persistent (docs/sm90-strategy.md, "Staggered consumers"): the second of two
// cooperating consumer warpgroups starts each tile N K steps behind the first, through a 256-thread
// named barrier they meet at once per tile. Run by the warp-specialized simulator against a
// double-precision reference: promoted FP8 sums one and two steps at a time, fast sums, BF16,
// several tiles per block, tiles with no iteration to meet in (none is offset); then the rendezvous
// split over two instructions, and the configs it refuses.
#include <gtest/gtest.h>

#include <string>

#include "examples/examples.h"
#include "kiln/compile.h"
#include "kiln/ir/operation.h"
#include "dialects/kern/kern_builder.h"
#include "schedule/config.h"
#include "target/target.h"
#include "tests/unit/schedule/sm90_sim_check.h"

namespace kiln {
namespace {
using namespace sm90sim;

TEST(Sm90Stagger, PromotedSumsStayExact) {
  // K = 656: 6 steps, 3 pairs: warpgroup 0 meets at pair 1; K = 272: 3 steps, 1 pair, and
  // stagger=4 would meet at pair 2: no rendezvous, no offset.
  check(kFp8 + "fp8_accum=promote_pairs bm=128 bn=128 stages=4 warps_m=2 stagger=2", fp8(264, 200, 656, 2));
  check(kFp8 + "fp8_accum=promote_pairs bm=128 bn=128 stages=4 warps_m=2 stagger=4", fp8(264, 200, 272, 2));
  // As many lagging steps as stages: the leading warpgroup fills the whole ring, then waits.
  check(kFp8 + "fp8_accum=promote_pairs bm=128 bn=128 stages=4 warps_m=2 stagger=4", fp8(264, 200, 1024, 2));
  check(kFp8 + "fp8_accum=promote bm=128 bn=160 stages=4 warps_m=2 stagger=3 epilogue_loads=prefetch",
        fp8(136, 328, 656, 2));
  check(kFp8 + "fp8_accum=promote bm=128 bn=160 stages=4 warps_m=2 stagger=3", fp8(136, 328, 144, 2));  // 2 steps
}

TEST(Sm90Stagger, FastSumsAndBf16) {
  check(kFp8 + "bm=128 bn=128 stages=3 warps_m=2 stagger=2", fp8(264, 136, 400, 2));
  check(std::string(k128) + " stagger=2", Problem{264, 200, 520, false, 0, 2});
  check(std::string(k128) + " stagger=3 epilogue=tma", Problem{136, 264, 104, false, 0, 2});  // 2 steps
}

// bar.sync is barrier.sync.aligned: the threads of one generation must all execute the same
// instruction (PTX ISA, "barrier"; compute-sanitizer's synccheck reports others as divergent), so
// both warpgroups meet at the one in the K loop. With warpgroup 1 also meeting at a copy of the
// barrier before the loop (where a first version had its meeting), it arrives there while
// warpgroup 0 arrives at the loop's: the simulator reports it.
TEST(Sm90Stagger, BothWarpgroupsMeetAtOneInstruction) {
  int moved = 0;
  auto splitSites = [&moved](ir::Operation& k) {
    ir::Value* wg = nullptr;
    ir::Operation* rendezvous = nullptr;
    k.walk([&](ir::Operation& op) {
      if (op.numResults() == 1 && op.result()->nameHint() == "wg") wg = op.result();
      if (!rendezvous && op.is("kern.named_barrier") && op.intAttr("threads", 0) == 256) rendezvous = &op;
    });
    ASSERT_TRUE(wg && rendezvous);
    ir::Operation* loop = rendezvous->parentOp()->parentOp();  // the barrier's scf.if, its scf.for
    ASSERT_TRUE(loop->is("scf.for"));
    KernBuilder b;
    b.setInsertionPoint(loop);
    b.ifThen(b.cmp("ne", wg, b.i32(0)), [&] {
      b.create("kern.named_barrier", {rendezvous->operand(0)}, {}, {{"threads", int64_t{256}}});
    });
    ++moved;
  };
  check(kFp8 + "fp8_accum=promote_pairs bm=128 bn=128 stages=4 warps_m=2 stagger=2", fp8(264, 200, 656, 2), splitSites,
        "reached from two different instructions");
  EXPECT_EQ(moved, 1);
}

TEST(Sm90Stagger, ConfigsItRefusesSayWhy) {
  auto fp8Program = examples::fp8RowwiseGemm();
  auto bf16Program = examples::gemmBf16();
  const struct {
    const ir::Module& program;
    std::string config, message;
  } refused[] = {
      {*fp8Program, kFp8 + "bm=128 bn=128 stages=3 warps_m=2 consumers=pingpong stagger=2",
       "stagger=2 offsets two cooperating consumer warpgroups"},
      {*fp8Program, kFp8 + "bm=64 bn=128 stages=3 warps_m=1 stagger=2",
       "stagger=2 offsets two cooperating consumer warpgroups"},
      {*fp8Program, kFp8 + "bm=128 bn=128 stages=3 warps_m=2 cluster_m=2 stagger=2",
       "stagger=2 with split_k, stream_k, reuse_stage or clusters is not supported"},
      {*fp8Program, kFp8 + "fp8_accum=promote_pairs bm=128 bn=128 stages=3 warps_m=2 stagger=3", "use an even stagger"},
      // With the check taken out, the simulator deadlocks on each of these at K = 2048: the leading
      // warpgroup waits for a stage only the trailing one, waiting at the rendezvous, can empty.
      {*fp8Program, kFp8 + "fp8_accum=promote_pairs bm=128 bn=128 stages=4 warps_m=2 stagger=6",
       "stagger=6 needs 6 ring stages (the leading warpgroup holds 6 K steps the trailing one has not read), not 4"},
      {*fp8Program, kFp8 + "fp8_accum=promote bm=128 bn=160 stages=4 warps_m=2 stagger=5",
       "stagger=5 needs 5 ring stages"},
      {*bf16Program, "strategy=sm80_multistage bm=128 bn=128 bk=64 stages=3 warps_m=2 warps_n=2 stagger=2",
       "stagger=2 offsets cooperating consumer warpgroups, which sm80_multistage does not have"},
  };
  for (const auto& r : refused)
    EXPECT_NE(compileError(r.program, r.config).find(r.message), std::string::npos) << r.config;
}

}  // namespace
}  // namespace kiln
