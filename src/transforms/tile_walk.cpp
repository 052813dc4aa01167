// The tile scheduler's walk as kern IR (contract in tile_walk.h; the walk itself is specified in
// kern_ops.h, kern.tile_loop). Tile counts and indices are non-negative and below 2^31 (the launch
// keeps dims in 1 .. 2^31 - 1), so every division is unsigned: exact, and one instruction shorter
// than the signed forms in SASS.
#include "transforms/tile_walk.h"

#include <cstdint>

#include "dialects/kern/int_range.h"

namespace kiln::transforms::tilewalk {
using namespace ir;

std::optional<Shape> shapeOf(const Operation& loop) {
  Shape s;
  auto tile = loop.intsAttr("tile");
  if (tile.size() != 2 || tile[0] <= 0 || tile[1] <= 0) return std::nullopt;
  s.bm = tile[0];
  s.bn = tile[1];
  std::string raster = loop.stringAttr("raster");
  if (raster != "row" && raster != "grouped") return std::nullopt;
  s.grouped = raster == "grouped";
  s.groupM = loop.intAttr("group_m", 8);
  if (s.groupM < 1) return std::nullopt;
  if (loop.attr("cluster")) {
    auto c = loop.intsAttr("cluster");
    if (c.size() != 2 || c[0] < 1 || c[1] < 1) return std::nullopt;
    s.cm = c[0];
    s.cn = c[1];
  }
  s.split = loop.attr("splits") != nullptr;
  s.splits = loop.intAttr("splits", 1);
  s.streamK = loop.intAttr("stream_k", 0);
  if (s.splits < 1 || (s.split && s.streamK) || (loop.attr("stream_k") && s.streamK != 1 && s.streamK != 2))
    return std::nullopt;
  // {ragged}: the fourth operand is the bounds' pointer; single-block tiles, not split in slices
  // (groups of rows may take stream-K: the fifth operand is then ktiles).
  const std::string ragged = loop.stringAttr("ragged");
  s.kGroups = ragged == "k_offsets";
  s.kstep = loop.intAttr("kstep", 0);
  s.ragged = loop.attr("ragged") != nullptr && !s.kGroups;
  if ((s.ragged || s.kGroups) && ((ragged != "offsets" && ragged != "counts" && !s.kGroups) || s.clustered() ||
                                  s.split || (s.kGroups && (s.streamK || s.kstep < 1))))
    return std::nullopt;
  const unsigned operands = s.kGroups || (s.ragged && s.streamK) ? 5u : s.streamK || s.ragged ? 4u : 3u;
  if (loop.numOperands() != operands || loop.numRegions() != 1 || loop.region(0).blocks().size() != 1 ||
      loop.body().numArguments() != s.bodyArgs())
    return std::nullopt;
  const bool bounds = s.ragged || s.kGroups;  // operand 3 is the bounds' pointer
  for (unsigned i = 0; i < loop.numOperands(); ++i)
    if (!(bounds && i == 3) && !loop.operand(i)->type().isScalar(ScalarType::I32)) return std::nullopt;
  if (bounds) {
    const Type& p = loop.operand(3)->type();
    if (!kern::isPtr(p) || (p.elem() != ScalarType::I32 && p.elem() != ScalarType::I64)) return std::nullopt;
  }
  return s;
}

Value* divu(KernBuilder& b, Value* x, Value* y) { return b.op1("arith.divui", {x, y}, x->type()); }
Value* remu(KernBuilder& b, Value* x, Value* y) { return b.op1("arith.remui", {x, y}, x->type()); }

namespace {

// ceil(x / k) for x in 1 .. 2^31 - 1 and a compile-time k > 0.
Value* ceilDiv(KernBuilder& b, Value* x, int64_t k) { return divu(b, b.addConst(x, k - 1), b.i32(k)); }

}  // namespace

// (pm, pn) of r: raster "row", or "grouped" (groups of group_m tile rows walked column by column).
std::pair<Value*, Value*> raster(KernBuilder& b, const Shape& s, const Grid& g, Value* r) {
  if (!s.grouped) return {b.named(divu(b, r, g.tn), "pm"), b.named(remu(b, r, g.tn), "pn")};
  const int64_t gm = s.groupM;
  Value* width = b.mulConst(g.tn, gm);
  Value* first = b.mulConst(divu(b, r, width), gm);
  Value* size = b.min(b.sub(g.tm, first), b.i32(gm));
  Value* within = b.named(remu(b, r, width), "within");
  auto general = [&] { return std::pair{b.add(remu(b, within, size), first), divu(b, within, size)}; };
  if ((gm & (gm - 1)) != 0) {
    auto [pm, pn] = general();
    return {b.named(pm, "pm"), b.named(pn, "pn")};
  }
  // Every group but the last holds gm rows of tiles: a power of two, so a mask and a shift (the
  // branch is the same for the whole block).
  int shift = 0;
  while ((int64_t{1} << shift) < gm) ++shift;
  Operation* full = b.create("scf.if", {b.cmp("eq", size, b.i32(gm))}, {types::i32(), types::i32()}, {}, 2);
  {
    InsertionGuard guard(b);
    b.setInsertionPointToEnd(full->region(0).addBlock());
    b.create("scf.yield", {b.add(b.andi(within, b.i32(gm - 1)), first), b.intBin("arith.shrui", within, b.i32(shift))},
             {});
    b.setInsertionPointToEnd(full->region(1).addBlock());
    auto [pm, pn] = general();
    b.create("scf.yield", {pm, pn}, {});
  }
  return {b.named(full->result(0), "pm"), b.named(full->result(1), "pn")};
}

Grid grid(KernBuilder& b, const Operation& loop, const Shape& s) {
  Grid g;
  g.tm = b.named(ceilDiv(b, loop.operand(0), s.bm * s.cm), "tm");
  g.tn = b.named(ceilDiv(b, loop.operand(1), s.bn * s.cn), "tn");
  g.per = b.named(b.mul(g.tm, g.tn), "per");
  g.total = b.named(b.mul(g.per, loop.operand(2)), "tiles");
  return g;
}

Walkers walkers(KernBuilder& b, const Shape& s) {
  Walkers w{};
  if (s.clustered()) {
    w.id = b.named(b.op1("kern.cluster_id", {}, types::i32()), "walker");
    w.count = b.named(b.op1("kern.cluster_count", {}, types::i32()), "walkers");
    w.rank = b.named(b.op1("kern.cluster_rank", {}, types::i32()), "rank");
  } else {
    w.id = b.named(b.op1("kern.block_id", {}, types::i32(), {{"dim", "x"}}), "walker");
    w.count = b.named(b.op1("kern.grid_dim", {}, types::i32(), {{"dim", "x"}}), "walkers");
  }
  return w;
}

Origin place(KernBuilder& b, const Operation& loop, const Shape& s, const Grid& g, const Walkers& w, Value* tile) {
  Value *batch = nullptr, *r = tile;
  int64_t batches = 0;
  // One batch (the operand is the constant 1): batch 0, and no division at all.
  if (kern::constantInt(loop.operand(2), batches) && batches == 1) {
    batch = b.i32(0);
  } else {
    batch = divu(b, tile, g.per);
    r = remu(b, tile, g.per);
  }
  auto [pm, pn] = raster(b, s, g, r);
  if (s.clustered()) {
    pm = b.add(b.mulConst(pm, s.cm), remu(b, w.rank, b.i32(s.cm)));
    pn = b.add(b.mulConst(pn, s.cn), divu(b, w.rank, b.i32(s.cm)));
  }
  const Block& body = loop.body();
  return {nonNegative(b, b.mulConst(pm, s.bm), body.argument(1)->nameHint()),
          nonNegative(b, b.mulConst(pn, s.bn), body.argument(2)->nameHint()),
          nonNegative(b, batch, body.argument(3)->nameHint())};
}

Value* nonNegative(KernBuilder& b, Value* x, const std::string& hint) {
  if (KernBuilder::intConstant(x)) return x;
  return b.named(b.op1("kern.assume_range", {x}, types::i32(), {{"lo", int64_t{0}}, {"hi", int64_t{INT32_MAX}}}),
                 hint);
}

UnitLoop persistentLoop(KernBuilder& b, const Operation& loop, const Shape& s, const Grid& g, const Walkers& w) {
  Value* units = s.split ? b.named(b.mulConst(g.total, s.splits), "units") : g.total;
  UnitLoop u;
  u.loop = b.create("scf.for", {w.id, units, w.count, b.i32(0)}, {types::i32()}, {}, 1);
  Block* body = u.loop->region(0).addBlock();
  Value* unit = body->addArgument(types::i32(), "unit");
  u.counter = body->addArgument(types::i32(), "i");
  b.setInsertionPointToEnd(body);
  const Block& old = loop.body();
  Value* iter = nonNegative(b, u.counter, old.argument(0)->nameHint());
  // {splits = S}: unit u is K slice u % S of tile u / S.
  Value* tile = s.split ? divu(b, unit, b.i32(s.splits)) : unit;
  Origin o = place(b, loop, s, g, w, tile);
  u.args = {iter, o.m0, o.n0, o.batch};
  if (s.split) {
    u.args.push_back(nonNegative(b, tile, old.argument(4)->nameHint()));
    u.args.push_back(nonNegative(b, remu(b, unit, b.i32(s.splits)), old.argument(5)->nameHint()));
  }
  return u;
}

}  // namespace kiln::transforms::tilewalk
