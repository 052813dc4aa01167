// The sm90 consumer role: wgmma from the stage ring, then the fused epilogue (PTX ISA,
// "wgmma.mma_async", "wgmma.fence", "wgmma.commit_group", "wgmma.wait_group"; descriptors in
// wgmma_desc.h). As kern IR, for each tile:
//
//   acc = 0                                    (N/2 f32 per m64 block, per thread)
//   for kt in 0 .. ktiles-1  carrying (acc, s, ph, prev) from (0, stage0, phase0, -):
//     mbarrier_wait(full[s], ph)               TMA has landed stage s
//     wgmma_fence                              the accumulators were last written by other code
//     for kk in 0 .. bk/kstep-1, for each m64 block i:   (kstep: 16 for 16-bit operands, 32 for FP8)
//       acc_i = wgmma(desc(A, s, rows of i, k step kk), desc(B, s, k step kk), acc_i)
//     wgmma_commit                             one group per K step
//     wgmma_wait(1)                            the previous K step's group is done ...
//     if kt > 0 && lane == 0: mbarrier_arrive(empty[prev])   ... so its stage goes back to TMA
//     (s, ph) = next(s, ph); prev = s
//   wgmma_wait(0); if lane == 0: mbarrier_arrive(empty[prev])
//   epilogue(acc)                              sm90_epilogue.cpp, through the m16n8 view below
//
// reuse_stage (docs/sm90-strategy.md): the arrive after the loop is skipped, the epilogue stages
// its boxes past the two slots in that last stage, and the next tile's first K step gives the
// stage back once the elected thread's cp.async.bulk.wait_group.read 0 has seen them read.
//
// fp8_accum=promote / promote_pairs (FP8 operands): this loop is written as above, its accumulators
// starting at the program's value and its wgmmas marked {accumulate = "promote" | "promote_pairs"};
// the pass sm90-promote-fp8 (sm90/promote_fp8.cpp) makes each K step sum from zero into fresh
// registers added to the f32 accumulators once its group is waited for.
//
// consumers=cooperative: the consumer warpgroups split each tile's rows and all run this for every
// tile. consumers=pingpong: warpgroup wg runs it for tiles iter = wg, wg + 2, ... of the CTA's tile
// sequence, each over the whole tile, so one warpgroup's epilogue overlaps the other's K loop.
//
// Keeping one group in flight while waiting means the tensor cores always have the next K step's
// wgmma queued behind the one that finishes. The empty barriers count one arrival per consumer
// warp: a warp arrives (from lane 0, after its own wait_group, which all its lanes executed) only
// when its part of the warpgroup's reads of the stage is complete.
//
// Accumulator layout (PTX ISA, "Matrix Fragments for wgmma.mma_async.m64nNk16", accumulator D):
// warp v of the warpgroup owns rows 16v .. 16v+15 of the m64 block; register 4j + e holds row
// 16v + g + 8(e >= 2), column 8j + 2t + (e & 1) (g = lane / 4, t = lane % 4): per n8 column block
// exactly the m16n8 C fragment of mma.sync (fragment_layout.h). So the epilogue sees each consumer
// warp as an sm80 warp with one m16 tile per m64 block (64 rows apart) and bn/8 n8 tiles.
#include <functional>
#include <tuple>

#include "schedule/sm90_context.h"
#include "target/wgmma_desc.h"

namespace kiln::sm90 {
using namespace ir;

Value* groupBarrier(KernBuilder& b, Value* wg) { return b.named(b.addConst(wg, 1), "wgbar"); }

Value* isElected(KernBuilder& b) {
  Value* tid = b.op1("kern.thread_id", {}, types::i32());  // ops in a fixed order, not argument order
  Value* inGroup = b.rem(tid, b.i32(128));
  return b.cmp("eq", inGroup, b.i32(0));
}

// All arrives of releaseStage are issued after this warp's wait_group retired its wgmma groups, so
// its reads of the stage are complete before any producer can see the arrival, and so before its
// next TMA writes here.
void releaseStage(Plan& p, Value* s) {
  p.b.create("kern.mbarrier_arrive", {p.empty, s}, {});
  int n = p.clusterSize();
  // Peer rank ^ j for j = 1 .. n - 1 (n a power of two): each other block once.
  for (int j = 1; j < n; ++j)
    p.b.create("kern.mbarrier_arrive_remote", {p.empty, s, p.b.intBin("arith.xori", p.rank, p.b.i32(j))}, {});
}


void issueKStep(Plan& p, const StepOperands& at, Value* s, Value* ph, const std::function<Value*(Value* on)>& firstScale,
                std::vector<Value*>& sums) {
  KernBuilder& b = p.b;
  const Config& c = p.cfg;
  const GemmProgram& g = p.g;
  const int blocks = p.wgmmaBlocks(), nacc = p.accPerBlock();
  b.create("kern.mbarrier_wait", {p.full, s, ph}, {}, p.waitAttrs());
  b.setLoc(g.dot->loc());
  b.create("kern.wgmma_fence", {}, {});
  Value* on = b.i1(true);
  Value* first = firstScale(on);
  // One wgmma takes 32 bytes of K from each operand's 128-byte row: k16 for 16-bit operands,
  // k32 for FP8 (whose forms read both operands K-major).
  const int kStep = 32 / (bitWidth(g.abType) / 8);
  // Descriptors of the stage's operands for k step kk: A's rows `row` on from rowA (K-major),
  // and B's columns from 64 j past the warpgroup's (K-major B: its rows; row-major B: its box j,
  // whose K rows follow one another, the next box LBO further).
  auto descA = [&](int kk, int64_t row) {
    return b.op1("kern.wgmma_desc", {p.sA, s, at.rowA}, types::i64(),
                 {{"row", row}, {"col", int64_t(kStep * kk)}, {"major", "k"}, {"lbo", wgmma::kKMajorLbo},
                  {"sbo", wgmma::kKMajorSbo}});
  };
  auto descB = [&](int kk, int64_t j) {
    if (g.bKMajor)
      return b.op1("kern.wgmma_desc", {p.sB, s, at.rowB}, types::i64(),
                   {{"row", 64 * j}, {"col", int64_t(kStep * kk)}, {"major", "k"}, {"lbo", wgmma::kKMajorLbo},
                    {"sbo", wgmma::kKMajorSbo}});
    return b.op1("kern.wgmma_desc", {p.sB, s, at.rowB}, types::i64(),
                 {{"row", j * c.bk + kStep * kk}, {"col", int64_t{0}}, {"major", "mn"},
                  {"lbo", wgmma::mnMajorLbo(c.bk)}, {"sbo", wgmma::kMnMajorSbo}});
  };
  // wgmma's A is the warpgroup's own operand: A's rows, or with swap_ab B's columns.
  ScalarType wa = p.swapped() ? g.bType : g.abType, wb = p.swapped() ? g.abType : g.bType;
  std::vector<NamedAttr> mmaAttrs = {{"shape", Attribute::ints({64, p.wgmmaN(), kStep})},
                                     {"ab", std::string(scalarName(wa))}};
  if (wb != wa) mmaAttrs.push_back({"b", std::string(scalarName(wb))});
  if (p.swapped()) {
    mmaAttrs.push_back({"trans_b", false});
    mmaAttrs.push_back({"trans_a", !g.bKMajor});
  } else {
    mmaAttrs.push_back({"trans_b", !g.bKMajor});
  }
  // fp8_accum=promote / promote_pairs: the program's FP8 numerics, for sm90-promote-fp8.
  if (c.fp8Accum != Fp8Accum::Fast) mmaAttrs.push_back({"accumulate", std::string(fp8AccumName(c.fp8Accum))});
  for (int kk = 0; kk < c.bk / kStep; ++kk) {
    // Block i: A's rows 64 i .. 64 i + 63 of the warpgroup times the whole B stage; swap_ab: B's
    // columns 64 i .. 64 i + 63 as wgmma's A (MN-major for a row-major B) times the warpgroup's
    // A rows as its B (K-major).
    Value* shared = p.swapped() ? descA(kk, 0) : descB(kk, 0);
    for (int i = 0; i < blocks; ++i) {
      Value* own = p.swapped() ? descB(kk, i) : descA(kk, 64 * i);
      std::vector<Value*> ops = {kk == 0 ? first : on, own, shared};
      ops.insert(ops.end(), sums.begin() + i * nacc, sums.begin() + (i + 1) * nacc);
      Operation* mma = b.create("kern.wgmma", ops, std::vector<Type>(size_t(nacc), types::f32()), mmaAttrs);
      for (int r = 0; r < nacc; ++r) sums[size_t(i * nacc + r)] = b.named(mma->result(unsigned(r)), "d");
    }
  }
  b.create("kern.wgmma_commit", {}, {});
}

namespace {

// One tile's work for the calling consumer warpgroup `wg` (its warp `cwarp` among the consumer
// warps): the K loop, then the epilogue.
bool buildTile(Plan& p, Value* lane, Value* cwarp, Value* wg) {
  KernBuilder& b = p.b;
  const Config& c = p.cfg;
  const GemmProgram& g = p.g;
  int rows = p.rowsPerConsumer(), blocks = p.wgmmaBlocks(), nacc = p.accPerBlock();
  Value* zero = b.i32(0);
  // The warpgroup's first row of the A stage: its share of the tile, or (ping-pong) the tile. With
  // warps_n its row share is wg / warps_n, and its columns start at colB, its first B stage row:
  // the column itself for a K-major B, the first K row of its first 64-column box for a row-major B.
  Value *rowA = zero, *colB = zero, *rowB = zero;
  if (!p.pingpong()) {
    Value* wm = c.warpsN > 1 ? b.div(wg, b.i32(c.warpsN)) : wg;
    rowA = b.named(b.mulConst(wm, rows), "arow");
  }
  if (c.warpsN > 1) {
    Value* wn = b.rem(wg, b.i32(c.warpsN));
    colB = b.named(b.mulConst(wn, p.colsPerConsumer()), "bcol");
    rowB = b.named(b.mulConst(wn, g.bKMajor ? p.colsPerConsumer() : p.colsPerConsumer() / 64 * c.bk), "brow");
  }
  Value* isLane0 = b.cmp("eq", lane, zero);
  // reuse_stage: the warpgroup's elected thread (it issues the TMA stores), and the ring stage of
  // the previous tile's last K step (every tile runs ksteps of them).
  Value *elected = nullptr, *prevLast = nullptr;
  if (p.sR) {
    elected = isElected(b);
    prevLast = b.named(b.rem(b.addConst(p.stage0, c.stages - 1), b.i32(c.stages)), "prevlast");
  }

  // epilogue_loads=early: the epilogue's vectors and scalars (a row or column scale, a bias row) are
  // loaded now, so their latency passes behind the K loop instead of after it (ping-pong: behind
  // the wait for the turn too); epilogue_loads=prefetch: their lines are brought into L1 now, and
  // the epilogue loads them all at its start (preloadAfterLoop), with no register held through
  // the K loop.
  EarlyLoads early;
  const bool loadEarly = c.epilogueLoads == EpilogueLoads::Early;
  if (loadEarly && !preloadEpilogue(p, lane, cwarp, rowA, colB, early)) return false;
  if (c.epilogueLoads == EpilogueLoads::Prefetch && !prefetchEpilogue(p, lane, cwarp, rowA)) return false;

  // Ping-pong: wait for the turn. The other warpgroup passes it (turn[wg]) when it has issued the
  // K loop of the previous tile, so every stage of the earlier tiles has been waited on: the full
  // barriers this K loop waits on are at most one phase behind (parity alone then tells the
  // phases apart), and the two warpgroups' MMAs do not interleave. Tile iter waits for the signal
  // of tile iter - 1, the ((iter - 1) / 2)-th on this barrier.
  b.setLoc(g.reduce->loc());
  if (p.pingpong()) {
    b.ifThen(b.cmp("sgt", p.iter, zero), [&] {
      Value* parity = b.rem(b.div(b.addConst(p.iter, -1), b.i32(2)), b.i32(2));
      b.create("kern.mbarrier_wait", {p.turn, wg, parity}, {});
    });
  }

  // The K loop. Where every tile's accumulators start at zero and its K loop runs at least once
  // (no split-K or stream-K unit, whose run may be empty), the first wgmma of the tile ignores them
  // (scale_d = kt != 0), so they start undefined instead of being zeroed: 128 register moves per
  // tile and thread less between one tile's epilogue and the next tile's first wgmma.
  // fp8_accum=promote: sm90-promote-fp8 makes each K step's wgmmas sum from zero into fresh
  // registers, added to the carried f32 accumulators once they are done; so those start at the
  // program's initial value.
  const bool promote = c.fp8Accum != Fp8Accum::Fast;
  const bool firstIgnoresAcc = g.accInit == 0.0 && c.splitK <= 1 && !c.streamK && !promote;
  Value* accInit = firstIgnoresAcc ? b.op1("kern.undef", {}, types::f32()) : b.f32(g.accInit);
  std::vector<Value*> acc0(size_t(blocks * nacc), accInit);
  StepOperands step{rowA, rowB};
  std::vector<Value*> kAcc;  // the accumulators after the K loop(s)
  Value* last = nullptr;      // the stage of the last K step (its release waits for the loop's end)
  {
    std::vector<Value*> forOps = {zero, p.ksteps, b.i32(1)};
    forOps.insert(forOps.end(), acc0.begin(), acc0.end());
    forOps.push_back(p.stage0);
    forOps.push_back(p.phase0);
    forOps.push_back(zero);  // prev: unused in the first step
    std::vector<Type> resultTypes(acc0.size(), types::f32());
    for (int i = 0; i < 3; ++i) resultTypes.push_back(types::i32());
    Operation* loop = b.create("scf.for", forOps, resultTypes, {}, 1);
    Block* body = loop->region(0).addBlock();
    Value* kt = body->addArgument(types::i32(), "kt");
    std::vector<Value*> acc;
    for (size_t i = 0; i < acc0.size(); ++i) acc.push_back(body->addArgument(types::f32(), "acc"));
    Value* s = body->addArgument(types::i32(), "s");
    Value* ph = body->addArgument(types::i32(), "ph");
    Value* prev = body->addArgument(types::i32(), "prev");
    {
      InsertionGuard guard(b);
      b.setInsertionPointToEnd(body);
      // scale_d of the K step's first wgmma: the tile's first step ignores the undefined start.
      issueKStep(p, step, s, ph, [&](Value* on) { return firstIgnoresAcc ? b.cmp("ne", kt, zero) : on; }, acc);
      b.create("kern.wgmma_wait", {}, {}, {{"pending", int64_t{1}}});
      b.setLoc(g.reduce->loc());
      Value* release = b.andi(b.cmp("sgt", kt, zero), isLane0);
      b.ifThen(release, [&] { releaseStage(p, prev); });
      // reuse_stage: the previous tile's last stage holds boxes of its epilogue until their TMA
      // stores have read them; with this tile's first wgmmas queued, the elected thread waits for
      // those reads, and then every warp gives the stage back (the arrivals it skipped then).
      if (p.sR) {
        b.ifThen(b.andi(b.cmp("eq", kt, zero), b.cmp("sgt", p.iter, zero)), [&] {
          b.ifThen(elected, [&] {
            b.create("kern.bulk_wait", {}, {}, {{"pending", int64_t{0}}, {"read", true}});
          });
          b.create("kern.named_barrier", {groupBarrier(b, wg)}, {}, {{"threads", int64_t{128}}});
          b.ifThen(isLane0, [&] { releaseStage(p, prevLast); });
        });
      }
      auto [s1, ph1] = nextStage(b, s, ph, c.stages);
      std::vector<Value*> yields = acc;
      yields.push_back(s1);
      yields.push_back(ph1);
      yields.push_back(s);
      b.create("scf.yield", yields, {});
    }
    for (size_t i = 0; i < acc0.size(); ++i) kAcc.push_back(loop->result(unsigned(i)));
    last = loop->result(unsigned(acc0.size() + 2));
  }
  b.create("kern.wgmma_wait", {}, {}, {{"pending", int64_t{0}}});
  b.ifThen(isLane0, [&] {
    // reuse_stage: the epilogue stages boxes in this stage; the next tile gives it back.
    // (fp8_accum=promote: sm90-promote-fp8 gives every stage back in its K step instead.)
    if (!p.sR) releaseStage(p, last);
    // Ping-pong: this K loop is issued; the other warpgroup may start its next one.
    if (p.pingpong()) b.create("kern.mbarrier_arrive", {p.turn, b.intBin("arith.xori", wg, b.i32(1))}, {});
  });

  std::vector<Value*> out;
  for (Value* v : kAcc) out.push_back(b.named(v, "acc"));
  EarlyLoads* earlyLoads = loadEarly ? &early : nullptr;
  // epilogue_loads=prefetch: every unit's loads issued together where the epilogue starts, so
  // their L1 round trips overlap one another instead of each unit's first multiply waiting on its
  // own (the ncu source page of 128x128 promote_pairs at 4096x7168x2048 had a third of the
  // epilogue's stall samples there, long scoreboard).
  auto preloadAfterLoop = [&]() -> bool {
    if (c.epilogueLoads != EpilogueLoads::Prefetch) return true;
    earlyLoads = &early;
    return preloadEpilogue(p, lane, cwarp, rowA, colB, early);
  };
  if (p.splits() == 1 && !p.streamK()) {
    if (!preloadAfterLoop()) return false;
    return buildEpilogue(p, lane, cwarp, wg, rowA, colB, out, p.sR ? last : nullptr, earlyLoads);
  }
  // split_k, stream_k: the units that do not finish their tile hand their sums over; the one that
  // does adds them up and runs the epilogue (sm90_split_handover.cpp).
  return buildSplitEpilogue(p, wg, out, [&](const std::vector<Value*>& sums) {
    return preloadAfterLoop() && buildEpilogue(p, lane, cwarp, wg, rowA, colB, sums, nullptr, earlyLoads);
  });
}

}  // namespace

bool buildConsumer(Plan& p) {
  KernBuilder& b = p.b;
  Value* warp = b.named(b.op1("kern.warp_id", {}, types::i32()), "warp");
  Value* lane = b.named(b.op1("kern.lane_id", {}, types::i32()), "lane");
  Value* cwarp = b.named(b.addConst(warp, -4), "cwarp");  // consumer warps follow the producer warpgroup
  Value* wg = b.named(b.div(cwarp, b.i32(4)), "wg");
  if (!p.pingpong()) return buildTile(p, lane, cwarp, wg);
  // Ping-pong: warpgroup wg takes the CTA's tiles iter = wg, wg + 2, ... The ring hands out stages
  // in tile order, so one warpgroup's next K loop starts as the other's nears its end, and its
  // epilogue runs while the other's MMAs do.
  Value* mine = b.cmp("eq", b.rem(p.iter, b.i32(p.cfg.warpsM)), wg);
  Operation* turn = b.create("scf.if", {mine}, {}, {}, 2);
  InsertionGuard guard(b);
  b.setInsertionPointToEnd(turn->region(1).addBlock());
  b.create("scf.yield", {}, {});
  b.setInsertionPointToEnd(turn->region(0).addBlock());
  bool ok = buildTile(p, lane, cwarp, wg);
  b.create("scf.yield", {}, {});
  return ok;
}

}  // namespace kiln::sm90
