// The sm90 consumer's fused epilogue (contract in sm90_context.h): one tile's accumulators, through
// the sm80 epilogue's view of them (each consumer warp as an sm80 warp: sm90_consumer.cpp), stored
// from registers (epilogue=direct) or staged per 64-column box in shared memory and stored by TMA
// (epilogue=tma), with swap_ab's transposed fragment staged by stmatrix .trans.
#include <map>

#include "schedule/sm80_context.h"
#include "schedule/sm90_context.h"

namespace kiln::sm90 {
using namespace ir;

namespace {

// The sm80 epilogue's view of the warpgroup's accumulators: each consumer warp v = cwarp % 4 as an
// sm80 warp whose m16 tiles lie 64 rows apart (one per m64 block), from row m0 + rowA + 16 v.
sm80::Context epilogueContext(Plan& p, Value* lane, Value* cwarp, Value* rowA, Value*& v) {
  KernBuilder& b = p.b;
  sm80::Context cx{p.g, p.cfg, p.target, b, p.diag};
  cx.args = p.args;
  cx.dims = p.dims;
  cx.dimM = p.dimM;
  cx.dimN = p.dimN;
  cx.dimK = p.dimK;
  cx.lane = lane;
  cx.m0 = p.m0;
  cx.n0 = p.n0;
  cx.batch = p.batched() ? p.batch : nullptr;
  cx.mTilesOverride = p.wgmmaBlocks();
  cx.nTilesOverride = p.cfg.bn / 8;
  cx.mTileStride = 64;
  v = b.rem(cwarp, b.i32(4));
  cx.warpRow0 = b.named(b.add(b.add(p.m0, rowA), b.mulConst(v, 16)), "wrow");
  cx.warpCol0 = p.n0;
  return cx;
}

// The units the staged epilogue (epilogue=tma) goes out in: the warpgroup's 64-column boxes, each
// in `pieces` row pieces of pieceRows (store_pieces, swap_ab), then, when bn is not a multiple of
// 64, the columns past the last whole box (unit `units`, stored from registers).
struct Units {
  int boxes, pieces, pieceRows, units, perBox, tail;
};
Units stagedUnits(const Plan& p) {
  Units u;
  u.boxes = p.colsPerConsumer() / 64;
  u.pieces = std::max(1, p.cfg.storePieces);
  u.pieceRows = p.rowsPerPiece();
  u.units = u.boxes * u.pieces;
  u.perBox = p.swapped() ? u.pieceRows / 8 : 64 / 8;  // the fragment's n8 tiles per unit
  u.tail = p.cfg.bn % 64 / 8;
  return u;
}

// swap_ab: block i holds columns n0 + colB + 64 i .. of the tile as the fragment's rows (warp v's
// 16 of them) and the warpgroup's rows of the tile as its columns; one block per 64-column box.
void transposeForSwap(Plan& p, sm80::Context& cx, Value* rowA) {
  cx.transposed = true;
  cx.mTilesOverride = 1;
  cx.warpCol0 = p.b.add(p.m0, rowA);
}

// Points cx's warp tile at unit u of the staged epilogue: box u / pieces (its piece u % pieces),
// or the columns past the boxes. nStore: the warpgroup's first column; warpCol0: cx's before.
void placeUnit(Plan& p, sm80::Context& cx, const Units& un, int u, Value* v, Value* nStore, Value* warpCol0) {
  KernBuilder& b = p.b;
  if (u == un.units) {
    cx.nTilesOverride = un.tail;
    cx.warpCol0 = b.addConst(p.n0, 64 * un.boxes);
    return;
  }
  const int box = u / un.pieces, piece = u % un.pieces;
  cx.nTilesOverride = un.perBox;
  if (p.swapped()) {
    cx.warpRow0 = b.add(b.addConst(nStore, 64 * box), b.mulConst(v, 16));
    if (un.pieces > 1) cx.warpCol0 = b.addConst(warpCol0, int64_t(piece) * un.pieceRows);
  } else {
    cx.warpCol0 = b.addConst(p.n0, 64 * box);
  }
}

// The warpgroup's first column of the tile: with warps_n, n0 + colB.
Value* storeColumn(Plan& p, Value* colB) { return p.cfg.warpsN > 1 ? p.b.named(p.b.add(p.n0, colB), "ncol") : p.n0; }

}  // namespace

bool preloadEpilogue(Plan& p, Value* lane, Value* cwarp, Value* rowA, Value* colB, EarlyLoads& early) {
  Value* v = nullptr;
  sm80::Context cx = epilogueContext(p, lane, cwarp, rowA, v);
  if (!p.sC) {
    early.assign(1, {});
    cx.earlyLoads = &early[0];
    return sm80::preloadEpilogue(cx);
  }
  if (p.swapped()) transposeForSwap(p, cx, rowA);
  Units un = stagedUnits(p);
  Value* nStore = storeColumn(p, colB);
  Value* warpCol0 = cx.warpCol0;
  early.assign(size_t(un.units + (un.tail ? 1 : 0)), {});
  for (int u = 0; u < int(early.size()); ++u) {
    placeUnit(p, cx, un, u, v, nStore, warpCol0);
    cx.earlyLoads = &early[size_t(u)];
    if (!sm80::preloadEpilogue(cx)) return false;
  }
  return true;
}

bool prefetchEpilogue(Plan& p, Value* lane, Value* cwarp, Value* rowA) {
  Value* v = nullptr;
  sm80::Context cx = epilogueContext(p, lane, cwarp, rowA, v);
  return sm80::prefetchEpilogue(cx, p.b.named(p.b.add(p.b.mulConst(v, 32), lane), "pfslot"), 128);
}

bool buildEpilogue(Plan& p, Value* lane, Value* cwarp, Value* wg, Value* rowA, Value* colB,
                   const std::vector<Value*>& out, Value* ringStage, EarlyLoads* early) {
  KernBuilder& b = p.b;
  const Config& c = p.cfg;
  int blocks = p.wgmmaBlocks(), nacc = p.accPerBlock();
  Value* v = nullptr;
  sm80::Context cx = epilogueContext(p, lane, cwarp, rowA, v);
  auto earlyOf = [&](int unit) { return early ? &early->at(size_t(unit)) : nullptr; };
  if (!p.sC) {
    cx.earlyLoads = earlyOf(0);
    return sm80::buildEpilogue(cx, out);
  }
  if (p.swapped()) transposeForSwap(p, cx, rowA);

  // epilogue=tma: the warpgroup's rows go out one 64-column box at a time, through cSlots slots of
  // its region of sC (each rows x 64, 128B-swizzled, the TMA box layout). Each box is staged
  // (every thread writes its pairs of it) between a kern.stage_begin and a kern.stage_end, and
  // sm90-stage-epilogue writes the protocol around it (the elected thread's wait until the store
  // that last used the slot has read it, a named barrier, the staging, a proxy fence, a named
  // barrier, the elected thread's TMA store, which clips the box at the tensor's edges). So a
  // box's global write overlaps the next box's staging, and the last ones the next tile's K loop.
  Value* elected = isElected(b);
  Value* barrier = groupBarrier(b, wg);
  // Where each thread's packed pairs go (stage_store=pairs): row l/4 of its m8 half, columns
  // 2(l%4), 2(l%4)+1 of each n8 tile. stage_store=stmatrix: lane l addresses row l % 8 of matrix
  // l / 8, the matrices being the (m8 half, n8 tile) blocks (0, 0), (1, 0), (0, 1), (1, 1) of a
  // 16 x 16 block of the warp's rows.
  const bool stmatrix = c.stageStore == StageStore::Stmatrix;
  Value *rowBase, *colBase;
  if (p.swapped()) {
    // stmatrix .trans: the same four matrices stored transposed, so lane l addresses column l % 8
    // of matrix l / 8 of the fragment's 16 x 16 block, which is row 8 (l / 16) + l % 8 of the
    // warpgroup's rows in the box, at columns 16 v + 8 ((l / 8) % 2) of it.
    rowBase = b.add(b.rem(lane, b.i32(8)), b.mulConst(b.div(lane, b.i32(16)), 8));
    colBase = b.add(b.mulConst(v, 16), b.mulConst(b.rem(b.div(lane, b.i32(8)), b.i32(2)), 8));
  } else if (stmatrix) {
    rowBase = b.add(b.mulConst(v, 16), b.add(b.rem(lane, b.i32(8)), b.mulConst(b.rem(b.div(lane, b.i32(8)), b.i32(2)), 8)));
    colBase = b.mulConst(b.div(lane, b.i32(16)), 8);
  } else {
    rowBase = b.add(b.mulConst(v, 16), b.div(lane, b.i32(4)));
    colBase = b.mulConst(b.rem(lane, b.i32(4)), 2);
  }
  b.named(rowBase, "srow");
  b.named(colBase, "scol");
  // One swizzle per thread; each store's (row, col) is a compile-time displacement from it, which
  // composes with the 128B swizzle (rows by multiples of 8, columns by whole 16-byte chunks apart
  // from the thread's own: kern_ops.h), so a store costs a constant XOR and an immediate.
  Value* off = b.named(b.op1("kern.smem_offset", {p.sC, rowBase, colBase}, types::i32()), "soff");
  Value* mStore = b.add(p.m0, rowA);
  // The warpgroup's boxes: the tile's, or with warps_n those of its columns, from n0 + colB.
  Value* nStore = storeColumn(p, colB);
  // store_pieces (swap_ab): each box goes out in `pieces` row pieces of pieceRows, each staged in a
  // slot and stored by TMA on its own; the units of the slot protocol are then (box, piece).
  const Units un = stagedUnits(p);
  const int boxes = un.boxes, pieces = un.pieces, pieceRows = un.pieceRows, units = un.units, perBox = un.perBox;
  Value* warpCol0 = cx.warpCol0;
  // reuse_stage: boxes cSlots.. go to this warpgroup's region of ring stage ringStage (a fresh
  // region: no store of it is pending), once every consumer warpgroup is past its last wgmma, so
  // nothing reads the stage any more.
  Value *ringOff = nullptr, *ringSlot = nullptr;
  if (ringStage) {
    ringOff = b.named(b.op1("kern.smem_offset", {p.sR, rowBase, colBase}, types::i32()), "roff");
    ringSlot = b.named(b.add(b.mulConst(ringStage, c.warpsM), wg), "rslot");
  }
  for (int u = 0; u < units; ++u) {
    const int box = u / pieces, piece = u % pieces;
    const bool inRing = ringStage && box >= p.cSlots;
    Value* buf = inRing ? p.sR : p.sC;
    Value* slot = inRing ? ringSlot : wg;
    Value* boxOff = inRing ? ringOff : off;
    int64_t slotRow = int64_t(inRing ? box - p.cSlots : u % p.cSlots) * pieceRows;
    // reuse_stage: the ring stage is read by no wgmma any more once every consumer warpgroup has
    // passed its last; they meet before the first box staged there.
    if (inRing && box == p.cSlots)
      b.create("kern.named_barrier", {b.i32(1 + p.groups())}, {}, {{"threads", int64_t(128 * p.groups())}});
    // The box, staged between the markers; sm90-stage-epilogue writes its slot wait, barriers,
    // fence and TMA store.
    std::vector<NamedAttr> beginAttrs = {{"row", slotRow}};
    if (inRing) beginAttrs.push_back({"fresh", true});
    b.create("kern.stage_begin", {buf, slot, elected, barrier}, {}, beginAttrs);
    placeUnit(p, cx, un, u, v, nStore, warpCol0);
    cx.earlyLoads = earlyOf(u);
    // stage_store=stmatrix: the packed pairs of each 16 x 16 block, (h, j) = (0, j0), (1, j0),
    // (0, j0+1), (1, j0+1), go out as one stmatrix .x4 once the last of them is made (the epilogue
    // makes an m16 block's pairs h = 0 for every j, then h = 1): its four 8x8 matrices are exactly
    // the accumulator fragments of the two m8 halves of two n8 tiles.
    std::map<std::pair<int, int>, Value*> made;  // (h, j) -> packed pair, of the current m16 block
    cx.storeToSmem = [&, slotRow, buf, slot, boxOff](int i, int h, int j, Value* packed) {
      if (!stmatrix) {
        b.create("kern.st_shared", {buf, slot, boxOff, packed}, {},
                 {{"row", int64_t(64 * i + 8 * h + slotRow)}, {"col", int64_t(8 * j)}});
        return;
      }
      made[{h, j}] = packed;
      if (h != 1) return;
      if (j % 2 == 1) {
        std::vector<Value*> ops = {buf, slot, boxOff, made.at({0, j - 1}), made.at({1, j - 1}), made.at({0, j}), made.at({1, j})};
        if (p.swapped())  // the block's matrices stored transposed: its 16 fragment columns are rows
          b.create("kern.stmatrix", ops, {}, {{"row", int64_t(8 * (j - 1) + slotRow)}, {"col", int64_t{0}}, {"trans", true}});
        else
          b.create("kern.stmatrix", ops, {}, {{"row", int64_t(64 * i + slotRow)}, {"col", int64_t(8 * (j - 1))}});
      } else if (j + 1 == perBox) {
        // swap_ab with rows an odd number of 8s (104 of a 208-row tile in two): the last n8 tile's
        // two matrices by .x2, whose addressing lanes 0..15 are those of the .x4's first two.
        KILN_ASSERT(p.swapped(), "sm90: an odd count of n8 tiles per box comes only from swap_ab");
        b.create("kern.stmatrix", {buf, slot, boxOff, made.at({0, j}), made.at({1, j})}, {},
                 {{"row", int64_t(8 * j + slotRow)}, {"col", int64_t{0}}, {"trans", true}});
      }
    };
    // The box's accumulators, in the epilogue's (m16 tile, n8 tile, element) order.
    std::vector<Value*> part;
    if (p.swapped()) {  // the unit is block `box`, or its piece's n8 tiles
      auto first = out.begin() + box * nacc + piece * perBox * 4;
      part.assign(first, first + perBox * 4);
    } else {
      for (int i = 0; i < blocks; ++i)
        for (int j = 0; j < perBox; ++j)
          for (int e = 0; e < 4; ++e) part.push_back(out[size_t(i * nacc + (box * perBox + j) * 4 + e)]);
    }
    if (!sm80::buildEpilogue(cx, part)) return false;
    std::vector<Value*> endOps = {p.tmC, buf, slot, nStore, mStore};
    if (p.batched()) endOps.push_back(p.batch);
    endOps.push_back(elected);
    endOps.push_back(barrier);
    b.create("kern.stage_end", endOps, {},
             {{"row", slotRow}, {"offset", Attribute::ints({64 * box, int64_t(piece) * pieceRows})}});
  }
  // bn not a multiple of 64: the columns past the last whole box are stored directly from
  // registers, masked at the tensor's edges (a box that narrow would need a tensor map of its own).
  if (int tail = un.tail) {
    placeUnit(p, cx, un, units, v, nStore, warpCol0);
    cx.earlyLoads = earlyOf(units);
    cx.storeToSmem = nullptr;
    std::vector<Value*> part;
    for (int i = 0; i < blocks; ++i)
      for (int j = 0; j < tail; ++j)
        for (int e = 0; e < 4; ++e) part.push_back(out[size_t(i * nacc + (boxes * perBox + j) * 4 + e)]);
    if (!sm80::buildEpilogue(cx, part)) return false;
  }
  return true;
}

}  // namespace kiln::sm90
