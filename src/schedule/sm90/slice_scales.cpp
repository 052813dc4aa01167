// Block scales in the sm90 consumer's K loop (tile.dot_scaled; docs/fp8-scaling.md). With bk =
// block_k, K step kt of a unit is one slice of K: the factor each accumulator's sums of that step
// are multiplied by is scale_a at the accumulator's row times scale_b at its column, for the
// slice. The lowering writes them at the start of the fast K loop's body, before the step's wait
// for its stage, so their loads are in flight while the stage lands and the wgmmas run:
//
//   before the loop: for each row r the thread's accumulators hold, and each column block c:
//     pa_r = scale_a + off(row r, K block 0)   pb_c = scale_b + off(K block 0, col c)   (+ in-bounds)
//   for kt ...:
//     kb   = (kbase + kt) / (scale block along K / bk)           (the slice's stored K index)
//     a_r  = ld.global(pa_r + kb * strideK_a)   b_c = ld.global(pb_c + kb * strideK_b)
//     f_rc = a_r * b_c                                        (one f32 multiply per distinct pair)
//     kern.promote_scales(f of accumulator 0, f of accumulator 1, ...)
//     ... the step (wait, wgmmas) ...
//
// A tile whose columns may span two scale_b blocks (bn = 160 or 96 for blocks of 128) loads the two
// blocks' scales (the second's column the next block's start, predicated off past N), makes both
// products per row, and picks one per row and chunk of g columns (the spacing of the places a block
// can start: 32 for 160) by comparing the chunk's first column with rel, the columns to the next
// block, made before the loop: 4 loads, 4 FMUL and 10 FSEL a step for 128x160, where one load per
// n8 group (22, addressed in the step: 215 IMAD and 87 ISETP) and 40 FMUL ran before.
//
// Per-column scales (scale_b in blocks of one column): the thread's first column's pointer is made
// as above and each other column's load addressed in the step as that pointer plus a constant
// (its column offset times the column stride), in the tensor where the offset is below the
// columns left from the first: one pointer through the loop, not 40 (or 40 addressed each step).
// Where scale_b's columns are contiguous (pairedColumnScales), a thread's two adjacent columns of an
// n8 group (2 (l % 4) and the next) come in one 8-byte load: half the loads, their predicates and
// their zero-fills (128x160: 42 loads a step -> 22). The pair's first column is even and the
// column extent even (a launch requirement), so both columns are in the tensor or neither.
//
// Per-column scales copied with the stage (sharedColumnScales: scale_b [K blocks][N] dense, N
// contiguous, one K block a step, operands neither batched nor grouped): the producer copies scale_b's
// row of the step's K block, the tile's bn columns, into the stage's row of a [stages, 1, bn] f32
// ring by TMA (an unswizzled map, box bn x 1, zero-filled past N, its bytes in full[s]'s
// expect_tx; producer.cpp), and a thread's column c is kern.ld_shared(sSB, s, off){col = c - first}
// from one offset made before the loop: no pointer, predicate or zero fill a column, and
// sm90-promote-fp8 reads them after the step's sums are waited for (the stage is still held), so no
// scale_b load is in flight across a wgmma fence. 128x160: 20 LDS.64 where 20 LDG.64 with their
// ISETP and CS2R ran (283 -> 243 instructions a step).
//
// Per-row scales copied with the stage (sharedRowScales: scale_a [K blocks][M] dense, M contiguous,
// under the same operand conditions): the producer copies scale_a's row of the step's K block, the
// tile's bm rows, into a [stages, 1, bm] ring after scale_b's the same way, and a thread's rows
// (64 i + 8 h past its first) are kern.ld_shared(sSA, s, saoff): no scale_a load in flight across a
// wgmma fence either (GPU run 11: such loads held the wgmmas back). 128x160: 2 LDS for 2 LDG. Its
// map is flat, its box starting at a 16-byte boundary up to 3 rows before the tile's
// (staged_scales.cpp), so the launch asks nothing of M. scale_b's keeps its 2-D map and asks N % 4:
// a box start off the tile's first column would put the thread's column pairs off 8 bytes, and
// their LDS.64 would split in two (N % 8 is the FP8 family's rule anyway: the output's rows).
//
// sm90-promote-fp8 adds each step's sums as fma(sums, f, acc). The accumulator layout (PTX ISA,
// "Matrix Fragments for wgmma.mma_async", D): in m64 block i, register 4j + e of warp v's lane l
// holds row 64 i + 16 v + l / 4 + 8 (e >= 2), column 8 j + 2 (l % 4) + (e & 1) of the warpgroup's
// share of the tile. A scale tensor's element for a position is its block's stored element,
// (position / block) per axis in the tensor's storage order; rows and columns past the tensor
// read 0 (their sums are zero-filled and never stored).
#include <map>
#include <numeric>
#include <set>

#include "dialects/tile/tensor_layout.h"
#include "schedule/sm90/lowering.h"

namespace kiln::sm90 {
using namespace ir;

namespace {

// The position each index of `load` selects: the batch, the group (ragged offsets: B's matrix),
// the row or column given, or (the K coord) null: the K part of the address is the loop's.
std::vector<Value*> positionsOf(const Request& r, const Unit& u, const Operation& load, Value* row, Value* col) {
  const GemmProgram& g = r.g;
  std::vector<Value*> pos;
  for (unsigned i = 1; i < load.numOperands(); ++i) {
    const Value* v = load.operand(i);
    pos.push_back(v == g.batchArg                     ? u.batch
                  : g.groupValue && v == g.groupValue ? u.group
                  : v == coordArgM(g)                 ? row
                  : v == coordArgN(g)                 ? col
                                                      : nullptr);
  }
  return pos;
}

// One scale's element for a fixed row (or column), before the K loop: the pointer of its K block 0,
// whether the row is inside the tensor, and the element stride of the K axis.
SliceScales::Load prepareLoad(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, const Operation& load,
                              Value* row, Value* col) {
  const Value* t = load.operand(0);
  const Type& type = t->type();
  const std::vector<int64_t> block = blockOf(type);
  const std::vector<Value*> pos = positionsOf(r, u, load, row, col);
  std::vector<Value*> stored;
  for (size_t a = 0; a < type.rank(); ++a) {
    const Extent& e = type.shape()[a];
    Value* ext = e.isSymbolic() ? k.params.dims.at(e.sym) : b.i32(e.value);
    stored.push_back(block[a] == 1 ? ext : b.div(b.addConst(ext, block[a] - 1), b.i32(block[a])));
  }
  std::vector<int64_t> order;
  if (const Attribute* o = type.param("order")) order = *o->asInts();
  for (size_t a = type.rank(); a-- > 0 && order.size() < type.rank();) order.push_back(int64_t(a));
  SliceScales::Load l;
  Value* offset = b.i64(0);
  Value* stride = b.i64(1);
  for (int64_t a : order) {
    Value* p = pos[size_t(a)];
    if (!p) {  // the K axis: its stride, and how many K steps one stored element covers
      l.kStride = stride;
      l.kPerStep = block[size_t(a)] / r.c.bk;
    } else {
      const Extent& e = type.shape()[size_t(a)];
      Value* limit = e.isSymbolic() ? k.params.dims.at(e.sym) : b.i32(e.value);
      Value* in = b.cmp("slt", p, limit);
      if (p == col && block[size_t(a)] == 1) {
        l.colStride = stride;
        l.colLeft = b.intBin("arith.subi", limit, col);
      }
      l.ok = l.ok ? b.andi(l.ok, in) : in;
      Value* idx = block[size_t(a)] == 1 ? p : b.div(p, b.i32(block[size_t(a)]));
      offset = b.intBin("arith.addi", offset, b.intBin("arith.muli", b.cast(idx, types::i64()), stride));
    }
    stride = b.intBin("arith.muli", stride, b.cast(stored[size_t(a)], types::i64()));
  }
  l.ptr = b.ptrAdd(k.params.args.at(t->definingOp()->stringAttr("name")), offset);
  return l;
}

}  // namespace

bool checkSliceScales(const GemmProgram& g, const Config& c, DiagnosticEngine& diag) {
  if (!g.blockK) return true;
  if (c.fp8Accum == Fp8Accum::Fast)
    return diag.error(g.dot->loc()) << c.strategy << " applies block scales as each K step's sums are promoted to f32: "
                                                     "use fp8_accum=promote or promote_pairs, not fast";
  if (c.bk != g.blockK)
    return diag.error(g.dot->loc()) << "tile.dot_scaled {block_k = " << g.blockK << "} scales slices of " << g.blockK
                                    << " along " << g.dimK << ", but " << c.strategy
                                    << " scales one K step at a time and its K steps are bk=" << c.bk
                                    << ": make them equal (FP8 K steps are 128: scale blocks of 128 along "
                                    << g.dimK << ")";
  if (c.swapAB)
    return diag.error(g.dot->loc()) << c.strategy << " does not apply block scales with swapped operands; use "
                                                     "swap_ab=false";
  return true;
}

namespace {

int64_t blockN(const Request& r) { return blockOf(r.g.loadScaleB->operand(0)->type()).back(); }

// Whether the warpgroup's columns span at most two scale_b blocks at any tile, neither of which
// holds every tile's columns alike: bN a multiple of 8 (an n8 group in one block) and neither a
// multiple nor (with one warpgroup along N) a divisor of bn, e.g. bn = 160 or 96 for bN = 128. The
// warpgroup's first column is a multiple of g = gcd(bn, its column share, bN), so it starts at most
// bN - g into a block.
// g where they do (the columns a block boundary can fall at, the start of one in g), else 0.
int64_t spansTwoBlocks(const Request& r) {
  const Config& c = r.c;
  const int64_t bN = blockN(r), cols = r.geo.colsPerConsumer;
  if (bN % 8 != 0 || bN % c.bn == 0 || (c.bn % bN == 0 && c.warpsN == 1)) return 0;
  const int64_t g = std::gcd(std::gcd(int64_t(c.bn), cols), bN);
  return (bN - g + cols - 1) / bN + 1 <= 2 ? g : 0;
}

// Which of the thread's columns share scale_b's element: all of the tile's when a block of bN
// columns holds the tile (bN a multiple of bn: tiles start at multiples of bn); with bN a multiple
// of 8 (an n8 group in one block), those in one block when bn is a multiple of bN (and the
// warpgroup's columns start at 0), else those of one n8 group; else each column its own.
int64_t colKey(const Request& r, int j, int e) {
  const Config& c = r.c;
  const int64_t bN = blockN(r);
  if (bN % c.bn == 0) return 0;
  if (bN % 8 != 0) return 8 * j + (e & 1);
  return c.bn % bN == 0 && c.warpsN == 1 ? 8 * j / bN : 8 * j;
}

}  // namespace

bool pairedColumnScales(const Request& r) {
  if (blockN(r) != 1) return false;
  const Operation& load = *r.g.loadScaleB;
  const Type& t = load.operand(0)->type();
  const tile::TensorLayout l = tile::tensorLayout(t);
  for (unsigned i = 1; i < load.numOperands(); ++i)
    if (load.operand(i) == coordArgN(r.g)) {
      const Extent& e = t.shape()[i - 1];
      return !l.strided() && l.contiguousAxis() == int64_t(i - 1) && (e.isSymbolic() || e.value % 2 == 0);
    }
  return false;
}

namespace {

// Whether `load`'s tensor is [K blocks of bk][rows or columns] dense, with the axis `coord` selects
// contiguous and in blocks of one (the rows of one K block 16-byte rows of a 2-D tensor map).
bool denseScaleRows(const Request& r, const Operation& load, const Value* coord) {
  const Type& t = load.operand(0)->type();
  if (t.rank() != 2 || tile::tensorLayout(t).strided()) return false;
  const std::vector<int64_t> block = blockOf(t);
  for (unsigned i = 1; i < load.numOperands(); ++i)
    if (load.operand(i) == coord) {
      const int64_t a = int64_t(i - 1);
      return tile::tensorLayout(t).contiguousAxis() == a && block[size_t(a)] == 1 && block[size_t(1 - a)] == r.c.bk;
    }
  return false;
}

// Operands a 2-D map of scales can follow: neither batched nor grouped nor ragged, one block a SM.
bool plainScaleOperands(const Request& r) {
  const GemmProgram& g = r.g;
  return g.blockK && !r.batched() && !g.bGrouped && !g.groupIndex && !g.raggedBounds && !g.raggedK &&
         r.c.blocksPerSm <= 1;
}

int64_t columnRingEnd(const Request& r) {
  return scaleRingOffset(r) + (sharedColumnScales(r)  ? int64_t(r.c.stages) * r.c.bn * 4
                               : sharedBlockScales(r) ? int64_t(r.c.stages) * 128 * blockScaleBoxes(r)
                                                      : 0);
}

}  // namespace

bool sharedColumnScales(const Request& r) {
  const GemmProgram& g = r.g;
  const Config& c = r.c;
  if (!plainScaleOperands(r) || !g.loadScaleB || blockN(r) != 1 || !pairedColumnScales(r) || c.bn > 256 ||
      c.bn % 32 != 0)
    return false;  // (bn % 32: each stage's row of bn floats starts 128-byte aligned, as TMA writes)
  // One stored K index per K step (scale_b's block along K is bk), and its stored axes [K][N].
  const Type& t = g.loadScaleB->operand(0)->type();
  if (t.rank() != 2 || blockOf(t)[0] != c.bk) return false;
  return scaleRingOffset(r) + int64_t(c.stages) * c.bn * 4 <= r.target.maxSmemPerBlock;
}

int blockScaleBoxes(const Request& r) {
  const Config& c = r.c;
  const int64_t bN = blockN(r);
  if (bN % c.bn == 0) return 1;            // the tile's columns in one block (tiles start at multiples of bn)
  if (spansTwoBlocks(r)) return 2;         // the first column's block and the next
  return c.bn % bN == 0 ? int(c.bn / bN) : 0;  // whole blocks, the warpgroup's columns from the tile's first
}

bool sharedBlockScales(const Request& r) {
  const GemmProgram& g = r.g;
  const Config& c = r.c;
  if (!plainScaleOperands(r) || !g.loadScaleB || c.warpsN != 1) return false;
  // scale_b [K, N] in blocks of [bk, bN >= 8], stored dense with K contiguous ([N blocks][K blocks],
  // fp8_programs.h's and DeepGEMM's layout): element (nb, kb) is flat element nb * ktiles + kb.
  const Type& t = g.loadScaleB->operand(0)->type();
  if (t.rank() != 2 || tile::tensorLayout(t).strided() || blockOf(t)[0] != c.bk || blockN(r) % 8 != 0) return false;
  for (unsigned i = 1; i < g.loadScaleB->numOperands(); ++i)
    if (g.loadScaleB->operand(i) == coordArgN(g) && (i != 2 || tile::tensorLayout(t).contiguousAxis() != 0)) return false;
  const int boxes = blockScaleBoxes(r);
  if (boxes < 1 || boxes > 2) return false;
  return scaleRingOffset(r) + int64_t(c.stages) * 128 * boxes <= r.target.maxSmemPerBlock;
}

bool sharedRowScales(const Request& r) {
  const Config& c = r.c;
  // One TMA box a stage (256 elements at most); bm % 32: each stage's row of bm + 32 floats 128-byte
  // aligned, as TMA writes.
  if (!plainScaleOperands(r) || !r.g.loadScaleA || c.swapAB || stagedScaleBoxFloats(c.bm) > 256 || c.bm % 32 != 0 ||
      !denseScaleRows(r, *r.g.loadScaleA, coordArgM(r.g)))
    return false;
  return columnRingEnd(r) + int64_t(c.stages) * stagedScaleRowFloats(c.bm) * 4 <= r.target.maxSmemPerBlock;
}

int64_t scaleRingOffset(const Request& r) {
  const int64_t end = sm90Shape(r.c, r.elemBytes(), r.geo.cElemBytes).smemBytes;
  return (end + 127) / 128 * 128;
}

int64_t rowScaleRingOffset(const Request& r) { return columnRingEnd(r); }

int64_t scaleRingEnd(const Request& r) {
  return columnRingEnd(r) + (sharedRowScales(r) ? int64_t(r.c.stages) * stagedScaleRowFloats(r.c.bm) * 4 : 0);
}

int sliceScaleLoads(const Request& r) {
  // Loads from global memory: those of scales copied with the stage are not counted.
  const int rowLoads = sharedRowScales(r) ? 0 : 2 * r.geo.wgmmaBlocks;
  if (sharedColumnScales(r) || sharedBlockScales(r)) return rowLoads;  // scale_b comes from the stage
  if (spansTwoBlocks(r)) return rowLoads + 2;
  if (blockN(r) == 1) return rowLoads + 1;  // the other columns' addressed from the first's
  std::set<int64_t> cols;
  for (int a = 0; a < r.geo.accPerBlock; ++a) cols.insert(colKey(r, a / 4, a % 4));
  return rowLoads + int(cols.size());
}

SliceScales prepareSliceScales(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, const Warpgroup& w) {
  const Geometry& geo = r.geo;
  Value* v = b.rem(w.cwarp, b.i32(4));
  Value* rowBase = b.add(b.add(u.m0, w.rowA), b.add(b.mulConst(v, 16), b.div(w.lane, b.i32(4))));
  Value* colBase = b.add(b.add(u.n0, w.colB), b.mulConst(b.rem(w.lane, b.i32(4)), 2));
  SliceScales s;
  std::map<std::pair<int, int>, int> rows;  // (m64 block, half) -> its scale_a load
  std::map<int64_t, int> cols;              // column key -> its scale_b load
  const int64_t g = spansTwoBlocks(r);
  const bool two = g > 0;
  int firstCol = -1;  // per-column scales: the load of the thread's first column, and its key
  int64_t firstKey = 0;
  const bool paired = pairedColumnScales(r);
  const bool shared = sharedColumnScales(r);
  if (shared)  // the thread's first column in the stage's row of scale_b (the tile's columns)
    s.stageOff = b.named(b.op1("kern.smem_offset", {k.smem.sSB, b.i32(0), b.add(w.colB, b.mulConst(b.rem(w.lane, b.i32(4)), 2))},
                               types::i32()),
                         "sboff");
  const bool blocks = sharedBlockScales(r);
  // The stage's boxes of scale_b's blocks (the tile's first block's at row 0), and where each
  // block's stored elements start (as the producer's copies count them).
  Value* firstBlock = blocks ? b.div(u.n0, b.i32(blockN(r))) : nullptr;
  auto blockLoad = [&](int64_t box) {
    SliceScales::Load l;
    l.stage = true;
    l.row = 8 * box;
    l.blockAt = b.named(b.mul(b.addConst(firstBlock, box), k.ktiles), "sbat");
    return l;
  };
  const bool sharedRows = sharedRowScales(r);
  if (sharedRows) {  // the thread's first row of the tile's, and where the tile's start (per step)
    s.stageRowA = b.named(b.add(w.rowA, b.add(b.mulConst(v, 16), b.div(w.lane, b.i32(4)))), "sarow");
    s.rowsA = stagedScaleRows(b, k, *r.g.loadScaleA, coordArgM(r.g));
    s.firstA = u.m0;
  }
  if (two) {  // the blocks of the warpgroup's first column and the next (its loads predicated off past N)
    const int64_t bN = blockN(r);
    Value* first = b.add(u.n0, w.colB);
    Value* next = b.mulConst(b.addConst(b.div(first, b.i32(bN)), 1), bN);
    s.rel = b.named(b.intBin("arith.subi", next, first), "rel");
    cols[0] = int(geo.wgmmaBlocks) * 2;
    s.second = cols[0] + 1;
  }
  for (int i = 0; i < geo.wgmmaBlocks; ++i)
    for (int a = 0; a < geo.accPerBlock; ++a) {
      const int j = a / 4, e = a % 4, h = e >= 2 ? 1 : 0;
      auto [ra, newRow] = rows.try_emplace({i, h}, int(s.loads.size()));
      if (newRow && sharedRows) {
        SliceScales::Load l;
        l.stage = l.rowOfA = true;
        l.col = 64 * i + 8 * h;
        s.loads.push_back(l);
      } else if (newRow) {
        s.loads.push_back(prepareLoad(b, r, k, u, *r.g.loadScaleA, b.addConst(rowBase, 64 * i + 8 * h), nullptr));
      }
      if (two) {
        s.factorOf.push_back({ra->second, cols[0]});
        s.group.push_back(int(8 * j / g * g));
        continue;
      }
      const int64_t key = colKey(r, j, e);
      auto [cb, newCol] = cols.try_emplace(key, int(s.loads.size()));
      if (newCol && blocks) {  // the tile's block `key` (warps_n = 1: the warpgroup's columns are the tile's)
        s.loads.push_back(blockLoad(key));
      } else if (newCol && shared) {
        SliceScales::Load l;
        l.stage = true;
        l.col = key;
        s.loads.push_back(l);
      } else if (newCol && paired && (e & 1)) {  // the second column of the pair its n8 group's first starts
        const int first = cols.at(key - 1);
        s.loads[size_t(first)].pair = true;
        SliceScales::Load l;
        l.secondOf = first;
        s.loads.push_back(l);
      } else if (newCol && firstCol >= 0 && s.loads[size_t(firstCol)].colStride) {  // per column: from the first's
        SliceScales::Load l = s.loads[size_t(firstCol)];
        l.base = firstCol;
        l.delta = key - firstKey;
        s.loads.push_back(l);
      } else if (newCol) {
        s.loads.push_back(prepareLoad(b, r, k, u, *r.g.loadScaleB, nullptr, b.addConst(colBase, 8 * j + (e & 1))));
        if (blockN(r) == 1 && firstCol < 0) {
          firstCol = cb->second;
          firstKey = key;
        }
      }
      s.factorOf.push_back({ra->second, cb->second});
    }
  if (two && blocks) {  // the boxes of the tile's first column's block and the next
    for (int64_t box : {0, 1}) s.loads.push_back(blockLoad(box));
  } else if (two) {
    Value* first = b.add(u.n0, w.colB);
    s.loads.push_back(prepareLoad(b, r, k, u, *r.g.loadScaleB, nullptr, first));
    s.loads.push_back(prepareLoad(b, r, k, u, *r.g.loadScaleB, nullptr, b.add(first, s.rel)));
  }
  return s;
}

std::vector<Value*> buildSliceScales(KernBuilder& b, const SliceScales& s, Value* kstep, const Kernel& k,
                                     Value* stage, Value* kLimit) {
  std::vector<Value*> loaded, ptrs;
  // split_k: the last slice's steps past K (their boxes zero-filled by TMA) read no scale either.
  Value* inK = kLimit ? b.cmp("slt", kstep, kLimit) : nullptr;
  std::map<int64_t, Value*> kidx;  // K steps per stored element -> the step's stored K index (i64)
  std::map<int, Value*> seconds;  // a pair's load -> its second column's value
  Value* offA = nullptr;  // the thread's first row in the step's box of scale_a's stored row
  auto stagedOffsetA = [&] {
    Value* lead = b.andi(stagedScaleElement(b, kstep, s.rowsA, s.firstA), b.i32(3));
    return b.op1("kern.smem_offset", {k.smem.sSA, b.i32(0), b.add(s.stageRowA, lead)}, types::i32());
  };
  for (size_t i = 0; i < s.loads.size(); ++i) {
    const SliceScales::Load& l = s.loads[i];
    if (l.stage) {  // the stage's row of scale_a / scale_b (sm90-promote-fp8 reads it once the step's sums are waited for)
      Value* off = s.stageOff;
      if (l.rowOfA) off = offA ? offA : offA = stagedOffsetA();
      if (l.blockAt)  // the step's element of the block's 16-byte box
        off = b.op1("kern.smem_offset", {k.smem.sSB, b.i32(0), b.andi(b.add(l.blockAt, kstep), b.i32(3))}, types::i32());
      loaded.push_back(b.op1("kern.ld_shared", {l.rowOfA ? k.smem.sSA : k.smem.sSB, stage, off}, types::f32(),
                             {{"row", l.row}, {"col", l.col}}));
      ptrs.push_back(nullptr);
      continue;
    }
    if (l.secondOf >= 0) {
      loaded.push_back(seconds.at(l.secondOf));
      ptrs.push_back(nullptr);
      continue;
    }
    Value *p = nullptr, *ok = l.ok;
    if (l.base >= 0) {  // a column `delta` past load base's
      p = b.ptrAdd(ptrs[size_t(l.base)], b.intBin("arith.muli", b.i64(l.delta), l.colStride));
      ok = b.andi(ok, b.cmp("slt", b.i32(l.delta), l.colLeft));
    } else {
      Value*& ki = kidx[l.kPerStep];
      if (!ki) ki = b.cast(l.kPerStep == 1 ? kstep : b.div(kstep, b.i32(l.kPerStep)), types::i64());
      p = b.ptrAdd(l.ptr, b.intBin("arith.muli", ki, l.kStride));
    }
    if (inK) ok = b.andi(ok, inK);
    ptrs.push_back(p);
    if (l.pair) {
      Operation* two = b.create("kern.ld_global", {p, ok}, {types::f32(), types::f32()}, {{"other", 0.0}});
      loaded.push_back(two->result(0));
      seconds[int(i)] = two->result(1);
    } else {
      loaded.push_back(b.op1("kern.ld_global", {p, ok}, types::f32(), {{"other", 0.0}}));
    }
  }
  std::map<std::pair<int, int>, Value*> factor;
  auto product = [&](int a, int c) {
    Value*& f = factor[{a, c}];
    if (!f) f = b.named(b.fbin("arith.mulf", loaded[size_t(a)], loaded[size_t(c)]), "sf");
    return f;
  };
  std::map<std::pair<int, int>, Value*> picked;  // (scale_a load, column chunk) -> its factor
  std::vector<Value*> out;
  for (size_t i = 0; i < s.factorOf.size(); ++i) {
    auto [a, c] = s.factorOf[i];
    if (s.second < 0) {
      out.push_back(product(a, c));
      continue;
    }
    Value*& f = picked[{a, s.group[i]}];
    if (!f) {
      Value* inSecond = b.cmp("sle", s.rel, b.i32(s.group[i]));
      f = b.named(b.op1("arith.select", {inSecond, product(a, s.second), product(a, c)}, types::f32()), "sf");
    }
    out.push_back(f);
  }
  return out;
}

}  // namespace kiln::sm90
