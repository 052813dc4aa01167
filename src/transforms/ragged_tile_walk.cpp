// The tile scheduler's walk over ragged groups (kern_ops.h, kern.tile_loop {ragged}) as kern IR,
// for expand-tile-loop (contract in tile_walk.h):
//
//   %vtm = scf.for %g = 0 to %G iter(%cum = 0, %end = 0) {     the groups' tile rows, in all
//     lo, hi = ROWS(%g, %end)    tiles = (hi - lo + bm - 1) /u bm    yield cum + tiles, hi }
//   %tn = (N + bn - 1) /u bn   %tiles = %vtm * %tn
//   scf.for %unit = %walker to %tiles step %walkers iter(%i = 0) {
//     %vt = unit /u tn   %n0 = (unit %u tn) * bn      (raster "grouped": raster() of a vtm x tn grid)
//     %group, %m0, %mend = scf.for %g = 0 to %G iter(%cum, %end, %found, %row, %rend) {
//       lo, hi = ROWS(%g, %end)    next = cum + tiles    hit = cum <= vt < next
//       yield next, hi, hit ? g : found, hit ? lo + (vt - cum) * bm : row, hit ? hi : rend }
//     BODY(iter, m0, n0, group, mend)
//   }
//   ROWS(g, end): raw = bounds[g]; offsets: lo = end, counts: lo = 0; hi = min(max(raw, lo), M)
//
// Why it is the walk kern_ops.h specifies: the first loop sums the groups' tile rows with the
// clamped ranges the op defines, so the units are exactly the T tiles; the second finds, for the
// unit's tile row, the one group whose tile rows (stacked in group order) hold it, and its rows.
// Every range is clamped to [lo, M] in 64 bits, so no bound in memory makes a row fall outside
// [0, M) or the sums go negative. The bounds are read with uniform loads of G values per unit: a
// few L1 lines, next to a tile's K loop.
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

UnitLoop raggedLoop(KernBuilder& b, const Operation& loop, const Shape& s, const Walkers& w) {
  Value* zero = b.i32(0);
  Operation* count = overGroups(b, loop, {zero, zero}, {"cum", "gend"}, [&](Value* g, const std::vector<Value*>& c) {
    auto [lo, hi] = groupRows(b, loop, g, c[1]);
    return std::vector<Value*>{b.add(c[0], tileRows(b, s, lo, hi)), hi};
  });
  Value* tn = b.named(divu(b, b.addConst(loop.operand(1), s.bn - 1), b.i32(s.bn)), "tn");
  Value* total = b.named(b.mul(b.named(count->result(0), "vtm"), tn), "tiles");
  UnitLoop u;
  u.loop = b.create("scf.for", {w.id, total, w.count, b.i32(0)}, {types::i32()}, {}, 1);
  Block* body = u.loop->region(0).addBlock();
  Value* unit = body->addArgument(types::i32(), "unit");
  u.counter = body->addArgument(types::i32(), "i");
  b.setInsertionPointToEnd(body);
  const Block& old = loop.body();
  Value* iter = nonNegative(b, u.counter, old.argument(0)->nameHint());
  // The unit's tile row among the groups' stacked tile rows, and its column: row by row, or with
  // raster "grouped" group_m stacked tile rows column by column (the same walk as a dense grid of
  // vtm x tn tiles, so a wave's blocks share B's tile columns; a band may span two groups).
  Value *vt = nullptr, *pn = nullptr;
  if (s.grouped) {
    std::tie(vt, pn) = raster(b, s, Grid{count->result(0), tn, total, total}, unit);
  } else {
    vt = b.named(divu(b, unit, tn), "vtile");
    pn = remu(b, unit, tn);
  }
  Value* n0 = b.mulConst(pn, s.bn);
  Operation* find = overGroups(b, loop, {zero, zero, zero, zero, zero}, {"cum", "gend", "found", "frow", "fend"},
                               [&](Value* g, const std::vector<Value*>& c) {
                                 auto [lo, hi] = groupRows(b, loop, g, c[1]);
                                 Value* next = b.add(c[0], tileRows(b, s, lo, hi));
                                 Value* hit = b.andi(b.cmp("sle", c[0], vt), b.cmp("slt", vt, next));
                                 Value* row = b.add(lo, b.mulConst(b.sub(vt, c[0]), s.bm));
                                 return std::vector<Value*>{next, hi, b.select(hit, g, c[2]), b.select(hit, row, c[3]),
                                                            b.select(hit, hi, c[4])};
                               });
  u.args = {iter, nonNegative(b, find->result(3), old.argument(1)->nameHint()),
            nonNegative(b, n0, old.argument(2)->nameHint()), nonNegative(b, find->result(2), old.argument(3)->nameHint()),
            nonNegative(b, find->result(4), old.argument(4)->nameHint())};
  return u;
}

}  // namespace kiln::transforms::tilewalk
