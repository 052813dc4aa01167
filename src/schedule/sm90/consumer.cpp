// The sm90 consumer role: wgmma from the stage ring, then the fused epilogue (PTX ISA,
// "wgmma.mma_async", "wgmma.fence", "wgmma.commit_group", "wgmma.wait_group"; descriptors in
// wgmma_desc.h). The lowering writes it as the unit's one role, its K loop also issuing the
// copies from one thread; sm90-warp-specialize moves those to a producer role. As kern IR, for
// each tile:
//
//   acc = 0                                    (N/2 f32 per m64 block, per thread)
//   the K loop over the unit's K steps         k_loop.cpp: wgmma per stage, one group in flight
//   wgmma_wait(0); if lane == 0: mbarrier_arrive(empty[last])
//   epilogue(acc)                              epilogue.cpp, through the m16n8 view below
//                                              (split_k, stream_k: split_handover.cpp first)
//
// reuse_stage (docs/sm90-strategy.md): the arrive after the loop is skipped, the epilogue stages
// its boxes past the two slots in that last stage, and the next tile's first K step gives the
// stage back once the elected thread's cp.async.bulk.wait_group.read 0 has seen them read.
//
// fp8_accum=promote / promote_pairs (FP8 operands): the K loop's accumulators start at the
// program's value and its wgmmas are marked for sm90-promote-fp8 (k_loop.cpp).
//
// consumers=cooperative: the consumer warpgroups split each tile's rows and all run this for every
// tile. consumers=pingpong: warpgroup wg runs it for tiles iter = wg, wg + 2, ... of the CTA's tile
// sequence, each over the whole tile, so one warpgroup's epilogue overlaps the other's K loop.
//
// Accumulator layout (PTX ISA, "Matrix Fragments for wgmma.mma_async.m64nNk16", accumulator D):
// warp v of the warpgroup owns rows 16v .. 16v+15 of the m64 block; register 4j + e holds row
// 16v + g + 8(e >= 2), column 8j + 2t + (e & 1) (g = lane / 4, t = lane % 4): per n8 column block
// exactly the m16n8 C fragment of mma.sync (fragment_layout.h). So the epilogue sees each consumer
// warp as an sm80 warp with one m16 tile per m64 block (64 rows apart) and bn/8 n8 tiles.
#include "schedule/sm90/lowering.h"

namespace kiln::sm90 {
using namespace ir;

Value* groupBarrier(KernBuilder& b, Value* wg) { return b.named(b.addConst(wg, 1), "wgbar"); }

Value* isElected(KernBuilder& b) {
  Value* tid = b.op1("kern.thread_id", {}, types::i32());  // ops in a fixed order, not argument order
  Value* inGroup = b.rem(tid, b.i32(128));
  return b.cmp("eq", inGroup, b.i32(0));
}

namespace {

// The warpgroup's first row of the A stage: its share of the tile, or (ping-pong) the tile. With
// warps_n its row share is wg / warps_n, and its columns start at colB, its first B stage row:
// the column itself for a K-major B, the first K row of its first 64-column box for a row-major B.
Warpgroup placeWarpgroup(KernBuilder& b, const Request& r, Value* lane, Value* cwarp, Value* wg) {
  const Config& c = r.c;
  Value* zero = b.i32(0);
  Warpgroup w{lane, cwarp, wg, zero, zero, zero};
  if (!r.geo.pingpong) {
    Value* wm = c.warpsN > 1 ? b.div(wg, b.i32(c.warpsN)) : wg;
    w.rowA = b.named(b.mulConst(wm, r.geo.rowsPerConsumer), "arow");
  }
  if (c.warpsN > 1) {
    const int cols = r.geo.colsPerConsumer;
    Value* wn = b.rem(wg, b.i32(c.warpsN));
    w.colB = b.named(b.mulConst(wn, cols), "bcol");
    w.rowB = b.named(b.mulConst(wn, r.g.bKMajor ? cols : cols / 64 * c.bk), "brow");
  }
  return w;
}

// Ping-pong: wait for the turn. The other warpgroup passes it (turn[wg]) when it has issued the K
// loop of the previous tile, so every stage of the earlier tiles has been waited on: the full
// barriers this K loop waits on are at most one phase behind (parity alone then tells the phases
// apart), and the two warpgroups' MMAs do not interleave. Tile iter waits for the signal of tile
// iter - 1, the ((iter - 1) / 2)-th on this barrier.
void waitForTurn(KernBuilder& b, const Kernel& k, const Unit& u, Value* wg) {
  b.ifThen(b.cmp("sgt", u.iter, b.i32(0)), [&] {
    Value* parity = b.rem(b.div(b.addConst(u.iter, -1), b.i32(2)), b.i32(2));
    b.create("kern.mbarrier_wait", {k.smem.turn, wg, parity}, {});
  });
}

// After the K loop: every wgmma group retired, the last stage released (reuse_stage: the epilogue
// stages boxes in it and the next tile gives it back), and with ping-pong the turn passed: this K
// loop is issued, the other warpgroup may start its next one.
void finishKLoop(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, Value* wg, Value* isLane0,
                 Value* last) {
  b.create("kern.wgmma_wait", {}, {}, {{"pending", int64_t{0}}});
  b.ifThen(isLane0, [&] {
    // (fp8_accum=promote: sm90-promote-fp8 gives every stage back in its K step instead, and drops
    // this release, which it finds directly under lane0: FP8 groups along K, whose block scales
    // need the promotion, leave it unguarded.) Groups along K: an empty group's unit ran no step
    // and holds no stage.
    if (!k.smem.sR && u.kEnd && !r.g.fp8)
      b.ifThen(b.cmp("sgt", u.ksteps, b.i32(0)), [&] { releaseStage(b, r, k, last); });
    else if (!k.smem.sR) releaseStage(b, r, k, last);
    if (r.geo.pingpong) b.create("kern.mbarrier_arrive", {k.smem.turn, b.intBin("arith.xori", wg, b.i32(1))}, {});
  });
}

// The epilogue of the unit's accumulators `out`: at once, or (split_k, stream_k) after the units
// that do not finish their tile hand their sums over and the one that does adds them up.
// epilogue_loads=prefetch: every box's loads issued together where the epilogue starts, so their L1
// round trips overlap one another instead of each box's first multiply waiting on its own (the ncu
// source page of 128x128 promote_pairs at 4096x7168x2048 had a third of the epilogue's stall
// samples there, long scoreboard).
bool runEpilogue(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, const Warpgroup& w,
                 const std::vector<Value*>& out, Value* ringStage, EarlyLoads& early, ir::DiagnosticEngine& diag) {
  const EpilogueLoads when = r.c.epilogueLoads;
  EarlyLoads* earlyLoads = when == EpilogueLoads::Early ? &early : nullptr;
  auto preloadAfterLoop = [&]() -> bool {
    if (when != EpilogueLoads::Prefetch) return true;
    earlyLoads = &early;
    return preloadEpilogue(b, r, k, u, w, early, diag);
  };
  if (r.geo.splits == 1 && !r.geo.streamK) {
    if (!preloadAfterLoop()) return false;
    return buildEpilogue(b, r, k, u, w, {out, ringStage, earlyLoads}, diag);
  }
  return buildSplitEpilogue(b, r, k, u, w.wg, out, [&](const std::vector<Value*>& sums) {
    return preloadAfterLoop() && buildEpilogue(b, r, k, u, w, {sums, nullptr, earlyLoads}, diag);
  });
}

// One unit's work for the calling consumer warpgroup `wg` (its warp `cwarp` among the consumer
// warps): the K loop, then the epilogue.
bool buildTile(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, Value* lane, Value* cwarp, Value* wg,
               ir::DiagnosticEngine& diag) {
  const Config& c = r.c;
  const GemmProgram& g = r.g;
  const Warpgroup w = placeWarpgroup(b, r, lane, cwarp, wg);
  Value* isLane0 = b.cmp("eq", lane, b.i32(0));
  // reuse_stage: the warpgroup's elected thread (it issues the TMA stores), and the ring stage of
  // the previous tile's last K step: in a ring of one the stage this tile starts at
  // (sm90-multistage-ring makes it the stage before that).
  Value *elected = nullptr, *prevLast = nullptr;
  if (k.smem.sR) {
    elected = isElected(b);
    prevLast = u.stage0;
  }
  // epilogue_loads=early: the epilogue's vectors and scalars (a row or column scale, a bias row) are
  // loaded now, so their latency passes behind the K loop instead of after it (ping-pong: behind
  // the wait for the turn too); epilogue_loads=prefetch: their lines are brought into L1 now, and
  // the epilogue loads them all at its start, with no register held through the K loop.
  EarlyLoads early;
  if (c.epilogueLoads == EpilogueLoads::Early && !preloadEpilogue(b, r, k, u, w, early, diag)) return false;
  if (c.epilogueLoads == EpilogueLoads::Prefetch && !prefetchEpilogue(b, r, k, u, w, diag)) return false;
  b.setLoc(g.reduce->loc());
  if (r.geo.pingpong) waitForTurn(b, k, u, wg);
  // Where every tile's accumulators start at zero and its K loop runs at least once (no split-K or
  // stream-K unit, whose run may be empty), the first wgmma of the tile ignores them (scale_d = kt
  // != 0), so they start undefined instead of being zeroed: 128 register moves per tile and thread
  // less between one tile's epilogue and the next tile's first wgmma. fp8_accum=promote:
  // sm90-promote-fp8 makes each K step's wgmmas sum from zero into fresh registers, added to the
  // carried f32 accumulators once they are done; so those start at the program's initial value.
  const bool promote = c.fp8Accum != Fp8Accum::Fast;
  // Groups along K: an empty group's K loop runs no step, and its tile is zeros.
  const bool firstIgnoresAcc = g.accInit == 0.0 && r.geo.splits <= 1 && !r.geo.streamK && !promote && !g.raggedK;
  Value* accInit = firstIgnoresAcc ? b.op1("kern.undef", {}, types::f32()) : b.f32(g.accInit);
  std::vector<Value*> acc0(size_t(r.geo.accumulators()), accInit);
  // The thread that issues the K steps' copies until sm90-warp-specialize gives them to the
  // producer: the first of the consumer warpgroups, or with ping-pong of the warpgroup whose tile
  // it is (the turn barriers order the two warpgroups' K loops, so the copies go out in ring order).
  Value* first = r.geo.pingpong ? b.rem(w.cwarp, b.i32(4)) : w.cwarp;
  Value* copier = b.andi(b.cmp("eq", first, b.i32(0)), isLane0);
  const KLoop kl = buildKLoop(b, r, k, u, w, copier, isLane0, acc0, firstIgnoresAcc, elected, prevLast);
  finishKLoop(b, r, k, u, wg, isLane0, kl.last);
  std::vector<Value*> out;
  for (Value* v : kl.acc) out.push_back(b.named(v, "acc"));
  return runEpilogue(b, r, k, u, w, out, k.smem.sR ? kl.last : nullptr, early, diag);
}

}  // namespace

bool buildConsumer(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, ir::DiagnosticEngine& diag) {
  Value* warp = b.named(b.op1("kern.warp_id", {}, types::i32()), "warp");
  Value* lane = b.named(b.op1("kern.lane_id", {}, types::i32()), "lane");
  Value* cwarp = b.named(b.addConst(warp, -4), "cwarp");  // consumer warps follow the producer warpgroup
  Value* wg = b.named(b.div(cwarp, b.i32(4)), "wg");
  if (!r.geo.pingpong) return buildTile(b, r, k, u, lane, cwarp, wg, diag);
  // Ping-pong: warpgroup wg takes the CTA's tiles iter = wg, wg + 2, ... The ring hands out stages
  // in tile order, so one warpgroup's next K loop starts as the other's nears its end, and its
  // epilogue runs while the other's MMAs do.
  Value* mine = b.cmp("eq", b.rem(u.iter, b.i32(r.c.warpsM)), wg);
  Operation* turn = b.create("scf.if", {mine}, {}, {}, 2);
  InsertionGuard guard(b);
  b.setInsertionPointToEnd(turn->region(1).addBlock());
  b.create("scf.yield", {}, {});
  b.setInsertionPointToEnd(turn->region(0).addBlock());
  bool ok = buildTile(b, r, k, u, lane, cwarp, wg, diag);
  b.create("scf.yield", {}, {});
  return ok;
}

}  // namespace kiln::sm90
