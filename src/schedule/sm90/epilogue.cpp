// The sm90 consumer's fused epilogue (contract in lowering.h): one tile's accumulators, through
// the sm80 epilogue's view of them (each consumer warp as an sm80 warp: consumer.cpp), stored
// from registers (epilogue=direct) or staged per box (one 128-byte swizzled row wide: 64 bf16 / f16
// columns, 32 f32 ones) in shared memory and stored by TMA
// (epilogue=tma), with swap_ab's transposed fragment staged by stmatrix .trans; with ragged groups
// and epilogue=tma, a group's last, partial tile from registers (buildEpilogue).
#include <algorithm>
#include <map>

#include "schedule/sm80_context.h"
#include "schedule/sm90/lowering.h"

namespace kiln::sm90 {
using namespace ir;

namespace {

// The sm80 epilogue's view of the warpgroup's accumulators: each consumer warp v = cwarp % 4 as an
// sm80 warp whose m16 tiles lie 64 rows apart (one per m64 block), from row m0 + rowA + 16 v.
sm80::Context epilogueContext(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, const Warpgroup& w,
                              ir::DiagnosticEngine& diag, Value*& v) {
  sm80::Context cx{r.g, r.c, r.target, b, diag};
  cx.args = k.params.args;
  cx.dims = k.params.dims;
  // Ragged groups: the group's rows end before M (its tile's rows past it are the next group's).
  cx.dimM = u.mEnd ? u.mEnd : k.params.dimM;
  if (u.group) cx.group = b.cast(u.group, types::i64());  // ragged offsets: a per-group vector's index
  cx.dimN = k.params.dimN;
  cx.dimK = k.params.dimK;
  cx.lane = w.lane;
  cx.m0 = u.m0;
  cx.n0 = u.n0;
  cx.batch = r.batched() ? u.batch : nullptr;
  cx.mTilesOverride = r.geo.wgmmaBlocks;
  cx.nTilesOverride = r.c.bn / 8;
  cx.mTileStride = 64;
  v = b.rem(w.cwarp, b.i32(4));
  cx.warpRow0 = b.named(b.add(b.add(u.m0, w.rowA), b.mulConst(v, 16)), "wrow");
  cx.warpCol0 = u.n0;
  return cx;
}

// The units the staged epilogue (epilogue=tma) goes out in: the warpgroup's boxes of boxCols
// columns (64 of a 16-bit output, 32 of an f32 one: one 128-byte swizzled row), each in `pieces`
// row pieces of pieceRows (store_pieces, swap_ab), then, when bn is not a multiple of boxCols, the
// columns past the last whole box (unit `units`, stored from registers).
struct Units {
  int boxes, pieces, pieceRows, units, perBox, tail, cols;
};
Units stagedUnits(const Request& r) {
  Units un;
  un.cols = r.geo.boxCols;
  un.boxes = r.geo.colsPerConsumer / un.cols;
  un.pieces = std::max(1, r.c.storePieces);
  un.pieceRows = r.geo.rowsPerPiece;
  un.units = un.boxes * un.pieces;
  un.perBox = r.geo.swapped ? un.pieceRows / 8 : un.cols / 8;  // the fragment's n8 tiles per unit
  un.tail = r.c.bn % un.cols / 8;
  return un;
}

// swap_ab: block i holds columns n0 + colB + 64 i .. of the tile as the fragment's rows (warp v's
// 16 of them) and the warpgroup's rows of the tile as its columns; one block per 64-column box.
void transposeForSwap(KernBuilder& b, const Unit& u, sm80::Context& cx, Value* rowA) {
  cx.transposed = true;
  cx.mTilesOverride = 1;
  cx.warpCol0 = b.add(u.m0, rowA);
}

// Points cx's warp tile at unit i of the staged epilogue: box i / pieces (its piece i % pieces),
// or the columns past the boxes. nStore: the warpgroup's first column; warpCol0: cx's before.
void placeUnit(KernBuilder& b, const Request& r, const Unit& u, sm80::Context& cx, const Units& un, int i, Value* v,
               Value* nStore, Value* warpCol0) {
  if (i == un.units) {
    cx.nTilesOverride = un.tail;
    cx.warpCol0 = b.addConst(u.n0, int64_t(un.cols) * un.boxes);
    return;
  }
  const int box = i / un.pieces, piece = i % un.pieces;
  cx.nTilesOverride = un.perBox;
  if (r.geo.swapped) {
    cx.warpRow0 = b.add(b.addConst(nStore, 64 * box), b.mulConst(v, 16));
    if (un.pieces > 1) cx.warpCol0 = b.addConst(warpCol0, int64_t(piece) * un.pieceRows);
  } else {
    cx.warpCol0 = b.addConst(u.n0, int64_t(un.cols) * box);
  }
}

// The warpgroup's first column of the tile: with warps_n, n0 + colB.
Value* storeColumn(KernBuilder& b, const Request& r, const Unit& u, Value* colB) {
  return r.c.warpsN > 1 ? b.named(b.add(u.n0, colB), "ncol") : u.n0;
}

// Where each thread's packed pairs go in a staged box: the thread's first (row, column) of it, and
// its one swizzled offset there (kern.smem_offset); each store's (row, col) is a compile-time
// displacement from it, which composes with the 128B swizzle (rows by multiples of 8, columns by
// whole 16-byte chunks apart from the thread's own: kern_ops.h), so a store costs a constant XOR
// and an immediate.
struct StagingAddress {
  Value *row, *col;
};
StagingAddress stagingAddress(KernBuilder& b, const Request& r, const Warpgroup& w, Value* v) {
  Value* lane = w.lane;
  Value *rowBase, *colBase;
  if (r.geo.swapped) {
    // stmatrix .trans: the same four matrices stored transposed, so lane l addresses column l % 8
    // of matrix l / 8 of the fragment's 16 x 16 block, which is row 8 (l / 16) + l % 8 of the
    // warpgroup's rows in the box, at columns 16 v + 8 ((l / 8) % 2) of it.
    rowBase = b.add(b.rem(lane, b.i32(8)), b.mulConst(b.div(lane, b.i32(16)), 8));
    colBase = b.add(b.mulConst(v, 16), b.mulConst(b.rem(b.div(lane, b.i32(8)), b.i32(2)), 8));
  } else if (r.c.stageStore == StageStore::Stmatrix) {
    // stage_store=stmatrix: lane l addresses row l % 8 of matrix l / 8, the matrices being the
    // (m8 half, n8 tile) blocks (0, 0), (1, 0), (0, 1), (1, 1) of a 16 x 16 block of the warp's rows.
    rowBase = b.add(b.mulConst(v, 16), b.add(b.rem(lane, b.i32(8)), b.mulConst(b.rem(b.div(lane, b.i32(8)), b.i32(2)), 8)));
    colBase = b.mulConst(b.div(lane, b.i32(16)), 8);
  } else {
    // stage_store=pairs: row l/4 of its m8 half, columns 2(l%4), 2(l%4)+1 of each n8 tile (an f32
    // output's in bytes 8(l%4) of the tile's 32: chunk l%4 / 2 of its two, which the tile's
    // displacement of two whole chunks composes with).
    rowBase = b.add(b.mulConst(v, 16), b.div(lane, b.i32(4)));
    colBase = b.mulConst(b.rem(lane, b.i32(4)), 2);
  }
  return {b.named(rowBase, "srow"), b.named(colBase, "scol")};
}

// Where one staged unit goes: the buffer, its slot, the thread's offset there and the unit's first
// row in the slot.
struct Slot {
  Value *buf, *slot, *offset;
  int64_t row;
};

// The stores of one staged unit's pairs (sm80::Context::storeToSmem): each pair by st.shared
// (stage_store=pairs: a packed 16-bit pair by st.shared.b32, an f32 pair by st.shared.v2.f32, the
// same one store per pair at twice the bytes), or the pairs of each 16 x 16 block, (h, j) = (0, j0), (1, j0),
// (0, j0+1), (1, j0+1), as one stmatrix .x4 once the last of them is made (the epilogue makes an
// m16 block's pairs h = 0 for every j, then h = 1): its four 8x8 matrices are exactly the
// accumulator fragments of the two m8 halves of two n8 tiles.
class StagedStores {
 public:
  StagedStores(KernBuilder& b, const Request& r, const Slot& at, int perBox) : b_(b), r_(r), at_(at), perBox_(perBox) {}

  void operator()(int i, int h, int j, Value* packed, Value* hi) {
    if (r_.c.stageStore != StageStore::Stmatrix) {
      std::vector<Value*> ops = {at_.buf, at_.slot, at_.offset, packed};
      if (hi) ops.push_back(hi);
      b_.create("kern.st_shared", ops, {}, {{"row", int64_t(64 * i + 8 * h + at_.row)}, {"col", int64_t(8 * j)}});
      return;
    }
    KILN_ASSERT(!hi, "sm90: stmatrix stages 16-bit pairs (the config rules refuse it for an f32 output)");
    made_[{h, j}] = packed;
    if (h != 1) return;
    if (j % 2 == 1) {
      std::vector<Value*> ops = {at_.buf,           at_.slot,          at_.offset,    made_.at({0, j - 1}),
                                 made_.at({1, j - 1}), made_.at({0, j}), made_.at({1, j})};
      if (r_.geo.swapped)  // the block's matrices stored transposed: its 16 fragment columns are rows
        b_.create("kern.stmatrix", ops, {},
                  {{"row", int64_t(8 * (j - 1) + at_.row)}, {"col", int64_t{0}}, {"trans", true}});
      else
        b_.create("kern.stmatrix", ops, {}, {{"row", int64_t(64 * i + at_.row)}, {"col", int64_t(8 * (j - 1))}});
    } else if (j + 1 == perBox_) {
      // swap_ab with rows an odd number of 8s (104 of a 208-row tile in two): the last n8 tile's
      // two matrices by .x2, whose addressing lanes 0..15 are those of the .x4's first two.
      KILN_ASSERT(r_.geo.swapped, "sm90: an odd count of n8 tiles per box comes only from swap_ab");
      b_.create("kern.stmatrix", {at_.buf, at_.slot, at_.offset, made_.at({0, j}), made_.at({1, j})}, {},
                {{"row", int64_t(8 * j + at_.row)}, {"col", int64_t{0}}, {"trans", true}});
    }
  }

 private:
  KernBuilder& b_;
  const Request& r_;
  Slot at_;
  int perBox_;
  std::map<std::pair<int, int>, Value*> made_;  // (h, j) -> packed pair, of the current m16 block
};

// The accumulators of staged unit (box, piece) or of the columns past the boxes (box = boxes,
// count = tail n8 tiles), in the epilogue's (m16 tile, n8 tile, element) order.
std::vector<Value*> unitAccumulators(const Request& r, const std::vector<Value*>& out, int box, int piece, int count) {
  const int perBox = r.geo.boxCols / 8;
  const int blocks = r.geo.wgmmaBlocks, nacc = r.geo.accPerBlock;
  std::vector<Value*> part;
  if (r.geo.swapped) {  // the unit is block `box`, or its piece's n8 tiles
    auto first = out.begin() + box * nacc + piece * count * 4;
    part.assign(first, first + count * 4);
    return part;
  }
  for (int i = 0; i < blocks; ++i)
    for (int j = 0; j < count; ++j)
      for (int e = 0; e < 4; ++e) part.push_back(out[size_t(i * nacc + (box * perBox + j) * 4 + e)]);
  return part;
}

}  // namespace

bool preloadEpilogue(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, const Warpgroup& w,
                     EarlyLoads& early, ir::DiagnosticEngine& diag) {
  Value* v = nullptr;
  sm80::Context cx = epilogueContext(b, r, k, u, w, diag, v);
  if (!k.smem.sC) {
    early.assign(1, {});
    cx.earlyLoads = &early[0];
    return sm80::preloadEpilogue(cx);
  }
  if (r.geo.swapped) transposeForSwap(b, u, cx, w.rowA);
  Units un = stagedUnits(r);
  Value* nStore = storeColumn(b, r, u, w.colB);
  Value* warpCol0 = cx.warpCol0;
  early.assign(size_t(un.units + (un.tail ? 1 : 0)), {});
  for (int i = 0; i < int(early.size()); ++i) {
    placeUnit(b, r, u, cx, un, i, v, nStore, warpCol0);
    cx.earlyLoads = &early[size_t(i)];
    if (!sm80::preloadEpilogue(cx)) return false;
  }
  return true;
}

bool prefetchEpilogue(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, const Warpgroup& w,
                      ir::DiagnosticEngine& diag) {
  Value* v = nullptr;
  sm80::Context cx = epilogueContext(b, r, k, u, w, diag, v);
  return sm80::prefetchEpilogue(cx, b.named(b.add(b.mulConst(v, 32), w.lane), "pfslot"), 128);
}

namespace {

// How many units ahead of the one being staged its whole-tile loads go out. One ahead spills
// (ptxas, gemm_bias_silu_residual: 212 bytes at 128x256 late, 600 at the 192x192 swap_ab tuned on
// the H100), none does not: a unit's loads then go out before its own slot wait and barrier.
constexpr int kAhead = 0;

// epilogue=tma: the warpgroup's rows go out one box (boxCols columns) at a time, through cSlots
// slots of its region of sC (each rows x boxCols, 128B-swizzled, the TMA box layout). Each box is staged (every
// thread writes its pairs of it) between a kern.stage_begin and a kern.stage_end, and
// sm90-stage-epilogue writes the protocol around it (the elected thread's wait until the store
// that last used the slot has read it, a named barrier, the staging, a proxy fence, a named
// barrier, the elected thread's TMA store, which clips the box at the tensor's edges). So a box's
// global write overlaps the next box's staging, and the last ones the next tile's K loop.
bool stageBoxes(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, const Warpgroup& w,
                const EpilogueInputs& in, sm80::Context& cx, Value* v) {
  const Config& c = r.c;
  const int cSlots = r.geo.cSlots;
  Value* elected = isElected(b);
  Value* barrier = groupBarrier(b, w.wg);
  const StagingAddress sa = stagingAddress(b, r, w, v);
  Value* off = b.named(b.op1("kern.smem_offset", {k.smem.sC, sa.row, sa.col}, types::i32()), "soff");
  Value* mStore = b.add(u.m0, w.rowA);
  // The warpgroup's boxes: the tile's, or with warps_n those of its columns, from n0 + colB.
  Value* nStore = storeColumn(b, r, u, w.colB);
  // store_pieces (swap_ab): each box goes out in `pieces` row pieces of pieceRows, each staged in a
  // slot and stored by TMA on its own; the units of the slot protocol are then (box, piece).
  const Units un = stagedUnits(r);
  Value* warpCol0 = cx.warpCol0;
  // reuse_stage: boxes cSlots.. go to this warpgroup's region of ring stage ringStage (a fresh
  // region: no store of it is pending), once every consumer warpgroup is past its last wgmma, so
  // nothing reads the stage any more.
  Value *ringOff = nullptr, *ringSlot = nullptr;
  if (in.ringStage) {
    ringOff = b.named(b.op1("kern.smem_offset", {k.smem.sR, sa.row, sa.col}, types::i32()), "roff");
    ringSlot = b.named(b.add(b.mulConst(in.ringStage, c.warpsM), w.wg), "rslot");
  }
  // The unit's loads go out before its slot's wait and barrier, which no load crosses: whole-tile
  // ones (a residual [M, N]) those of units up to i + kAhead before unit i is staged, and, unless
  // made before (epilogue_loads=early, prefetch), the vectors and scalars with them. So their global
  // round trip passes behind the wait, the barrier and (kAhead) the staging and TMA stores before.
  const int total = un.units + (un.tail ? 1 : 0);
  EarlyLoads ahead = in.early ? *in.early : EarlyLoads(size_t(total));
  int issued = 0;
  const bool loads = std::any_of(r.g.epilogue.begin(), r.g.epilogue.end(), [](const Operation* op) {
    return op->is("tile.load") || op->is("tile.load_scalar");
  });
  auto loadAhead = [&](int upTo) {
    for (; loads && issued < std::min(upTo, total); ++issued) {
      placeUnit(b, r, u, cx, un, issued, v, nStore, warpCol0);
      cx.earlyLoads = &ahead[size_t(issued)];
      if (!in.early && !sm80::preloadEpilogue(cx)) return false;
      if (!sm80::preloadEpilogue(cx, /*wholeTiles=*/true)) return false;
    }
    return true;
  };
  for (int i = 0; i < un.units; ++i) {
    if (!loadAhead(i + 1 + kAhead)) return false;
    const int box = i / un.pieces, piece = i % un.pieces;
    const bool inRing = in.ringStage && box >= cSlots;
    const Slot at{inRing ? k.smem.sR : k.smem.sC, inRing ? ringSlot : w.wg, inRing ? ringOff : off,
                  int64_t(inRing ? box - cSlots : i % cSlots) * un.pieceRows};
    // reuse_stage: the ring stage is read by no wgmma any more once every consumer warpgroup has
    // passed its last; they meet before the first box staged there.
    if (inRing && box == cSlots)
      b.create("kern.named_barrier", {b.i32(1 + r.geo.groups)}, {}, {{"threads", int64_t(128 * r.geo.groups)}});
    // The box, staged between the markers; sm90-stage-epilogue writes its slot wait, barriers,
    // fence and TMA store.
    std::vector<NamedAttr> beginAttrs = {{"row", at.row}};
    if (inRing) beginAttrs.push_back({"fresh", true});
    b.create("kern.stage_begin", {at.buf, at.slot, elected, barrier}, {}, beginAttrs);
    placeUnit(b, r, u, cx, un, i, v, nStore, warpCol0);
    cx.earlyLoads = &ahead[size_t(i)];
    cx.storeToSmem = StagedStores(b, r, at, un.perBox);
    if (!sm80::buildEpilogue(cx, unitAccumulators(r, in.out, box, piece, un.perBox))) return false;
    std::vector<Value*> endOps = {k.params.tmC, at.buf, at.slot, nStore, mStore};
    if (r.batched()) endOps.push_back(u.batch);
    endOps.push_back(elected);
    endOps.push_back(barrier);
    b.create("kern.stage_end", endOps, {},
             {{"row", at.row}, {"offset", Attribute::ints({int64_t(un.cols) * box, int64_t(piece) * un.pieceRows})}});
  }
  // bn not a multiple of boxCols: the columns past the last whole box are stored directly from
  // registers, masked at the tensor's edges (a box that narrow would need a tensor map of its own).
  if (un.tail) {
    if (!loadAhead(total)) return false;
    placeUnit(b, r, u, cx, un, un.units, v, nStore, warpCol0);
    cx.earlyLoads = &ahead[size_t(un.units)];
    cx.storeToSmem = nullptr;
    if (!sm80::buildEpilogue(cx, unitAccumulators(r, in.out, un.boxes, 0, un.tail))) return false;
  }
  return true;
}

}  // namespace

bool buildEpilogue(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, const Warpgroup& w,
                   const EpilogueInputs& in, ir::DiagnosticEngine& diag) {
  Value* v = nullptr;
  auto direct = [&](EarlyLoads* early) {
    sm80::Context cx = epilogueContext(b, r, k, u, w, diag, v);
    cx.earlyLoads = early ? &early->at(0) : nullptr;
    return sm80::buildEpilogue(cx, in.out);
  };
  auto staged = [&] {
    sm80::Context cx = epilogueContext(b, r, k, u, w, diag, v);
    if (r.geo.swapped) transposeForSwap(b, u, cx, w.rowA);
    return stageBoxes(b, r, k, u, w, in, cx, v);
  };
  if (!k.smem.sC) return direct(in.early);
  if (!u.mEnd) return staged();
  // Ragged groups: a TMA store clips its box at the tensor's edges only, so it would write the
  // rows of the tile past its group's end (the next group's, stored by another tile). A tile whose
  // rows all lie in its group (m0 + bm <= mend: all of a group's tiles but its last, partial one)
  // goes out by TMA; the partial one from registers, masked at mend (its own contexts: no value
  // made in one arm is used in the other). The condition is the block's, so the staged arm's
  // barriers are reached by every thread or by none; a tile that stores directly commits no store
  // group, which only leaves fewer pending than sm90-stage-epilogue's waits allow.
  Value* whole = b.named(b.cmp("sle", u.m0, b.addConst(u.mEnd, -int64_t(r.c.bm))), "whole");
  Operation* f = b.create("scf.if", {whole}, {}, {}, 2);
  InsertionGuard guard(b);
  b.setInsertionPointToEnd(f->region(0).addBlock());
  bool ok = staged();
  b.create("scf.yield", {}, {});
  b.setInsertionPointToEnd(f->region(1).addBlock());
  ok = ok && direct(nullptr);  // the early loads, if any, were made for the staged units
  b.create("scf.yield", {}, {});
  return ok;
}

}  // namespace kiln::sm90
