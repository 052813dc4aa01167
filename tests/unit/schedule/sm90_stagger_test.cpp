// stagger=N on sm90_ws_persistent (docs/sm90-strategy.md, "Staggered consumers"): the second of two
// cooperating consumer warpgroups starts each tile N K steps behind the first, through a 256-thread
// named barrier they meet at once per tile. Run by the warp-specialized simulator against a
// double-precision reference: promoted FP8 sums one and two steps at a time, fast sums, BF16,
// several tiles per block, tiles with fewer K steps than the stagger (the first warpgroup meets the
// barrier after its loop); then the rendezvous broken, and the configs it refuses.
#include <gtest/gtest.h>

#include <string>

#include "examples/examples.h"
#include "kiln/compile.h"
#include "kiln/ir/operation.h"
#include "schedule/config.h"
#include "schedule/target.h"
#include "tests/unit/schedule/sm90_sim_check.h"

namespace kiln {
namespace {
using namespace sm90sim;

const std::string kFp8 = "strategy=sm90_ws_persistent bk=128 warps_n=1 epilogue=tma stage_store=stmatrix ";

Problem fp8(int64_t m, int64_t n, int64_t k, uint32_t blocks) {
  Problem p{m, n, k, true, 0, blocks};
  p.fp8 = true;
  return p;
}

std::string compileError(const ir::Module& program, const std::string& config) {
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(compile(program, Target::sm90a(), Config::parse(config), diag)) << config;
  return diag.str();
}

TEST(Sm90Stagger, PromotedSumsStayExact) {
  // K = 656: 6 steps, the rendezvous inside the loop; K = 272: 3 steps, fewer than stagger=4.
  check(kFp8 + "fp8_accum=promote_pairs bm=128 bn=128 stages=4 warps_m=2 stagger=2", fp8(264, 200, 656, 2));
  check(kFp8 + "fp8_accum=promote_pairs bm=128 bn=128 stages=4 warps_m=2 stagger=4", fp8(264, 200, 272, 2));
  check(kFp8 + "fp8_accum=promote bm=128 bn=160 stages=4 warps_m=2 stagger=3 epilogue_loads=prefetch",
        fp8(136, 328, 656, 2));
  check(kFp8 + "fp8_accum=promote bm=128 bn=160 stages=4 warps_m=2 stagger=3", fp8(136, 328, 144, 2));  // 2 steps
}

TEST(Sm90Stagger, FastSumsAndBf16) {
  check(kFp8 + "bm=128 bn=128 stages=3 warps_m=2 stagger=2", fp8(264, 136, 400, 2));
  check(std::string(k128) + " stagger=2", Problem{264, 200, 520, false, 0, 2});
  check(std::string(k128) + " stagger=3 epilogue=tma", Problem{136, 264, 104, false, 0, 2});  // 2 steps
}

// The first warpgroup's rendezvous after a loop shorter than the stagger is what pairs the
// barrier's generations in such tiles: without it the second warpgroup waits for ever.
TEST(Sm90Stagger, AMissingRendezvousDeadlocks) {
  auto dropAfterLoop = [](ir::Operation& k) {
    // The last kern.named_barrier of 256 threads in the consumer is the one after the K loop.
    ir::Operation* last = nullptr;
    k.walk([&](ir::Operation& op) {
      if (op.is("kern.named_barrier") && op.intAttr("threads", 0) == 256) last = &op;
    });
    ASSERT_NE(last, nullptr);
    last->erase();
  };
  check(kFp8 + "fp8_accum=promote_pairs bm=128 bn=128 stages=4 warps_m=2 stagger=4", fp8(264, 200, 272, 2),
        dropAfterLoop, "deadlock");
}

TEST(Sm90Stagger, ConfigsItRefusesSayWhy) {
  auto program = examples::fp8RowwiseGemm();
  EXPECT_NE(compileError(*program, kFp8 + "bm=128 bn=128 stages=3 warps_m=2 consumers=pingpong stagger=2")
                .find("stagger=2 offsets two cooperating consumer warpgroups"),
            std::string::npos);
  EXPECT_NE(compileError(*program, kFp8 + "bm=64 bn=128 stages=3 warps_m=1 stagger=2")
                .find("stagger=2 offsets two cooperating consumer warpgroups"),
            std::string::npos);
  EXPECT_NE(compileError(*program, kFp8 + "bm=128 bn=128 stages=3 warps_m=2 cluster_m=2 stagger=2")
                .find("stagger=2 with split_k, stream_k, reuse_stage or clusters is not supported"),
            std::string::npos);
  EXPECT_NE(compileError(*program, kFp8 + "fp8_accum=promote_pairs bm=128 bn=128 stages=3 warps_m=2 stagger=3")
                .find("use an even stagger"),
            std::string::npos);
  EXPECT_NE(compileError(*examples::gemmBf16(), "strategy=sm80_multistage bm=128 bn=128 bk=64 stages=3 warps_m=2 "
                                                "warps_n=2 stagger=2")
                .find("stagger=2 offsets cooperating consumer warpgroups, which sm80_multistage does not have"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln
