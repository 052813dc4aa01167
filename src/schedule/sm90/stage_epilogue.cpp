// sm90-stage-epilogue: the protocol of the TMA-store epilogue (epilogue=tma), written around each
// box the lowering stages (docs/sm90-passes.md).
//
//   Before (a tile body's consumer code, one marked box per staged unit, in store order):
//     kern.stage_begin(%sC, %wg, %elected, %bar) {row = 64}
//     STAGING: the box's epilogue math, ending in kern.st_shared / kern.stmatrix into %sC[%wg]
//     kern.stage_end(%tmC, %sC, %wg, %n, %m, %elected, %bar) {row = 64, offset = [128, 0]}
//   After:
//     scf.if %elected { kern.bulk_wait {pending = P, read = true} }    (none with {fresh = true})
//     kern.named_barrier(%bar) {threads = 128}
//     STAGING
//     kern.fence {kind = "proxy_async"}
//     kern.named_barrier(%bar) {threads = 128}
//     scf.if %elected { kern.tma_store(%tmC, %sC, %wg, %n + 128, %m) {row = 64}; kern.bulk_commit }
//
// P, the store groups the elected thread may leave pending before it overwrites the box's region
// (buffer, slot, row), is derived from the order of the boxes: each box commits one group, and
// every tile runs the same boxes. For box u whose region box v < u of the same tile used last,
// P = u - 1 - v (the groups committed after v's); with no earlier use in the tile, the region was
// last read by the previous tile's last box v using it, and P = (units - 1 - v) + u. A box with
// {fresh = true} is staged in a region no store has read (reuse_stage: the ring stage the K loop
// read last; the lowering makes the consumer warpgroups meet before the first of them) and waits
// for none. The boxes' order is the lowering's (docs/sm90-strategy.md, "The TMA-store epilogue").
//
// The tiles are the iterations of the nearest loop around the boxes (kern.tile_loop, or the
// scf.for expand-tile-loop makes of it). Legal only when the boxes of that loop are all in one
// block (its body's, or one arm of an scf.if in it: a tile that hands its sums over stores none
// and commits no group) and every P is at most 7 (kern.bulk_wait's bound); otherwise the pass
// reports an error and leaves the kernel as it is (a box that is not stored would lose output, so
// the markers have no PTX form). The markers' pairing is their verifier's. Everything but the
// markers is left untouched, the staging included.
#include <map>
#include <tuple>

#include "dialects/kern/kern_builder.h"
#include "schedule/sm90/passes.h"

namespace kiln::sm90 {
namespace {

using ir::Block;
using ir::Operation;
using ir::Value;

// The loop whose iterations are the tiles the boxes are stored for: the nearest kern.tile_loop or
// scf.for around the box (nullptr: one tile).
const Operation* tileLoopOf(const Operation& box) {
  for (const Operation* p = box.parentOp(); p; p = p->parentOp())
    if (p->is("kern.tile_loop") || p->is("scf.for")) return p;
  return nullptr;
}

// The constant KernBuilder would have reused, had these ops been built in order with the rest:
// the first arith.constant of that type and value in `blk` or, going out, in an enclosing block
// before the op that holds it (the builder appends at the end of its block, so all of `blk` is
// before the insertion point).
Value* visibleConstant(const Block* blk, const ir::Type& t, int64_t v) {
  const Operation* holder = nullptr;
  for (; blk; holder = blk->parentOp(), blk = holder ? holder->parentBlock() : nullptr) {
    for (const auto& op : blk->operations()) {
      if (op.get() == holder) break;
      if (op->is("arith.constant") && op->result()->type() == t && KernBuilder::intConstant(op->result()) == v)
        return op->result();
    }
  }
  return nullptr;
}

// x + d for a compile-time d, with the constant the lowering's builder would have used.
Value* displaced(KernBuilder& b, Value* x, int64_t d) {
  if (d == 0) return x;
  Value* c = visibleConstant(b.insertionBlock(), x->type(), d);
  return b.add(x, c ? c : b.constant(x->type(), d));
}

// A box's slot wait and barrier in place of its kern.stage_begin; `pending` < 0: a fresh box.
void expandBegin(Operation& begin, int64_t pending) {
  KernBuilder b(begin.parentBlock());
  b.setInsertionPoint(&begin);
  b.setLoc(begin.loc());
  if (pending >= 0)
    b.ifThen(begin.operand(2), [&] { b.create("kern.bulk_wait", {}, {}, {{"pending", pending}, {"read", true}}); });
  b.create("kern.named_barrier", {begin.operand(3)}, {}, {{"threads", int64_t{128}}});
  begin.erase();
}

// A box's fence, barrier and TMA store in place of its kern.stage_end.
void expandEnd(Operation& end) {
  const unsigned n = end.numOperands();
  Value *elected = end.operand(n - 2), *bar = end.operand(n - 1);
  KernBuilder b(end.parentBlock());
  b.setInsertionPoint(&end);
  b.setLoc(end.loc());
  b.create("kern.fence", {}, {}, {{"kind", "proxy_async"}});
  b.create("kern.named_barrier", {bar}, {}, {{"threads", int64_t{128}}});
  b.ifThen(elected, [&] {
    std::vector<int64_t> offset = end.intsAttr("offset");
    // The row before the column, as the lowering computed them (the PTX numbers registers in order).
    Value* c1 = displaced(b, end.operand(4), offset[1]);
    Value* c0 = displaced(b, end.operand(3), offset[0]);
    std::vector<Value*> ops = {end.operand(0), end.operand(1), end.operand(2), c0, c1};
    if (n == 8) ops.push_back(end.operand(5));
    b.create("kern.tma_store", ops, {}, {{"row", end.intAttr("row", 0)}});
    b.create("kern.bulk_commit", {}, {});
  });
  end.erase();
}

// The slot waits of one tile's boxes, in store order (see the opening comment); false after a
// diagnostic.
bool pendingOf(const std::vector<Operation*>& boxes, std::vector<int64_t>& pending, ir::DiagnosticEngine& diag) {
  using Region = std::tuple<const Value*, const Value*, int64_t>;
  auto regionOf = [](const Operation* box) { return Region{box->operand(0), box->operand(1), box->intAttr("row", 0)}; };
  std::map<Region, int64_t> lastInTile;  // the tile's last box using each region
  const int64_t units = int64_t(boxes.size());
  for (int64_t u = 0; u < units; ++u) lastInTile[regionOf(boxes[size_t(u)])] = u;
  std::map<Region, int64_t> last;  // the last box so far using each region
  for (int64_t u = 0; u < units; ++u) {
    const Operation* box = boxes[size_t(u)];
    Region r = regionOf(box);
    auto prev = last.find(r);
    int64_t p = prev != last.end() ? u - 1 - prev->second : (units - 1 - lastInTile.at(r)) + u;
    last[r] = u;
    if (const ir::Attribute* f = box->attr("fresh"); f && f->asBool()) p = -1;
    if (p > 7)
      return diag.error(box->loc()) << "sm90-stage-epilogue: this box would wait until at most " << p
                                    << " TMA store groups are pending, more than kern.bulk_wait's 7; stage fewer "
                                       "boxes per tile or use more slots";
    pending.push_back(p);
  }
  return true;
}

// False after a diagnostic: one tile's boxes are not all in one block.
bool checkPlacement(const std::vector<Operation*>& boxes, ir::DiagnosticEngine& diag) {
  for (const Operation* box : boxes) {
    if (box->parentBlock() != boxes.front()->parentBlock())
      return diag.error(box->loc()) << "sm90-stage-epilogue: the boxes of one tile are staged in one block, in "
                                       "store order; this one is in another block than the tile's first";
  }
  return true;
}

}  // namespace

bool stageEpiloguePass(ir::Module& m, ir::DiagnosticEngine& diag) {
  // The boxes (their kern.stage_begin) by the loop of their tiles, in program order, and their ends.
  std::vector<std::pair<const Operation*, std::vector<Operation*>>> tiles;
  std::vector<Operation*> ends;
  m.op().walk([&](Operation& op) {
    if (op.is("kern.stage_end")) ends.push_back(&op);
    if (!op.is("kern.stage_begin")) return;
    const Operation* loop = tileLoopOf(op);
    for (auto& [l, boxes] : tiles)
      if (l == loop) return boxes.push_back(&op);
    tiles.push_back({loop, {&op}});
  });
  std::vector<std::vector<int64_t>> pending(tiles.size());
  for (size_t t = 0; t < tiles.size(); ++t)
    if (!checkPlacement(tiles[t].second, diag) || !pendingOf(tiles[t].second, pending[t], diag)) return false;
  for (size_t t = 0; t < tiles.size(); ++t)
    for (size_t u = 0; u < tiles[t].second.size(); ++u) expandBegin(*tiles[t].second[u], pending[t][u]);
  for (Operation* end : ends) expandEnd(*end);
  return true;
}

}  // namespace kiln::sm90
