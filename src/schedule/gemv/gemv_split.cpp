// gemv's split-K (split_k=S; docs/gemv-strategy.md, "Split-K"): a block tile's K in S slices on S
// blocks, their f32 sums handed over through the runtime's workspace (kern_ops.h, "Split-K") and
// summed, in slice order, by whichever block of the tile finishes last. No block waits for another
// (the last to arrive finds every slice's sums there), so the non-persistent grid cannot deadlock
// whatever order the GPU runs its blocks in, and the sum does not depend on that order.
//
//   x = unit * S + s, unit = (batch * mTiles + mb) * nTiles + nb      (sliceOf)
//   K slice s: [s * chunk, min(K, (s + 1) * chunk)), chunk = ceil(ceil(K / step) / S) * step
//   ... the block's slice sums in sums[m][n] (gemv_loops.cpp, without the program's initial value)
//   ws_partials[(unit * S + s) * bm * bn + i] = sums[i]                      (i dealt over threads)
//   barrier; before = atom.acq_rel.gpu.add(ws_flags[unit], 1) by thread 0    (finishSplit)
//   last = (before == S - 1), made block-uniform through shared memory
//   scf.if (last) { sums[i] = init + sum over s' in order of ws_partials[(unit * S + s') ...][i];
//                   ws_flags[unit] = 0 (the next launch's count); barrier; the epilogue }
#include "schedule/gemv/gemv_split.h"

namespace kiln::gemv {
using namespace ir;

namespace {

// The thread's outputs of the block, idx = tid + first for first = 0, T, 2T, ... below bm * bn; in
// the last round the threads past the end repeat the last output (the same value to the same place).
template <typename F>
void forEachOutput(sm80::Context& cx, const Geometry& geo, F f) {
  KernBuilder& b = cx.b;
  const int outputs = geo.bm * geo.bn;
  for (int first = 0; first < outputs; first += geo.T) {
    Value* idx = b.addConst(cx.tid, first);
    if (first + geo.T > outputs) idx = b.min(idx, b.i32(outputs - 1));
    f(idx, b.div(idx, b.i32(geo.bn)), b.rem(idx, b.i32(geo.bn)));
  }
}

Value* ldSum(KernBuilder& b, Value* sums, Value* row, Value* col) {
  Value* off = b.op1("kern.smem_offset", {sums, row, col}, types::i32());
  return b.op1("kern.ld_shared", {sums, b.i32(0), off}, types::f32(), {{"row", int64_t(0)}, {"col", int64_t(0)}});
}

void stSum(KernBuilder& b, Value* sums, Value* row, Value* col, Value* v) {
  Value* off = b.op1("kern.smem_offset", {sums, row, col}, types::i32());
  b.create("kern.st_shared", {sums, b.i32(0), off, v}, {}, {{"row", int64_t(0)}, {"col", int64_t(0)}});
}

// Slot `split` of the unit's partials, output idx (f32 elements).
Value* partial(sm80::Context& cx, const Geometry& geo, const Split& sp, Value* split, Value* idx) {
  KernBuilder& b = cx.b;
  Value* slot = b.add(b.mulConst(sp.unit, sp.splits), split);
  Value* at = b.add(b.mulConst(b.cast(slot, types::i64()), int64_t(geo.bm) * geo.bn), b.cast(idx, types::i64()));
  return b.ptrAdd(cx.wsPartials, at);
}

// Whether this block's add made the unit's count S: thread 0's count before its add, as f32, summed
// over each warp (only lane 0 of warp 0 is nonzero), one slot per warp in `votes`, and warp 0's read
// back by every thread after a barrier.
Value* arrivesLast(sm80::Context& cx, const Split& sp, Value* flag, Value* votes) {
  KernBuilder& b = cx.b;
  Value* first = b.cmp("eq", cx.tid, b.i32(0));
  Value* before = b.op1("kern.atom_add", {flag, b.i32(1), first}, types::i32());
  Value* v = b.cast(before, types::f32());
  for (int off = 1; off < 32; off *= 2)
    v = b.fbin("arith.addf", v, b.op1("kern.shfl_xor", {v}, types::f32(), {{"offset", int64_t(off)}}));
  Value* zero = b.i32(0);
  stSum(b, votes, zero, cx.warp, v);
  b.create("kern.barrier", {}, {});
  return b.op1("arith.cmpf", {ldSum(b, votes, zero, zero), b.f32(double(sp.splits - 1))}, types::i1(),
               {{"pred", "eq"}});
}

}  // namespace

KRange sliceOf(sm80::Context& cx, const Geometry& geo, Split& sp) {
  KernBuilder& b = cx.b;
  Value* bx = b.op1("kern.block_id", {}, types::i32(), {{"dim", "x"}});
  sp.split = b.named(b.rem(bx, b.i32(sp.splits)), "split");
  sp.unit = b.named(b.div(bx, b.i32(sp.splits)), "unit");
  auto tiles = [&](Value* dim, int tile) { return b.div(b.addConst(dim, tile - 1), b.i32(tile)); };
  Value* nTiles = tiles(cx.dimN, geo.bn);
  Value* rest = b.div(sp.unit, nTiles);
  cx.n0 = b.named(b.mulConst(b.rem(sp.unit, nTiles), geo.bn), "n0");
  if (cx.g.batchArg) {
    Value* mTiles = tiles(cx.dimM, geo.bm);
    cx.m0 = b.named(b.mulConst(b.rem(rest, mTiles), geo.bm), "m0");
    cx.batch = b.named(b.div(rest, mTiles), "batch");
  } else {
    cx.m0 = b.named(b.mulConst(rest, geo.bm), "m0");
  }
  const int step = kStep(geo);
  Value* steps = tiles(cx.dimK, step);
  Value* chunk = b.mulConst(b.div(b.addConst(steps, sp.splits - 1), b.i32(sp.splits)), step);
  KRange kr;
  kr.begin = b.named(b.mul(sp.split, chunk), "kbegin");
  kr.end = b.named(b.min(b.add(kr.begin, chunk), cx.dimK), "kend");
  kr.addInit = false;
  return kr;
}

bool finishSplit(sm80::Context& cx, const Geometry& geo, const Split& sp, Value* sums, Value* votes,
                 const std::function<bool()>& epilogue) {
  KernBuilder& b = cx.b;
  Value* on = b.i1(true);
  forEachOutput(cx, geo, [&](Value* idx, Value* row, Value* col) {
    b.create("kern.st_global", {partial(cx, geo, sp, sp.split, idx), on, ldSum(b, sums, row, col)}, {});
  });
  // The barrier orders every thread's partial stores before thread 0's release (kern.atom_add).
  b.create("kern.barrier", {}, {});
  Value* flag = b.named(b.ptrAdd(cx.wsFlags, b.cast(sp.unit, types::i64())), "flag");
  Value* last = b.named(arrivesLast(cx, sp, flag, votes), "last");
  bool ok = true;
  b.ifThen(last, [&] {
    forEachOutput(cx, geo, [&](Value* idx, Value* row, Value* col) {
      Value* total = b.f32(cx.g.accInit);
      for (int s = 0; s < sp.splits; ++s)
        total = b.fbin("arith.addf", total,
                       b.op1("kern.ld_global", {partial(cx, geo, sp, b.i32(s), idx), on}, types::f32()));
      stSum(b, sums, row, col, total);
    });
    b.create("kern.st_global", {flag, b.cmp("eq", cx.tid, b.i32(0)), b.i32(0)}, {});
    b.create("kern.barrier", {}, {});
    ok = epilogue();
  });
  return ok;
}

}  // namespace kiln::gemv
