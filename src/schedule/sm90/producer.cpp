// The copies of one K step: TMA loads into the stage ring (PTX ISA, "cp.async.bulk.tensor",
// "mbarrier"). The lowering writes them at the top of the consumer's K loop, issued by one thread
// (k_loop.cpp); sm90-warp-specialize (warp_specialize.cpp) moves them to the producer role, whose
// elected thread runs its own copy of the loop. After it, for each tile (inside the role's tile
// loop after partition-roles):
//
//   if warp == 0 && lane == 0:                 (one thread issues every copy)
//     for kt in 0 .. ksteps-1  carrying (s, ph) from the tile's (stage0, phase0):
//       mbarrier_wait(empty[s], ph ^ 1)        the consumers released stage s (a fresh barrier
//                                              passes parity 1 at once: the ring starts empty)
//       mbarrier_arrive_expect_tx(full[s], A box + B boxes bytes)
//       tma_load(A: k = (kbase + kt)*bk, m0)  tma_load(B: ...)  -> stage s, completing on full[s]
//                                              (kbase: split_k's first K step of the unit, else 0)
//       (s, ph) = next(s, ph)
//
// Copies past M, N or K are filled with zeros by TMA and still count their full bytes, so ragged
// tiles need nothing special here. A grouped GEMM's B copies take the tile's group, ids[m0], read
// once per tile before the K loop, as their third coordinate (docs/sm90-strategy.md, "Grouped GEMM").
// Ragged groups (ragged_walk.cpp): the tile loop gives the unit its group and first row; A's box
// rows past the group's end belong to the next group or lie past M (zero-filled), and only feed
// output rows the epilogue does not store.
//
// l2_hint=reuse: an operand that no other block reads is loaded L2 evict_first, so streaming it
// (52 MB of B at 64x5120x5120) does not evict what L2 holds: in a model, the next layer's inputs; in
// the benchmark, the dirty lines of its L2 flush (ncu: 21 MB of them written back during one
// 64x5120x5120 GEMM; 1.6 MB with B loaded evict_first). Each A tile is read by the ceil(N / bn) blocks
// of its tile row; each B tile by the ceil(M / (bm * cluster_m)) of its tile column (a cluster reads
// it once and multicasts). One more condition: an L2 miss fills more than the sectors asked for when
// the tensor map promotes fills (256 bytes, as CUTLASS's maps do), so a copy of 128-byte rows would
// also bring in the next 128 bytes, which this block reads one K step later (A, K-major B) or
// another block reads (row-major B at bn = 64); evict_first would drop them before that read and
// fetch them twice (the H200: 2-4x slower at 8192x64x4096). So a streamed operand's map fills
// 128-byte lines, and an operand streams only when a K step's copies cover whole lines (config.h,
// Sm90StreamRule; the blocks of a cluster_n cluster copy the same K step within the ring's depth of
// each other, as every stage waits for all of their A pieces). The runtime sets the map's promotion
// to the fill while the operand streams (KernelParam::stream); the kernel decides from the launch's
// M, N and K; sm90Streams (config.h) is the same rule on the host, for the heuristic.
//
// cluster_m=2 (docs/sm90-strategy.md, "Clusters and multicast"): the two blocks of a cluster run
// this for M-adjacent tiles that share the B tile. Each loads its own A box and half of the B stage
// with {multicast = 0b11}, which lands at the same offset in both blocks and completes its bytes on
// both blocks' full[s]; so full[s] still expects A box + whole B stage bytes. A producer thus
// overwrites stage s in both blocks, and empty[s] counts the releases of both blocks' consumers
// (each consumer warp arrives on its own and on the peer's, after its wgmma reads of the stage are
// complete), so the peer's reads of the stage are done before this block's multicast writes into
// it. The waits stay at CTA scope (k_loop.cpp, issueKStep). A peer's complete-tx may reach full[s] before this
// block's expect_tx of the same phase; the tx-count is then transiently negative, and the phase
// still cannot complete before the local arrival (PTX ISA, "mbarrier": tx-count range).
//
// cluster_n=cn (2 or 4): the same protocol with the operands' roles swapped. The cn blocks run this
// for N-adjacent tiles that share the A tile; block r loads rows [r bm/cn, (r+1) bm/cn) of the A
// stage with {multicast = 2^cn - 1} and its own whole B stage, and empty[s] counts the releases of
// all cn blocks' consumers. bm is a multiple of 64, so the pieces (16 rows or more) start on the
// 128-byte swizzle's 8-row period and each lands swizzled exactly as a whole-box copy would have
// placed those rows.
#include <functional>

#include "schedule/sm90/lowering.h"

namespace kiln::sm90 {
using namespace ir;

std::pair<Value*, Value*> nextStage(KernBuilder& b, Value* stage, Value* phase, int stages) {
  Value* s1 = b.addConst(stage, 1);
  Value* wrap = b.cmp("eq", s1, b.i32(stages));
  return {b.select(wrap, b.i32(0), s1), b.select(wrap, b.intBin("arith.xori", phase, b.i32(1)), phase)};
}

namespace {

// l2_hint=reuse: whether each operand streams (config.h, Sm90StreamRule) for this launch's M, N
// and K. Null: never, for this config.
struct Streams {
  Value *a = nullptr, *b = nullptr;
};
Streams streamPredicates(KernBuilder& b, const Request& r, const Kernel& k) {
  const Params& p = k.params;
  Sm90StreamRules rules = sm90StreamRules(r.c, r.g.bKMajor, r.elemBytes(), ir::bitWidth(r.g.bType) / 8);
  if (r.g.aColMajor) rules.a.possible = false;  // as the launch contract says (kernel.cpp)
  auto streams = [&](const Sm90StreamRule& rule, const char* name) -> Value* {
    if (!rule.possible) return nullptr;
    Value* cond = b.cmp("sle", rule.boundDim == 'N' ? p.dimN : p.dimM, b.i32(rule.bound));
    if (rule.rowMultiple > 1) {
      KILN_ASSERT((rule.rowMultiple & (rule.rowMultiple - 1)) == 0, "sm90: a fill is a power of two of elements");
      Value* row = rule.rowDim == 'K' ? p.dimK : p.dimN;
      cond = b.andi(cond, b.cmp("eq", b.andi(row, b.i32(rule.rowMultiple - 1)), b.i32(0)));
    }
    return b.named(cond, name);
  };
  Streams st;
  st.a = streams(rules.a, "stream_a");
  st.b = streams(rules.b, "stream_b");
  return st;
}

// Grouped GEMM: the tile's group, the id of its first row (tile.group_index; every row of the tile
// has it, as bm * cluster_m divides {align}). An id outside [0, G) puts every B box out of the
// map's bounds, so TMA fills B with zeros, as the sm80 path zero-fills its copies. Null otherwise.
Value* tileGroup(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u) {
  if (u.group) return u.group;  // ragged offsets: the tile loop's group
  const Operation* gi = r.g.groupIndex;
  if (!gi) return nullptr;
  b.setLoc(gi->loc());
  Value* ids = k.params.args.at(r.g.groupIds->definingOp()->stringAttr("name"));
  Value* at = b.ptrAdd(ids, b.cast(u.m0, types::i64()));
  Value* id = b.op1("kern.ld_global", {at, b.cmp("slt", u.m0, k.params.dimM)}, Type::scalar(r.g.groupIds->type().elem()));
  Value* group = b.named(b.cast(id, types::i32()), "group");
  b.setLoc(r.g.reduce->loc());
  return group;
}

// The TMA copies of one K step into stage s: A's box (or with cluster_n its piece), B's boxes (or
// with cluster_m its half), each completing on full[s].
class StageCopies {
 public:
  StageCopies(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, const Streams& st, Value* group,
              Value* s, Value* k0, Value* kt)
      : b_(b), r_(r), k_(k), u_(u), st_(st), group_(group), s_(s), k0_(k0), kt_(kt) {}

  // The operand a cluster shares is copied in pieces, one per rank; the other whole (A first).
  void issue() {
    const Config& c = r_.c;
    if (c.clusterN == 1) loadA(0, 1);
    // The TMA destination row is a compile-time displacement, so the rank picks one of the
    // cluster's copies of the loads: if rank == 0 {..} else if rank == 1 {..} ... else {..}.
    if (r_.geo.clustered()) byRank(0);
    if (c.clusterM == 1) loadB(0, 1);
    if (k_.params.tmSB) loadScaleB();
    if (k_.params.tmSA) loadScaleA();
  }

 private:
  std::vector<Value*> coords(Value* inner, Value* outer) const {
    std::vector<Value*> v = {inner, outer};
    if (r_.operandsBatched()) v.push_back(u_.batch);
    return v;
  }
  // Grouped: B's coordinates end with the tile's group.
  std::vector<Value*> coordsB(Value* inner, Value* outer) const {
    std::vector<Value*> v = coords(inner, outer);
    if (group_) v.push_back(group_);
    return v;
  }
  int64_t everyone() const { return (int64_t{1} << r_.geo.clusterSize) - 1; }

  // mask: the cluster's blocks the box is multicast to (0: this block's only).
  void load(Value* map, Value* buf, const std::vector<Value*>& xy, int64_t row, int64_t mask = 0) {
    std::vector<Value*> ops = {map, buf, s_, k_.smem.full, s_};
    ops.insert(ops.end(), xy.begin(), xy.end());
    std::vector<NamedAttr> attrs = {{"row", row}};
    if (mask) attrs.push_back({"multicast", mask});
    if (Value* stream = map == k_.params.tmA ? st_.a : st_.b) {
      ops.push_back(stream);
      attrs.push_back({"stream", true});
    }
    b_.create("kern.tma_load", ops, {}, attrs);
  }

  // The A stage, or (cluster_n=cn) piece `piece` of its cn row ranges, multicast to every block.
  // mask (0: every block of the cluster): the blocks a piece goes to.
  void loadA(int piece, int pieces, int64_t mask = 0) {
    b_.setLoc(r_.g.loadA->loc());
    if (r_.g.aColMajor) {
      // Column-major A: boxes of 64 of M (128 bytes) x bk K rows side by side in the stage, box j
      // from stage row j bk (as a row-major B's); with cluster_n, piece p is K rows
      // [p bk/cn, (p+1) bk/cn) of every box.
      int64_t rows = r_.c.bk / pieces;
      KILN_ASSERT(rows % 8 == 0, "sm90: an A piece starts on the 128-byte swizzle's 8-row period");
      for (int j = 0; j < r_.c.bm / 64; ++j)
        load(k_.params.tmA, k_.smem.sA, coords(b_.addConst(u_.m0, 64 * j), b_.addConst(k0_, rows * piece)),
             int64_t(j) * r_.c.bk + rows * piece, pieces > 1 ? (mask ? mask : everyone()) : 0);
      return;
    }
    int64_t rows = r_.c.bm / pieces;
    KILN_ASSERT(rows % 8 == 0, "sm90: an A piece starts on the 128-byte swizzle's 8-row period");
    load(k_.params.tmA, k_.smem.sA, coords(k0_, b_.addConst(u_.m0, rows * piece)), rows * piece,
         pieces > 1 ? (mask ? mask : everyone()) : 0);
  }

  // The B stage, or (cluster_m=2) half `half` of it, multicast to both blocks of the cluster (in a
  // 2 x 2 cluster, to the blocks `to` of its column).
  void loadB(int half, int halves, int64_t to = 0) {
    const Config& c = r_.c;
    b_.setLoc(r_.g.loadB->loc());
    int64_t mask = halves > 1 ? (to ? to : everyone()) : 0;
    if (r_.g.bKMajor) {
      int64_t rows = c.bn / halves;
      load(k_.params.tmB, k_.smem.sB, coordsB(k0_, b_.addConst(u_.n0, rows * half)), rows * half, mask);
      return;
    }
    // Row-major B: boxes of 64 columns (128 bytes) x bk rows, side by side in the stage (the last
    // one whole even where bn is not a multiple of 64); in a cluster each block loads rows
    // [h bk/2, (h+1) bk/2) of every box.
    int64_t rows = c.bk / halves;
    for (int j = 0; j < (c.bn + 63) / 64; ++j)
      load(k_.params.tmB, k_.smem.sB, coordsB(b_.addConst(u_.n0, 64 * j), b_.addConst(k0_, rows * half)),
           int64_t(j) * c.bk + rows * half, mask);
  }

  // sharedColumnScales (slice_scales.cpp): scale_b's row of the step's K block, the tile's bn
  // columns (zero-filled past N), into the stage's row of the scale ring; each block of a cluster
  // copies its own columns' (no multicast), counted in its own full[s].
  void loadScaleB() {
    b_.setLoc(r_.g.loadScaleB->loc());
    Value* kb = u_.kbase ? b_.add(u_.kbase, kt_) : kt_;
    if (sharedBlockScales(r_)) return loadScaleBlocks(kb);
    b_.create("kern.tma_load", {k_.params.tmSB, k_.smem.sSB, s_, k_.smem.full, s_, u_.n0, kb}, {},
              {{"row", int64_t{0}}});
  }

  // sharedBlockScales: for each scale_b block the tile's columns span (from the tile's first
  // column's), the 16-byte box of the flat map that holds element (block, kb) = block * ktiles + kb
  // of the stored [N blocks][K blocks], to its own 128-byte row of the stage's ring. The box starts
  // at that element rounded down to a multiple of 4 (a box whose first element is not 16-byte
  // aligned is an illegal instruction on the GPU: GPU run 12), and the consumers read the element
  // at (block * ktiles + kb) % 4 of it (slice_scales.cpp). A block past N (a 160-column tile's
  // second at the last tile) or a step past K (split-K's last slice) reads the next stored elements
  // or TMA's zeros: finite scales of sums that are zero (their operands zero-filled) and never
  // stored.
  void loadScaleBlocks(Value* kb) {
    Value* first = b_.div(u_.n0, b_.i32(blockOf(r_.g.loadScaleB->operand(0)->type()).back()));
    for (int i = 0; i < blockScaleBoxes(r_); ++i) {
      Value* at = b_.andi(b_.add(b_.mul(b_.addConst(first, i), k_.ktiles), kb), b_.i32(~int64_t{3}));
      b_.create("kern.tma_load", {k_.params.tmSB, k_.smem.sSB, s_, k_.smem.full, s_, at, b_.i32(0)}, {},
                {{"row", int64_t{8} * i}});
    }
  }

  // sharedRowScales: scale_a's row of the step's K block, the tile's bm rows, as one box of its
  // flat map from the 16-byte boundary at or before the tile's first (staged_scales.cpp).
  void loadScaleA() {
    b_.setLoc(r_.g.loadScaleA->loc());
    Value* kb = u_.kbase ? b_.add(u_.kbase, kt_) : kt_;
    Value* rows = stagedScaleRows(b_, k_, *r_.g.loadScaleA, coordArgM(r_.g));
    Value* at = b_.andi(stagedScaleElement(b_, kb, rows, u_.m0), b_.i32(~int64_t{3}));
    b_.create("kern.tma_load", {k_.params.tmSA, k_.smem.sSA, s_, k_.smem.full, s_, at, b_.i32(0)}, {},
              {{"row", int64_t{0}}});
  }

  // Rank r's copies. In a 2 x 2 cluster block r = (r % 2 along M, r / 2 along N) copies piece
  // r / 2 of its A stage to its row of the cluster (the blocks of its M index) and half r % 2 of
  // its B stage to its column (the blocks of its N index).
  void piece(int rank) {
    const Config& c = r_.c;
    if (c.clusterM > 1 && c.clusterN > 1) {
      int rm = rank % c.clusterM, rn = rank / c.clusterM;
      int64_t row = 0, column = 0;
      for (int j = 0; j < c.clusterN; ++j) row |= int64_t{1} << (rm + c.clusterM * j);
      for (int i = 0; i < c.clusterM; ++i) column |= int64_t{1} << (i + c.clusterM * rn);
      loadA(rn, c.clusterN, row);
      loadB(rm, c.clusterM, column);
      return;
    }
    c.clusterN > 1 ? loadA(rank, c.clusterN) : loadB(rank, c.clusterM);
  }

  void byRank(int rank) {
    if (rank + 1 == r_.geo.clusterSize) return piece(rank);
    Operation* test = b_.create("scf.if", {b_.cmp("eq", k_.rank, b_.i32(rank))}, {}, {}, 2);
    InsertionGuard inner(b_);
    b_.setInsertionPointToEnd(test->region(0).addBlock());
    piece(rank);
    b_.create("scf.yield", {}, {});
    b_.setInsertionPointToEnd(test->region(1).addBlock());
    byRank(rank + 1);
    b_.create("scf.yield", {}, {});
  }

  KernBuilder& b_;
  const Request& r_;
  const Kernel& k_;
  const Unit& u_;
  const Streams& st_;
  Value* group_;
  Value *s_, *k0_, *kt_;
};

// The bytes a stage's copies deliver: whole boxes, zero-filled past the tensor's edges (a
// row-major B's last box is 64 columns wide whatever bn is).
int64_t stageTxBytes(const Request& r, const Kernel& k) {
  const Config& c = r.c;
  int64_t bRows = r.g.bKMajor ? c.bn : (c.bn + 63) / 64 * 64;
  const int64_t scaleB = !k.params.tmSB ? 0 : sharedBlockScales(r) ? 16 * int64_t(blockScaleBoxes(r)) : int64_t(c.bn) * 4;
  return (c.bm + bRows) * c.bk * r.elemBytes() + scaleB +
         (k.params.tmSA ? stagedScaleBoxFloats(c.bm) * 4 : 0);
}

}  // namespace

void buildCopies(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, Value* kt, Value* s, Value* ph) {
  const Config& c = r.c;
  b.setLoc(r.g.reduce->loc());
  // Loop-invariant (sm90-warp-specialize hoists them before the producer's K loop).
  const Streams st = streamPredicates(b, r, k);
  Value* group = tileGroup(b, r, k, u);
  // The stage is free once its readers released it (a fresh barrier passes parity 1 at once: the
  // ring starts empty), then armed with the bytes its copies deliver.
  b.create("kern.mbarrier_wait", {k.smem.empty, s, b.intBin("arith.xori", ph, b.i32(1))}, {});
  b.create("kern.mbarrier_arrive_expect_tx", {k.smem.full, s}, {}, {{"bytes", stageTxBytes(r, k)}});
  // Groups along K: from the group's first token (not a multiple of bk). FP8's (tokens the operands'
  // contiguous axis) from the start of the scale block that token lies in, the block its scales
  // are read from (lower.cpp's kbase): the same token where groups hold whole blocks, as they must,
  // and a box start 16-byte aligned where offsets on the device do not (an unaligned start is an
  // illegal instruction on the GPU).
  Value* k0 = u.kTok && !r.g.blockK ? b.named(b.add(u.kTok, b.mulConst(kt, c.bk)), "k0")
                                    : b.named(b.mulConst(u.kbase ? b.add(u.kbase, kt) : kt, c.bk), "k0");
  StageCopies(b, r, k, u, st, group, s, k0, kt).issue();
  b.setLoc(r.g.reduce->loc());
}

}  // namespace kiln::sm90
