// The sm80 main loop: a ring of `stages` shared-memory buffers filled by cp.async, read by
// ldmatrix, consumed by mma.sync m16n8k16 (bf16/f16) or m16n8k32 (FP8) (PTX ISA: "cp.async",
// "cp.async.wait_group", "ldmatrix", "mma"; fragment layouts in fragment_layout.h, swizzles in
// swizzle.h). Both MMA shapes take 32 bytes of K per step, so in bytes the two paths are the same
// loop: only the element counts, the lane quads and the instruction differ.
//
// The software pipeline, as kern IR. The barrier that ends K tile kt sits before its last k step,
// not at the top of the next iteration, and the fragments of tile kt+1's first k step are loaded
// right after it and carried across the loop edge as loop arguments (warp-level double buffering
// across the K-tile boundary, like CUTLASS's multistage mainloop). So the MMAs after the barrier
// have their operands in registers, and an iteration starts with MMAs instead of a barrier, the
// copy issue and ldmatrix latency. Inside an iteration, the ldmatrix of step kk + 1 is issued before
// the MMAs of step kk. Config::fragPrefetch says which first-step fragments are carried: A's (the
// default), A's and B's, or none; those not carried are loaded at the top of the iteration, before
// the copy (ptxas does not move a shared-memory read above a cp.async).
//
//   for s in 0 .. stages-2:  copy K tile s into slot s; commit          (prologue)
//   cp.async.wait_group(stages - 2); barrier                              -- tile 0 landed
//   F = ldmatrix step 0 of slot 0 (the carried part)
//   for kt in 0 .. ceil(K / bk) - 1  (carrying acc, F, read slot rs = kt % stages,
//                                     write slot ws = (kt - 1) % stages):
//     F += ldmatrix step 0 of slot rs (the part not carried)
//     copy K tile kt + stages - 1 into slot ws; commit
//     for kk in 0 .. nk-1:                                                 (nk = bk / k step)
//       if kk == nk-1: cp.async.wait_group(stages - 2); barrier            -- B(kt)
//       G = ldmatrix step kk + 1 of slot rs, or when kk == nk-1 the carried part of step 0 of
//           slot rs + 1
//       mma.sync on F; F = G
//     rs, ws = (rs + 1) % stages, rs
//   cp.async.wait_group(0)
//
// Why this is race-free (one barrier per K tile, as before). Per warp, in program order, iteration
// kt is: the uncarried step-0 loads from slot kt % stages, C(kt) the copy of tile kt+stages-1 into
// slot (kt-1) % stages, the ldmatrix reads of steps 1 .. nk-1 from slot kt % stages, B(kt), and
// the carried step-0 loads from slot (kt+1) % stages.
//   * Write after read. Slot kt % stages is read by every warp in its step-0 loads (right after
//     B(kt-1) or at the top of iteration kt; in the prologue for kt = 0) and in steps 1 .. nk-1 of
//     iteration kt, all after B(kt-1) and before that warp reaches B(kt). Its next write is C(kt+1), tile kt+stages, after B(kt) in the writer's
//     program order. So no warp overwrites a slot another may still read. C(0) writes slot
//     stages-1, which nothing has read.
//   * Read after write. Group g holds tile g (the prologue commits groups 0 .. stages-2, C(j)
//     commits group j+stages-1). At B(kt) a thread has committed stages+kt groups, and
//     wait_group(stages-2) retires all but the newest stages-2: tiles 0 .. kt+1 have landed for
//     this thread, and after the barrier for everyone; the first read of tile kt+1 is the step-0
//     ldmatrix after B(kt). The prologue's wait + barrier does the same for tile 0.
//   * The last iteration's step-0 load reads slot K-tiles % stages, which holds a zero-filled
//     tile past K (retired at B(kt) like any other): inside shared memory, and its registers are
//     carried out of the loop unused. With no K tile at all, the prologue's load is unused too.
//   Compared with the previous loop (wait + barrier at the top of each iteration), the wait moved
//   one k step earlier, so a tile has one k step less to land: the CUTLASS trade.
//
// Where the copy goes. At the top of the iteration, as one block: ptxas interleaves its address
// arithmetic and LDGSTS with the step-0 MMAs, whose fragments are already in registers. CUTLASS
// spreads the copy over the k steps, after each step's ldmatrix; here that keeps step 1's
// fragments live across the copy's address arithmetic, and the 128x128 bk=64 variants then spill
// (255 registers plus 12-40 bytes of spill on sm_80/sm_90a/sm_120, CUDA 13.0), so it is not done.
//
// Tiles past K, rows past M and columns past N are copied with src_bytes = 0: cp.async writes
// zeros and reads nothing, so ragged edges contribute 0 to the dot product. The source address of
// a masked copy is clamped to the tensor's base so no out-of-range address is ever formed.
#include "target/fragment_layout.h"
#include "schedule/sm80_context.h"

namespace kiln::sm80 {
using namespace ir;

namespace {

// How one operand tile is copied: which thread copies which 16-byte chunks, from where.
struct CopyPlan {
  Value* buf = nullptr;
  kern::SmemLayout layout;
  Value* base = nullptr;          // the tensor's pointer parameter
  bool kAlongRows = false;        // row-major B: stage rows are K, columns are N
  int64_t rowsPerPass = 0;        // stage rows covered by one pass of all threads
  std::vector<Value*> offsets;    // per pass: the smem offset op to use
  std::vector<int64_t> dispRows;  // per pass: its row displacement
  std::vector<Value*> ptrs;       // per pass: source pointer at K tile 0
  std::vector<Value*> valid;      // per pass: the non-K coordinate is in bounds (i1)
  Value* colT = nullptr;          // the thread's first column in the stage (elements)
  Value* rowT = nullptr;          // the thread's first row in the stage
  Value* rowStride64 = nullptr;   // elements between consecutive global rows (i64)
};

CopyPlan planCopies(Context& cx, Value* buf, Value* base, bool kAlongRows, Value* outer0, Value* outerDim,
                    Value* rowStride, const Location& loc) {
  KernBuilder& b = cx.b;
  b.setLoc(loc);
  CopyPlan p;
  p.buf = buf;
  p.layout = *kern::smemLayout(buf->type());
  p.base = base;
  p.kAlongRows = kAlongRows;
  int64_t cpr = p.layout.rowBytes() / 16;  // chunks per stage row
  int64_t perChunk = 16 / p.layout.elemBytes();
  int threads = cx.cfg.threads();
  p.rowsPerPass = threads / cpr;
  int64_t passes = p.layout.rows / p.rowsPerPass;
  p.rowT = b.named(b.div(cx.tid, b.i32(cpr)), "crow");
  p.colT = b.named(b.mulConst(b.rem(cx.tid, b.i32(cpr)), perChunk), "ccol");
  p.rowStride64 = b.cast(rowStride, types::i64());
  int64_t period = std::max<int64_t>(1, p.layout.swizzle.periodBytes() / p.layout.rowBytes());
  std::map<int64_t, Value*> byResidue;
  for (int64_t pass = 0; pass < passes; ++pass) {
    int64_t dr = pass * p.rowsPerPass;
    int64_t res = dr % period;
    if (!byResidue.count(res))
      byResidue[res] = b.named(b.op1("kern.smem_offset", {buf, b.addConst(p.rowT, res), p.colT}, types::i32()), "coff");
    p.offsets.push_back(byResidue[res]);
    p.dispRows.push_back(dr - res);
    Value* row = b.addConst(p.rowT, dr);
    if (kAlongRows) {
      // Stage row = k (added per K tile), column = n: element (k, n0 + col) at k * N + n0 + col.
      Value* col = b.add(outer0, p.colT);
      p.valid.push_back(b.cmp("slt", col, outerDim));
      Value* off = b.add(b.mul(b.cast(row, types::i64()), p.rowStride64), b.cast(col, types::i64()));
      p.ptrs.push_back(b.ptrAdd(base, off));
    } else {
      // Stage row = m (or n for K-major B), column = k: element (outer0 + row, k) at (outer0 + row) * K + k.
      Value* outer = b.add(outer0, row);
      p.valid.push_back(b.cmp("slt", outer, outerDim));
      Value* off = b.add(b.mul(b.cast(outer, types::i64()), p.rowStride64), b.cast(p.colT, types::i64()));
      p.ptrs.push_back(b.ptrAdd(base, off));
    }
  }
  return p;
}

// Issues the copies of K tile `kt` (i32) into `slot`.
void copyTile(Context& cx, const CopyPlan& p, Value* kt, Value* slot) {
  KernBuilder& b = cx.b;
  Value* k0 = b.mulConst(kt, cx.cfg.bk);
  Value* zero = b.i32(0);
  Value* sixteen = b.i32(16);
  // Row-major B: the K tile moves down the rows; A and K-major B: along the row.
  Value* kOff = p.kAlongRows ? b.mul(b.cast(k0, types::i64()), p.rowStride64) : b.cast(k0, types::i64());
  Value* kColOk = p.kAlongRows ? nullptr : b.cmp("slt", b.add(k0, p.colT), cx.dimK);
  for (size_t pass = 0; pass < p.ptrs.size(); ++pass) {
    Value* ok;
    if (p.kAlongRows) {
      Value* krow = b.addConst(b.add(k0, p.rowT), int64_t(pass) * p.rowsPerPass);
      ok = b.andi(p.valid[pass], b.cmp("slt", krow, cx.dimK));
    } else {
      ok = b.andi(p.valid[pass], kColOk);
    }
    Value* src = b.select(ok, b.ptrAdd(p.ptrs[pass], kOff), p.base);
    Value* bytes = b.select(ok, sixteen, zero);
    b.create("kern.cp_async", {p.buf, slot, p.offsets[pass], src, bytes}, {},
             {{"row", p.dispRows[pass]}, {"col", int64_t{0}}, {"bytes", int64_t{16}}});
  }
}

// The A and B fragments of one k step: mTiles x 4 A registers, then nTiles x 2 B registers.
struct Fragments {
  std::vector<Value*> a, b;
};

// (rs + 1) mod stages without a division.
Value* nextSlot(KernBuilder& b, Value* s, int stages) {
  Value* n = b.addConst(s, 1);
  return b.select(b.cmp("eq", n, b.i32(stages)), b.i32(0), n);
}

}  // namespace

std::vector<Value*> buildMainloop(Context& cx) {
  KernBuilder& b = cx.b;
  const Config& c = cx.cfg;
  const GemmProgram& g = cx.g;
  ScalarType e = g.abType, eB = g.bType;
  int eb = bitWidth(e) / 8, ebB = bitWidth(eB) / 8;
  // K elements per MMA (32 bytes), and the lane quads of the fragments (fragment_layout.h).
  int kStep = g.fp8 ? 32 : 16;
  const mma16816::Quads& quadsA = g.fp8 ? mma16832::kQuadsA : mma16816::kQuadsA;
  const mma16816::Quads& quadsBKMajor = g.fp8 ? mma16832::kQuadsBKMajor : mma16816::kQuadsBKMajor;

  // Shared memory: the A ring, then the B ring.
  Swizzle swA = Swizzle::forRowBytes(int64_t(c.bk) * eb);
  Type tA = kern::smemType(e, c.stages, c.bm, c.bk, swA);
  int64_t rowsB = g.bKMajor ? c.bn : c.bk, colsB = g.bKMajor ? c.bk : c.bn;
  Swizzle swB = Swizzle::forRowBytes(colsB * ebB);
  Type tB = kern::smemType(eB, c.stages, rowsB, colsB, swB);
  int64_t bytesA = kern::smemLayout(tA)->totalBytes();
  b.setLoc(g.loadA->loc());
  Value* sA = b.named(b.op1("kern.smem_alloc", {}, tA, {{"offset", int64_t{0}}}), "sA");
  b.setLoc(g.loadB->loc());
  Value* sB = b.named(b.op1("kern.smem_alloc", {}, tB, {{"offset", bytesA}}), "sB");

  b.setLoc(g.loadA->loc());
  CopyPlan copyA = planCopies(cx, sA, cx.matrixBase(g.loadA->operand(0)), false, cx.m0, cx.dimM, cx.dimK,
                              g.loadA->loc());
  b.setLoc(g.loadB->loc());
  Value* baseB = cx.matrixBase(g.loadB->operand(0));
  CopyPlan copyB = g.bKMajor ? planCopies(cx, sB, baseB, false, cx.n0, cx.dimN, cx.dimK, g.loadB->loc())
                             : planCopies(cx, sB, baseB, true, cx.n0, cx.dimN, cx.dimN, g.loadB->loc());
  // A group id outside [0, G) reads no B at all: its copies are zero-filled.
  if (cx.groupOk)
    for (Value*& v : copyB.valid) v = b.andi(v, cx.groupOk);

  // ldmatrix lane offsets, computed once.
  b.setLoc(g.dot->loc());
  Value* zero = b.i32(0);
  int64_t wm = cx.warpTileM(), wn = cx.warpTileN();
  auto ldsmOffset = [&](Value* buf, Value* wr, Value* wc, const mma16816::Quads& q, int64_t sr, int64_t sc,
                        int64_t br, const char* hint) {
    std::vector<int64_t> quads(q.begin(), q.end());
    return b.named(b.op1("kern.ldsm_offset", {buf, wr, wc}, types::i32(),
                         {{"quads", Attribute::ints(quads)}, {"stride", Attribute::ints({sr, sc})},
                          {"base", Attribute::ints({br, 0})}}),
                   hint);
  };
  Value* offA = ldsmOffset(sA, cx.warpM, zero, quadsA, wm, 0, 0, "aoff");
  Value *offB = nullptr, *offB8 = nullptr;
  int64_t periodB = std::max<int64_t>(1, swB.periodBytes() / (colsB * ebB));
  if (g.bKMajor) {
    offB = ldsmOffset(sB, cx.warpN, zero, quadsBKMajor, wn, 0, 0, "boff");
    if (periodB > 8) offB8 = ldsmOffset(sB, cx.warpN, zero, quadsBKMajor, wn, 0, 8, "boff8");
  } else {
    offB = ldsmOffset(sB, zero, cx.warpN, mma16816::kQuadsBRowMajor, 0, wn, 0, "boff");
  }

  // Prologue: stages - 1 tiles in flight.
  for (int s = 0; s + 1 < c.stages; ++s) {
    b.setLoc(g.loadA->loc());
    copyTile(cx, copyA, b.i32(s), b.i32(s));
    b.setLoc(g.loadB->loc());
    copyTile(cx, copyB, b.i32(s), b.i32(s));
    b.create("kern.cp_async_commit", {}, {});
  }

  // Fragment loads and MMAs of one k step.
  Type frag = kern::fragType(e), fragB = kern::fragType(eB);
  int nk = c.bk / kStep;
  auto loadFragments = [&](Value* slot, int kk, bool withA = true, bool withB = true) {
    Fragments f;
    b.setLoc(g.loadA->loc());
    for (int i = 0; i < (withA ? cx.mTiles() : 0); ++i) {
      Operation* ld = b.create("kern.ldmatrix", {sA, slot, offA}, {frag, frag, frag, frag},
                               {{"num", int64_t{4}}, {"trans", false}, {"row", int64_t(16 * i)},
                                {"col", int64_t(kStep * kk)}});
      for (auto& r : ld->results()) f.a.push_back(b.named(r.get(), "a"));
    }
    b.setLoc(g.loadB->loc());
    for (int j = 0; j < (withB ? cx.nTiles() : 0); ++j) {
      Value* off = offB;
      int64_t row = kStep * kk, col = 8 * j;
      if (g.bKMajor) {
        row = 8 * j;
        col = kStep * kk;
        if (row % periodB != 0) {
          off = offB8;
          row -= 8;
        }
      }
      Operation* ld = b.create("kern.ldmatrix", {sB, slot, off}, {fragB, fragB},
                               {{"num", int64_t{2}}, {"trans", !g.bKMajor}, {"row", row}, {"col", col}});
      for (auto& r : ld->results()) f.b.push_back(b.named(r.get(), "b"));
    }
    return f;
  };
  auto mmaStep = [&](const Fragments& f, std::vector<Value*>& acc) {
    b.setLoc(g.dot->loc());
    for (int i = 0; i < cx.mTiles(); ++i)
      for (int j = 0; j < cx.nTiles(); ++j) {
        std::vector<Value*> ops(f.a.begin() + 4 * i, f.a.begin() + 4 * i + 4);
        ops.insert(ops.end(), f.b.begin() + 2 * j, f.b.begin() + 2 * j + 2);
        for (int q = 0; q < 4; ++q) ops.push_back(acc[cx.accIndex(i, j, q)]);
        Operation* mma = b.create("kern.mma_sync", ops, {types::f32(), types::f32(), types::f32(), types::f32()},
                                  {{"shape", g.fp8 ? "m16n8k32" : "m16n8k16"}});
        for (int q = 0; q < 4; ++q) acc[cx.accIndex(i, j, q)] = b.named(mma->result(q), "d");
      }
  };

  bool carryA = c.fragPrefetch == FragPrefetch::A;  // B's step-0 fragments are never carried
  // Tile 0 has landed for everyone; the carried part of its first k step goes into registers
  // before the loop.
  b.setLoc(g.reduce->loc());
  b.create("kern.cp_async_wait", {}, {}, {{"pending", int64_t(c.stages - 2)}});
  b.create("kern.barrier", {}, {});
  Fragments first = loadFragments(b.i32(0), 0, carryA, false);

  // The K loop, carrying the accumulators, the fragments of the current tile's first k step, the
  // read slot and the write slot.
  b.setLoc(g.reduce->loc());
  Value* numK = b.named(b.div(b.addConst(cx.dimK, c.bk - 1), b.i32(c.bk)), "ktiles");
  std::vector<Value*> inits;
  Value* accInit = b.f32(g.accInit);
  for (int i = 0; i < cx.numAcc(); ++i) inits.push_back(accInit);
  inits.insert(inits.end(), first.a.begin(), first.a.end());
  inits.insert(inits.end(), first.b.begin(), first.b.end());
  inits.push_back(b.i32(0));             // read slot
  inits.push_back(b.i32(c.stages - 1));  // write slot
  std::vector<Value*> forOperands = {b.i32(0), numK, b.i32(1)};
  forOperands.insert(forOperands.end(), inits.begin(), inits.end());
  std::vector<Type> resultTypes;
  for (Value* v : inits) resultTypes.push_back(v->type());
  Operation* loop = b.create("scf.for", forOperands, resultTypes, {}, 1);
  Block* body = loop->region(0).addBlock();
  Value* kt = body->addArgument(types::i32(), "kt");
  std::vector<Value*> acc;
  for (int i = 0; i < cx.numAcc(); ++i) acc.push_back(body->addArgument(types::f32(), "acc"));
  Fragments cur;
  for (size_t i = 0; i < first.a.size(); ++i) cur.a.push_back(body->addArgument(frag, "a_cur"));
  for (size_t i = 0; i < first.b.size(); ++i) cur.b.push_back(body->addArgument(fragB, "b_cur"));
  Value* rs = body->addArgument(types::i32(), "rs");
  Value* ws = body->addArgument(types::i32(), "ws");

  {
    InsertionGuard guard(b);
    b.setInsertionPointToEnd(body);
    // The uncarried step-0 fragments, before the copy (slot rs: tile kt, landed at B(kt-1)).
    if (!carryA) cur.a = loadFragments(rs, 0, true, false).a;
    cur.b = loadFragments(rs, 0, false, true).b;
    // Slot ws = (kt - 1) mod stages was last read before the previous iteration's barrier.
    // (At the top, as one block: see "Where the copy goes" above.)
    Value* next = b.addConst(kt, c.stages - 1);
    b.setLoc(g.loadA->loc());
    copyTile(cx, copyA, next, ws);
    b.setLoc(g.loadB->loc());
    copyTile(cx, copyB, next, ws);
    b.create("kern.cp_async_commit", {}, {});
    b.setLoc(g.reduce->loc());
    Value* rsNext = b.named(nextSlot(b, rs, c.stages), "rs_next");

    for (int kk = 0; kk < nk; ++kk) {
      Value* slot = rs;
      if (kk == nk - 1) {
        // Tile kt + 1 has landed for everyone, and every warp is done reading slot rs but for the
        // fragments already in registers.
        b.setLoc(g.reduce->loc());
        b.create("kern.cp_async_wait", {}, {}, {{"pending", int64_t(c.stages - 2)}});
        b.create("kern.barrier", {}, {});
        slot = rsNext;
      }
      Fragments following = loadFragments(slot, (kk + 1) % nk, kk < nk - 1 || carryA, kk < nk - 1);
      mmaStep(cur, acc);
      cur = std::move(following);
    }
    b.setLoc(g.reduce->loc());
    std::vector<Value*> yields = acc;
    yields.insert(yields.end(), cur.a.begin(), cur.a.end());
    yields.insert(yields.end(), cur.b.begin(), cur.b.end());
    yields.push_back(rsNext);
    yields.push_back(rs);  // (ws + 1) mod stages: the slot read in this iteration
    b.create("scf.yield", yields, {});
  }
  b.create("kern.cp_async_wait", {}, {}, {{"pending", int64_t{0}}});
  std::vector<Value*> out;
  for (int i = 0; i < cx.numAcc(); ++i) out.push_back(b.named(loop->result(i), "acc"));
  return out;
}

}  // namespace kiln::sm80
