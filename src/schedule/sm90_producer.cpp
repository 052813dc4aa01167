// The sm90 producer role: TMA loads into the stage ring (PTX ISA, "cp.async.bulk.tensor",
// "mbarrier"). As kern IR, for each tile (inside the role's tile loop after partition-roles):
//
//   if warp == 0 && lane == 0:                 (one thread issues every copy)
//     for kt in 0 .. ktiles-1  carrying (s, ph) from the tile's (stage0, phase0):
//       mbarrier_wait(empty[s], ph ^ 1)        the consumers released stage s (a fresh barrier
//                                              passes parity 1 at once: the ring starts empty)
//       mbarrier_arrive_expect_tx(full[s], A box + B boxes bytes)
//       tma_load(A: k = kt*bk, m0)  tma_load(B: ...)  -> stage s, completing on full[s]
//       (s, ph) = next(s, ph)
//
// Copies past M, N or K are filled with zeros by TMA and still count their full bytes, so ragged
// tiles need nothing special here.
#include "schedule/sm90_context.h"

namespace kiln::sm90 {
using namespace ir;

std::pair<Value*, Value*> nextStage(KernBuilder& b, Value* stage, Value* phase, int stages) {
  Value* s1 = b.addConst(stage, 1);
  Value* wrap = b.cmp("eq", s1, b.i32(stages));
  return {b.select(wrap, b.i32(0), s1), b.select(wrap, b.intBin("arith.xori", phase, b.i32(1)), phase)};
}

void buildProducer(Plan& p) {
  KernBuilder& b = p.b;
  const Config& c = p.cfg;
  Value* warp = b.named(b.op1("kern.warp_id", {}, types::i32()), "warp");
  Value* lane = b.named(b.op1("kern.lane_id", {}, types::i32()), "lane");
  Value* leader = b.andi(b.cmp("eq", warp, b.i32(0)), b.cmp("eq", lane, b.i32(0)));
  Operation* ifOp = b.create("scf.if", {leader}, {}, {}, 2);
  Block* thenB = ifOp->region(0).addBlock();
  Block* elseB = ifOp->region(1).addBlock();
  {
    InsertionGuard guard(b);
    b.setInsertionPointToEnd(elseB);
    b.create("scf.yield", {}, {});
    b.setInsertionPointToEnd(thenB);
    b.setLoc(p.g.reduce->loc());
    Operation* loop = b.create("scf.for", {b.i32(0), p.ktiles, b.i32(1), p.stage0, p.phase0},
                               {types::i32(), types::i32()}, {}, 1);
    Block* body = loop->region(0).addBlock();
    Value* kt = body->addArgument(types::i32(), "kt");
    Value* s = body->addArgument(types::i32(), "s");
    Value* ph = body->addArgument(types::i32(), "ph");
    {
      InsertionGuard inner(b);
      b.setInsertionPointToEnd(body);
      b.create("kern.mbarrier_wait", {p.empty, s, b.intBin("arith.xori", ph, b.i32(1))}, {});
      b.create("kern.mbarrier_arrive_expect_tx", {p.full, s}, {}, {{"bytes", p.stageTxBytes}});
      Value* k0 = b.named(b.mulConst(kt, c.bk), "k0");
      auto coords = [&](Value* inner, Value* outer) {
        std::vector<Value*> v = {inner, outer};
        if (p.batched()) v.push_back(p.batch);
        return v;
      };
      auto load = [&](Value* map, Value* buf, const std::vector<Value*>& xy, int64_t row) {
        std::vector<Value*> ops = {map, buf, s, p.full, s};
        ops.insert(ops.end(), xy.begin(), xy.end());
        b.create("kern.tma_load", ops, {}, {{"row", row}});
      };
      b.setLoc(p.g.loadA->loc());
      load(p.tmA, p.sA, coords(k0, p.m0), 0);
      b.setLoc(p.g.loadB->loc());
      if (p.g.bKMajor) {
        load(p.tmB, p.sB, coords(k0, p.n0), 0);
      } else {
        // Row-major B: boxes of 64 columns (128 bytes) x bk rows, side by side in the stage.
        for (int j = 0; j < c.bn / 64; ++j) load(p.tmB, p.sB, coords(b.addConst(p.n0, 64 * j), k0), int64_t(j) * c.bk);
      }
      b.setLoc(p.g.reduce->loc());
      auto [s1, ph1] = nextStage(b, s, ph, c.stages);
      b.create("scf.yield", {s1, ph1}, {});
    }
    b.create("scf.yield", {}, {});
  }
}

}  // namespace kiln::sm90
