// Idle rows of a ragged group's last tile (docs/grouped-gemm.md, "The partial tile's idle
// warpgroup"). A group's last row-tile holds hi - m0 < bm of its rows; the rest belong to the next
// group or lie past M and are never stored. In a cooperative tile each consumer warpgroup owns
// rowsPerConsumer consecutive rows (warps_n = 1), so where a warpgroup's first row m0 + arow is at
// or past the group's end %mend none of its rows is stored, and its wgmmas only take the SM's
// tensor cores from the other warpgroup. That warpgroup runs the idle K loop instead:
//
//   Before (consumer.cpp, k_loop.cpp):             After:
//     %r = scf.for %kt (acc.., s, ph, prev) {        %idle = arith.cmpi sge (%m0 + %arow, %mend)
//       RELEASE(prev)  COPIES                        %acc.. = scf.if %idle {
//       wait(full[s], ph)  WGMMAS  commit              scf.for %kt (s, ph, prev) {
//       wgmma_wait 0  NEXT                               RELEASE(prev)  wait(full[s], ph)  fence
//     }                                                  commit  wgmma_wait 0  NEXT     (no wgmma)
//     wgmma_wait 0; lane0: release(last)                 }
//     epilogue(%r acc..)                                wgmma_wait 0; lane0: release(last)
//                                                       yield %acc0..     (the sums' start, unstored)
//                                                     } else { the loop above; yield %r acc.. }
//                                                     epilogue(%acc..)
//
// Why it is the same kernel for every stored element: the idle warpgroup's rows are >= %mend, and
// the ragged epilogue stores no row there (a tile with rows past %mend goes out from registers,
// masked at %mend; epilogue.cpp); the other warpgroup's wgmmas and sums are unchanged, bit for bit.
// The ring protocol is unchanged: the idle loop waits for every stage of the unit, as the live loop
// does (so it never runs a ring ahead and arrives twice in one phase), and gives each back once,
// from lane 0 of each of its warps, as the live loop's releases and the release after it do; its
// (empty) wgmma commit and wait put it in the one-stage form that sm90-multistage-ring widens to
// the ring, as it widens the live loop, from the same ring position. Its results are the
// accumulators' start: zeros where a stream-K run hands its sums over (the finisher adds them; its
// rows are not stored either way) and for FP8 promotion (no scale work either), else undefined,
// as the live loop's first wgmma would have taken them (zeros there made ptxas spill at 128x256).
//
// Legal (else null: the tile runs as before) only for a ragged walk of rows (%mend), cooperative
// warpgroups that split the rows (warps_n = 1, two or more), no reuse_stage (whose deferred release
// of the last stage the idle loop would have to mirror) and no swap_ab (whose warpgroups split
// columns). The first warpgroup (arow = 0) is never idle: every unit of the walk has a row in its
// group.
#include "schedule/sm90/lowering.h"

namespace kiln::sm90 {
using namespace ir;

Value* idleWarpgroup(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, const Warpgroup& w) {
  if (!u.mEnd || r.g.raggedK || r.geo.pingpong || r.geo.swapped || r.c.warpsN != 1 || r.geo.groups < 2 || k.smem.sR)
    return nullptr;
  return b.named(b.cmp("sge", b.add(u.m0, w.rowA), u.mEnd), "idle");
}

KLoop idleKLoop(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, Value* isLane0) {
  Value* zero = b.i32(0);
  Operation* loop = b.create("scf.for", {zero, u.ksteps, b.i32(1), u.stage0, u.phase0, zero},
                             {types::i32(), types::i32(), types::i32()}, {}, 1);
  Block* body = loop->region(0).addBlock();
  Value* kt = body->addArgument(types::i32(), "kt");
  Value* s = body->addArgument(types::i32(), "s");
  Value* ph = body->addArgument(types::i32(), "ph");
  Value* prev = body->addArgument(types::i32(), "prev");
  {
    InsertionGuard guard(b);
    b.setInsertionPointToEnd(body);
    b.ifThen(b.andi(b.cmp("sgt", kt, zero), isLane0), [&] { releaseStage(b, r, k, prev); });
    b.create("kern.mbarrier_wait", {k.smem.full, s, ph}, {});
    // ptxas makes the empty group one HGMMA.64x8x16 of zero registers, and would inject this
    // fence before it itself (warning C7519) if it were not here.
    b.create("kern.wgmma_fence", {}, {});
    b.create("kern.wgmma_commit", {}, {});
    b.create("kern.wgmma_wait", {}, {}, {{"pending", int64_t{0}}});
    auto [s1, ph1] = nextStage(b, s, ph, 1);
    b.create("scf.yield", {s1, ph1, s}, {});
  }
  KLoop out;
  out.last = loop->result(2);
  return out;
}

}  // namespace kiln::sm90
