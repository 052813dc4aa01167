// expand-tile-loop's {stream_k = W} walk as kern IR (contract in tile_walk.h; the walk is specified
// in kern_ops.h, kern.tile_loop {stream_k}): with T tiles of ks K steps on P walkers,
//
//   D = T % P == 0 ? T / P : max(T / P - (W - 1), 0)          data-parallel waves
//   S = (T - D P) ks                                           K steps shared out
//   R = max(min(P, S), 1)                                      runs, walker b's [s, e) =
//   s = min(b, R) S / R,  e = min(b + 1, R) S / R              (64-bit products)
//   rot: the run's first unit ends a tile lower walkers began (s % ks != 0, and it reaches the
//        tile's end); it is walked last
//
//   scf.for %iter = 0 to D + (tiles the run touches) iter_args(%pos = s + (rot ? its length : 0)) {
//     (tile, kbase, ksteps, done, peers, pos') =
//         iter < D  ? (b + iter P, 0, ks, iter ks, 0, pos)                         a whole tile
//       : pos < e   ? (D P + pos / ks, pos % ks, up to the tile's or the run's end, ..., 0, pos + ksteps)
//       :             (D P + s / ks, s % ks, rot's length, ..., peers, pos)        the rotated first unit
//     BODY
//     scf.yield pos'
//   }
//
// peers = b + 1 - ceil((tile start + 1) R / S), the walker whose run holds the tile's first step
// being the lowest of them. The three arms are the three places a unit comes from; the loop runs
// exactly one iteration per unit, so the arms are chosen in walk order.
//
// {ragged, stream_k}: T is the groups' tile count, summed from the bounds by every walker before
// the loop (raggedGrid), so D, S, R and the runs above are closed forms of values the kernel
// reads itself: no host synchronization. A tile's (m0, n0, group, mend) come from raggedPlace
// (the unit's tile among its group's tiles, in its group's own grid), not from the dense grid.
#include "transforms/tile_walk.h"

namespace kiln::transforms::tilewalk {
using namespace ir;

namespace {

// (x * y + add) / z in 64 bits (x * y may pass 2^32; the quotient fits 32 bits). add: or none.
Value* mulDivWide(KernBuilder& b, Value* x, Value* y, Value* z, Value* add = nullptr) {
  Value* prod = b.mul(b.cast(x, types::i64()), b.cast(y, types::i64()));
  if (add) prod = b.add(prod, b.cast(add, types::i64()));
  return b.cast(divu(b, prod, b.cast(z, types::i64())), types::i32());
}

// The walker's share of the shared-out steps, computed once before the loop.
struct Run {
  Value *ks, *waves, *dpTiles, *dpDone, *work, *runs, *s, *e, *firstTile, *kb1, *len1, *rot;
};

Run planRun(KernBuilder& b, const Operation& loop, const Shape& s, const Grid& g, const Walkers& w) {
  Run r;
  r.ks = loop.operand(s.ragged ? 4 : 3);  // {ragged}: after the bounds
  Value* full = divu(b, g.total, w.count);
  Value* lessWaves = b.op1("arith.maxsi", {b.sub(full, b.i32(s.streamK - 1)), b.i32(0)}, types::i32());
  Value* whole = b.cmp("eq", remu(b, g.total, w.count), b.i32(0));
  r.waves = b.named(b.select(whole, full, lessWaves), "waves");
  r.dpTiles = b.named(b.mul(r.waves, w.count), "dp_tiles");
  r.dpDone = b.named(b.mul(r.waves, r.ks), "dp_done");
  r.work = b.named(b.mul(b.sub(g.total, r.dpTiles), r.ks), "work");
  r.runs = b.named(b.op1("arith.maxsi", {b.min(w.count, r.work), b.i32(1)}, types::i32()), "runs");
  r.s = b.named(mulDivWide(b, b.min(w.id, r.runs), r.work, r.runs), "run_start");
  r.e = b.named(mulDivWide(b, b.min(b.addConst(w.id, 1), r.runs), r.work, r.runs), "run_end");
  r.firstTile = b.named(divu(b, r.s, r.ks), "first_tile");
  r.kb1 = b.named(remu(b, r.s, r.ks), "first_kbase");
  Value* end1 = b.min(b.add(r.kb1, b.sub(r.e, r.s)), r.ks);
  r.rot = b.named(b.andi(b.cmp("ne", r.kb1, b.i32(0)), b.cmp("eq", end1, r.ks)), "rot");
  r.len1 = b.named(b.select(r.rot, b.sub(end1, r.kb1), b.i32(0)), "first_ksteps");
  return r;
}

// One arm of the unit's choice: yields (tile, kbase, ksteps, done, peers, pos').
void yieldUnit(KernBuilder& b, std::vector<Value*> unit) { b.create("scf.yield", std::move(unit), {}); }

}  // namespace

UnitLoop streamKLoop(KernBuilder& b, const Operation& loop, const Shape& s, const Grid& g, const Walkers& w) {
  Run r = planRun(b, loop, s, g, w);
  // One iteration per unit: the data-parallel tiles and the tiles the run touches.
  Value* touched = b.sub(divu(b, b.addConst(b.add(r.e, r.ks), -1), r.ks), r.firstTile);
  Value* units = b.named(b.add(r.waves, b.select(b.cmp("sgt", r.e, r.s), touched, b.i32(0))), "units");
  UnitLoop u;
  u.loop = b.create("scf.for", {b.i32(0), units, b.i32(1), b.add(r.s, r.len1)}, {types::i32()}, {}, 1);
  Block* body = u.loop->region(0).addBlock();
  const Block& old = loop.body();
  Value* iter = body->addArgument(types::i32(), old.argument(0)->nameHint());
  Value* pos = body->addArgument(types::i32(), "pos");
  b.setInsertionPointToEnd(body);
  std::vector<Type> six(6, types::i32());
  Operation* dp = b.create("scf.if", {b.cmp("slt", iter, r.waves)}, six, {}, 2);
  {
    InsertionGuard guard(b);
    b.setInsertionPointToEnd(dp->region(0).addBlock());
    Value* zero = b.i32(0);
    yieldUnit(b, {b.add(b.mul(iter, w.count), w.id), zero, r.ks, b.mul(iter, r.ks), zero, pos});
    b.setInsertionPointToEnd(dp->region(1).addBlock());
    Operation* run = b.create("scf.if", {b.cmp("slt", pos, r.e)}, six, {}, 2);
    yieldUnit(b, {run->result(0), run->result(1), run->result(2), run->result(3), run->result(4), run->result(5)});
    // The run's next unit: from pos to the end of its tile or of the run.
    b.setInsertionPointToEnd(run->region(0).addBlock());
    Value* kbase = remu(b, pos, r.ks);
    Value* stop = b.min(b.add(kbase, b.sub(r.e, pos)), r.ks);
    Value* ksteps = b.sub(stop, kbase);
    yieldUnit(b, {b.add(divu(b, pos, r.ks), r.dpTiles), kbase, ksteps, b.add(b.sub(b.sub(r.dpDone, r.s), r.len1), pos),
                  b.i32(0), b.add(pos, ksteps)});
    // The run's first unit, which ends a tile lower walkers began.
    b.setInsertionPointToEnd(run->region(1).addBlock());
    Value* owner1 = mulDivWide(b, b.addConst(b.mul(r.firstTile, r.ks), 1), r.runs, r.work, b.addConst(r.work, -1));
    yieldUnit(b, {b.add(r.firstTile, r.dpTiles), r.kb1, r.len1, b.sub(b.sub(b.add(r.dpDone, r.e), r.s), r.len1),
                  b.sub(b.addConst(w.id, 1), owner1), pos});
  }
  Value* tile = nonNegative(b, dp->result(0), "tile");
  u.args = {iter};
  if (s.ragged) {  // (m0, n0, group, mend) of the groups' tile, found from the bounds
    for (Value* v : raggedPlace(b, loop, s, g, tile)) u.args.push_back(v);
  } else {
    Origin o = place(b, loop, s, g, w, tile);
    u.args.insert(u.args.end(), {o.m0, o.n0, o.batch});
  }
  const unsigned first = unsigned(u.args.size());
  for (unsigned i = 1; i < 5; ++i)
    u.args.push_back(nonNegative(b, dp->result(i), old.argument(first + i - 1)->nameHint()));
  u.next = dp->result(5);
  return u;
}

}  // namespace kiln::transforms::tilewalk
