// The tile scheduler's walk over ragged groups (kern_ops.h, kern.tile_loop {ragged}) as kern IR,
// for expand-tile-loop (contract in tile_walk.h):
//
//   %vtm = scf.for %g = 0 to %G iter(%cum = 0, %end = 0) {     the groups' tile rows, in all
//     lo, hi = ROWS(%g, %end)    tiles = (hi - lo + bm - 1) /u bm    yield cum + tiles, hi }
//   %tn = (N + bn - 1) /u bn   %tiles = %vtm * %tn
//   scf.for %unit = %walker to %tiles step %walkers iter(%i = 0) {
//     %group, %lo, %mend, %gtm, %base = scf.for %g = 0 to %G iter(%cum, %end, found..) {
//       lo, hi = ROWS(%g, %end)   rows = (hi - lo + bm - 1) /u bm   next = cum + rows * tn
//       hit = cum <= unit < next  yield next, hi, hit ? (g, lo, hi, rows, cum) : found.. }
//     %pm, %pn = raster() of unit - base in the group's own gtm x tn grid  (row: /u tn, %u tn;
//                grouped: bands of group_m of the group's tile rows, column by column)
//     BODY(iter, lo + pm * bm, pn * bn, group, mend)
//   }
//   ROWS(g, end): raw = bounds[g]; offsets: lo = end, counts: lo = 0; hi = min(max(raw, lo), M)
//
// Why it is the walk kern_ops.h specifies: the first loop sums the groups' tile rows with the
// clamped ranges the op defines, so the units are exactly the T tiles; the second finds the one
// group whose tiles (its tile rows x tn, the groups in order) hold the unit's, its rows and the
// unit's place in its own grid, which the raster walks as a dense grid: a grouped band stops at
// the group's end, so the tiles of a band read one B matrix (a band spanning two groups read both,
// column by column: docs/grouped-gemm.md, "Bands that stop at group ends").
// Every range is clamped to [lo, M] in 64 bits, so no bound in memory makes a row fall outside
// [0, M) or the sums go negative. The bounds are read with uniform loads of G values per unit: a
// few L1 lines, next to a tile's K loop.
//
// {ragged = "k_offsets"} (groups along K) appends to the dense walk's unit (kGroupArgs):
//
//   ktok, kend = TOKENS(group)   ksteps = (kend - ktok + kstep - 1) /u kstep
//   %before = scf.for %g = 0 to %group iter(%acc = 0) {          the block's units of earlier groups
//     lo, hi = TOKENS(g)   yield acc + steps(lo, hi) * (cnt((g + 1) per) - cnt(g per)) }
//   done = before + ksteps * (iter - cnt(group per))             and of its own group before it
//   TOKENS(g): lo = g > 0 ? clamp(offsets[g-1], 0, K) : 0, hi = clamp(offsets[g], lo, K)
//   cnt(x): the walker's units below x: x > walker ? ceil((x - walker) / walkers) : 0
//
// Why: the walk's units are t = walker + i walkers, tile t in group t / per; cnt counts them, so
// `done` is the sum of the K steps of exactly the units this block walked before (each group's
// units all run that group's steps), the ring position every role derives alike.
#include "transforms/tile_walk.h"

#include <tuple>

namespace kiln::transforms::tilewalk {
using namespace ir;

namespace {

// Group g's rows [lo, hi), after the previous group's end `end`.
std::pair<Value*, Value*> groupRows(KernBuilder& b, const Operation& loop, Value* g, Value* end) {
  const bool offsets = loop.stringAttr("ragged") == "offsets";
  const Type i64 = types::i64();
  Value* bounds = loop.operand(3);
  Value* at = b.ptrAdd(bounds, b.cast(g, i64));
  Value* raw = b.cast(b.op1("kern.ld_global", {at, b.i1(true)}, Type::scalar(bounds->type().elem())), i64);
  Value* lo = offsets ? end : b.i32(0);
  Value* lo64 = b.cast(lo, i64);
  Value* rows = b.cast(loop.operand(0), i64);
  Value* hi = b.select(b.cmp("slt", raw, lo64), lo64, raw);
  hi = b.select(b.cmp("slt", rows, hi), rows, hi);
  return {lo, b.named(b.cast(hi, types::i32()), "ghi")};
}

Value* tileRows(KernBuilder& b, const Shape& s, Value* lo, Value* hi) {
  return divu(b, b.addConst(b.sub(hi, lo), s.bm - 1), b.i32(s.bm));
}

// An scf.for over the groups carrying `init`; `step` writes the body (its arguments: g, then the
// carried values) and returns the values it yields.
Operation* overGroups(KernBuilder& b, const Operation& loop, const std::vector<Value*>& init,
                      const std::vector<std::string>& names,
                      const std::function<std::vector<Value*>(Value*, const std::vector<Value*>&)>& step) {
  std::vector<Value*> operands = {b.i32(0), loop.operand(2), b.i32(1)};
  operands.insert(operands.end(), init.begin(), init.end());
  Operation* f = b.create("scf.for", operands, std::vector<Type>(init.size(), types::i32()), {}, 1);
  Block* body = f->region(0).addBlock();
  Value* g = body->addArgument(types::i32(), "grp");
  std::vector<Value*> carried;
  for (const std::string& n : names) carried.push_back(body->addArgument(types::i32(), n));
  InsertionGuard guard(b);
  b.setInsertionPointToEnd(body);
  b.create("scf.yield", step(g, carried), {});
  return f;
}

}  // namespace

Grid raggedGrid(KernBuilder& b, const Operation& loop, const Shape& s) {
  Value* zero = b.i32(0);
  Operation* count = overGroups(b, loop, {zero, zero}, {"cum", "gend"}, [&](Value* g, const std::vector<Value*>& c) {
    auto [lo, hi] = groupRows(b, loop, g, c[1]);
    return std::vector<Value*>{b.add(c[0], tileRows(b, s, lo, hi)), hi};
  });
  Value* tn = b.named(divu(b, b.addConst(loop.operand(1), s.bn - 1), b.i32(s.bn)), "tn");
  Value* vtm = b.named(count->result(0), "vtm");
  Value* total = b.named(b.mul(vtm, tn), "tiles");
  return Grid{vtm, tn, total, total};
}

std::vector<Value*> raggedPlace(KernBuilder& b, const Operation& loop, const Shape& s, const Grid& grid, Value* tile) {
  // The group whose tiles (its tile rows x tn, the groups in order) hold `tile`, its rows, and the
  // tile's index among its group's tiles; then the raster over that group's own tr x tn grid: row
  // by row, or with raster "grouped" group_m of the group's tile rows column by column, so a band
  // never spans two groups (each band's blocks share one B matrix's tile columns in L2).
  Value* zero = b.i32(0);
  Operation* find = overGroups(b, loop, {zero, zero, zero, zero, zero, zero, zero},
                               {"cum", "gend", "found", "flo", "fend", "frows", "fbase"},
                               [&](Value* g, const std::vector<Value*>& c) {
                                 auto [lo, hi] = groupRows(b, loop, g, c[1]);
                                 Value* rows = tileRows(b, s, lo, hi);
                                 Value* next = b.add(c[0], b.mul(rows, grid.tn));
                                 Value* hit = b.andi(b.cmp("sle", c[0], tile), b.cmp("slt", tile, next));
                                 return std::vector<Value*>{next,
                                                            hi,
                                                            b.select(hit, g, c[2]),
                                                            b.select(hit, lo, c[3]),
                                                            b.select(hit, hi, c[4]),
                                                            b.select(hit, rows, c[5]),
                                                            b.select(hit, c[0], c[6])};
                               });
  Grid own = grid;
  own.tm = b.named(find->result(5), "gtm");
  Value* local = b.named(b.sub(tile, find->result(6)), "gtile");
  auto [pm, pn] = raster(b, s, own, local);
  Value* m0 = b.add(find->result(3), b.mulConst(pm, s.bm));
  Value* n0 = b.mulConst(pn, s.bn);
  const Block& old = loop.body();
  return {nonNegative(b, m0, old.argument(1)->nameHint()), nonNegative(b, n0, old.argument(2)->nameHint()),
          nonNegative(b, find->result(2), old.argument(3)->nameHint()),
          nonNegative(b, find->result(4), old.argument(4)->nameHint())};
}

UnitLoop raggedLoop(KernBuilder& b, const Operation& loop, const Shape& s, const Grid& grid, const Walkers& w) {
  UnitLoop u;
  u.loop = b.create("scf.for", {w.id, grid.total, w.count, b.i32(0)}, {types::i32()}, {}, 1);
  Block* body = u.loop->region(0).addBlock();
  Value* unit = body->addArgument(types::i32(), "unit");
  u.counter = body->addArgument(types::i32(), "i");
  b.setInsertionPointToEnd(body);
  u.args = {nonNegative(b, u.counter, loop.body().argument(0)->nameHint())};
  for (Value* v : raggedPlace(b, loop, s, grid, unit)) u.args.push_back(v);
  return u;
}

namespace {

// Group g's tokens [lo, hi), clamped to [0, K] in 64 bits (the offsets may be i64).
std::pair<Value*, Value*> groupTokens(KernBuilder& b, const Operation& loop, Value* g) {
  const Type i64 = types::i64();
  Value* offsets = loop.operand(3);
  auto load = [&](Value* i, Value* on) {
    Value* at = b.ptrAdd(offsets, b.cast(i, i64));
    return b.cast(b.op1("kern.ld_global", {at, on}, Type::scalar(offsets->type().elem())), i64);
  };
  Value* zero = b.i64(0);
  Value* K = b.cast(loop.operand(4), i64);
  auto clamp = [&](Value* v, Value* lo) {
    v = b.select(b.cmp("slt", v, lo), lo, v);
    return b.select(b.cmp("slt", K, v), K, v);
  };
  Value* later = b.cmp("sgt", g, b.i32(0));
  Value* prev = b.select(later, b.addConst(g, -1), b.i32(0));
  Value* lo = b.select(later, clamp(load(prev, later), zero), zero);
  Value* hi = clamp(load(g, b.i1(true)), lo);
  return {b.cast(lo, types::i32()), b.cast(hi, types::i32())};
}

Value* kSteps(KernBuilder& b, const Shape& s, Value* lo, Value* hi) {
  return divu(b, b.addConst(b.sub(hi, lo), s.kstep - 1), b.i32(s.kstep));
}

}  // namespace

void kGroupArgs(KernBuilder& b, const Operation& loop, const Shape& s, const Grid& g, const Walkers& w, UnitLoop& u) {
  const Block& old = loop.body();
  Value* group = u.args[3];
  auto [lo, hi] = groupTokens(b, loop, group);
  Value* ksteps = kSteps(b, s, lo, hi);
  auto cnt = [&](Value* x) {
    Value* ahead = b.sub(x, w.id);
    Value* n = divu(b, b.add(ahead, b.addConst(w.count, -1)), w.count);
    return b.select(b.cmp("sgt", ahead, b.i32(0)), n, b.i32(0));
  };
  Value* zero = b.i32(0);
  Operation* sum = b.create("scf.for", {zero, group, b.i32(1), zero}, {types::i32()}, {}, 1);
  Block* body = sum->region(0).addBlock();
  Value* gi = body->addArgument(types::i32(), "grp");
  Value* acc = body->addArgument(types::i32(), "before");
  {
    InsertionGuard guard(b);
    b.setInsertionPointToEnd(body);
    auto [glo, ghi] = groupTokens(b, loop, gi);
    Value* first = b.mul(gi, g.per);
    Value* units = b.sub(cnt(b.add(first, g.per)), cnt(first));
    b.create("scf.yield", {b.add(acc, b.mul(kSteps(b, s, glo, ghi), units))}, {});
  }
  Value* mine = b.sub(u.args[0], cnt(b.mul(group, g.per)));
  Value* done = b.add(sum->result(0), b.mul(ksteps, mine));
  u.args.push_back(nonNegative(b, lo, old.argument(4)->nameHint()));
  u.args.push_back(nonNegative(b, hi, old.argument(5)->nameHint()));
  u.args.push_back(nonNegative(b, ksteps, old.argument(6)->nameHint()));
  u.args.push_back(nonNegative(b, done, old.argument(7)->nameHint()));
}

}  // namespace kiln::transforms::tilewalk
