// The sm80 main loop: a ring of `stages` shared-memory buffers filled from global memory
// (sm80_copies.h: cp.async, or element loads through registers), read by ldmatrix, consumed by
// mma.sync m16n8k16 (bf16/f16) or m16n8k32 (FP8) (PTX ISA: "cp.async", "cp.async.wait_group",
// "ldmatrix", "mma"; fragment layouts in fragment_layout.h, swizzles in swizzle.h). Both MMA shapes
// take 32 bytes of K per step, so in bytes the two paths are the same loop: only the element
// counts, the lane quads and the instruction differ.
//
// Operand layouts. A row-major A is staged as it is stored, [m][k] tiles, and loaded without
// .trans; a column-major A is staged [k][m] and loaded with .trans (fragment_layout.h), exactly as
// a row-major B is. A K-major B is staged [n][k] and loaded without .trans. Each operand is read
// through its leading dimension (a dense tensor's row length, a strided one's stride).
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
//       if kk == nk-1: [st.shared of the copy's registers into ws]
//                      cp.async.wait_group(stages - 2); barrier            -- B(kt)
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
//     iteration kt, all after B(kt-1) and before that warp reaches B(kt). Its next write is C(kt+1),
//     tile kt+stages, after B(kt) in the writer's program order. So no warp overwrites a slot another
//     may still read. C(0) writes slot stages-1, which nothing has read. The register path's
//     st.shared of C(kt) sits before B(kt), after B(kt-1): the same window as its cp.async.
//   * Read after write. Group g holds tile g (the prologue commits groups 0 .. stages-2, C(j)
//     commits group j+stages-1). At B(kt) a thread has committed stages+kt groups, and
//     wait_group(stages-2) retires all but the newest stages-2: tiles 0 .. kt+1 have landed for
//     this thread, and after the barrier for everyone; the first read of tile kt+1 is the step-0
//     ldmatrix after B(kt). The register path stores tile kt+stages-1 before B(kt), complete when
//     stored; its first read is after B(kt+stages-2). The prologue's wait + barrier does the same
//     for tile 0.
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
// Tiles past K, rows past M and columns past N are zero in shared memory (sm80_copies.h), so
// ragged edges contribute 0 to the dot product, and no copy reads outside the tensor.
#include "target/fragment_layout.h"
#include "schedule/sm80_copies.h"

namespace kiln::sm80 {
using namespace ir;

namespace {

// The A and B fragments of one k step: mTiles x 4 A registers, then nTiles x 2 B registers.
struct Fragments {
  std::vector<Value*> a, b;
};

// (rs + 1) mod stages without a division.
Value* nextSlot(KernBuilder& b, Value* s, int stages) {
  Value* n = b.addConst(s, 1);
  return b.select(b.cmp("eq", n, b.i32(stages)), b.i32(0), n);
}

class Mainloop {
 public:
  explicit Mainloop(Context& cx)
      : cx_(cx), b_(cx.b), c_(cx.cfg), g_(cx.g), e_(g_.abType), eB_(g_.bType), eb_(bitWidth(e_) / 8),
        ebB_(bitWidth(eB_) / 8), kStep_(g_.fp8 ? 32 : 16) {}

  std::vector<Value*> build() {
    allocate();
    planOperandCopies();
    laneOffsets();
    prologue();
    return loop();
  }

 private:
  // Shared memory: the A ring, then the B ring.
  void allocate() {
    int64_t rowsA = g_.aColMajor ? c_.bk : c_.bm, colsA = g_.aColMajor ? c_.bm : c_.bk;
    swA_ = Swizzle::forRowBytes(colsA * eb_);
    Type tA = kern::smemType(e_, c_.stages, rowsA, colsA, swA_);
    int64_t rowsB = g_.bKMajor ? c_.bn : c_.bk, colsB = g_.bKMajor ? c_.bk : c_.bn;
    swB_ = Swizzle::forRowBytes(colsB * ebB_);
    Type tB = kern::smemType(eB_, c_.stages, rowsB, colsB, swB_);
    periodB_ = std::max<int64_t>(1, swB_.periodBytes() / (colsB * ebB_));
    int64_t bytesA = kern::smemLayout(tA)->totalBytes();
    b_.setLoc(g_.loadA->loc());
    sA_ = b_.named(b_.op1("kern.smem_alloc", {}, tA, {{"offset", int64_t{0}}}), "sA");
    b_.setLoc(g_.loadB->loc());
    sB_ = b_.named(b_.op1("kern.smem_alloc", {}, tB, {{"offset", bytesA}}), "sB");
  }

  void planOperandCopies() {
    b_.setLoc(g_.loadA->loc());
    Value* ldA = cx_.extent(g_.accessA.ld);
    copyA_ = planCopies(cx_, sA_, cx_.matrixBase(g_.loadA->operand(0)), g_.aColMajor, cx_.m0, cx_.dimM, ldA, c_.alignA,
                        g_.accessA.strided, g_.loadA->loc());
    b_.setLoc(g_.loadB->loc());
    Value* baseB = cx_.matrixBase(g_.loadB->operand(0));
    Value* ldB = cx_.extent(g_.accessB.ld);
    copyB_ = g_.bKMajor ? planCopies(cx_, sB_, baseB, false, cx_.n0, cx_.dimN, ldB, c_.alignB, g_.accessB.strided,
                                     g_.loadB->loc())
                        : planCopies(cx_, sB_, baseB, true, cx_.n0, cx_.dimN, ldB, c_.alignB, g_.accessB.strided,
                                     g_.loadB->loc());
    // A group id outside [0, G) reads no B at all: its copies are zero-filled.
    if (cx_.groupOk) {
      for (Value*& v : copyB_.valid) v = b_.andi(v, cx_.groupOk);
      copyB_.allowed = cx_.groupOk;
    }
  }

  // ldmatrix lane offsets, computed once.
  void laneOffsets() {
    b_.setLoc(g_.dot->loc());
    zero_ = b_.i32(0);
    int64_t wm = cx_.warpTileM(), wn = cx_.warpTileN();
    if (g_.aColMajor)
      offA_ = ldsmOffset(sA_, zero_, cx_.warpM, mma16816::kQuadsAColMajor, 0, wm, 0, "aoff");
    else
      offA_ = ldsmOffset(sA_, cx_.warpM, zero_, g_.fp8 ? mma16832::kQuadsA : mma16816::kQuadsA, wm, 0, 0, "aoff");
    const mma16816::Quads& quadsBKMajor = g_.fp8 ? mma16832::kQuadsBKMajor : mma16816::kQuadsBKMajor;
    if (g_.bKMajor) {
      offB_ = ldsmOffset(sB_, cx_.warpN, zero_, quadsBKMajor, wn, 0, 0, "boff");
      if (periodB_ > 8) offB8_ = ldsmOffset(sB_, cx_.warpN, zero_, quadsBKMajor, wn, 0, 8, "boff8");
    } else {
      offB_ = ldsmOffset(sB_, zero_, cx_.warpN, mma16816::kQuadsBRowMajor, 0, wn, 0, "boff");
    }
  }
  Value* ldsmOffset(Value* buf, Value* wr, Value* wc, const mma16816::Quads& q, int64_t sr, int64_t sc, int64_t br,
                    const char* hint) {
    std::vector<int64_t> quads(q.begin(), q.end());
    return b_.named(b_.op1("kern.ldsm_offset", {buf, wr, wc}, types::i32(),
                           {{"quads", Attribute::ints(quads)}, {"stride", Attribute::ints({sr, sc})},
                            {"base", Attribute::ints({br, 0})}}),
                    hint);
  }

  // The copies of K tile kt into `slot`; loads through registers go to pendingA_ / pendingB_.
  void copyStage(Value* kt, Value* slot) {
    b_.setLoc(g_.loadA->loc());
    pendingA_ = copyTile(cx_, copyA_, kt, slot);
    b_.setLoc(g_.loadB->loc());
    pendingB_ = copyTile(cx_, copyB_, kt, slot);
  }
  // The register path's stores of the last copyStage into `slot`.
  void storePending(Value* slot) {
    b_.setLoc(g_.loadA->loc());
    if (!pendingA_.empty()) storeLoaded(cx_, copyA_, slot, pendingA_);
    b_.setLoc(g_.loadB->loc());
    if (!pendingB_.empty()) storeLoaded(cx_, copyB_, slot, pendingB_);
    pendingA_.clear();
    pendingB_.clear();
  }

  // Prologue: stages - 1 tiles in flight.
  void prologue() {
    for (int s = 0; s + 1 < c_.stages; ++s) {
      copyStage(b_.i32(s), b_.i32(s));
      storePending(b_.i32(s));
      b_.create("kern.cp_async_commit", {}, {});
    }
  }

  // Fragment loads of one k step.
  Fragments loadFragments(Value* slot, int kk, bool withA = true, bool withB = true) {
    Fragments f;
    Type frag = kern::fragType(e_), fragB = kern::fragType(eB_);
    b_.setLoc(g_.loadA->loc());
    for (int i = 0; i < (withA ? cx_.mTiles() : 0); ++i) {
      int64_t row = g_.aColMajor ? kStep_ * kk : 16 * i, col = g_.aColMajor ? 16 * i : kStep_ * kk;
      Operation* ld = b_.create("kern.ldmatrix", {sA_, slot, offA_}, {frag, frag, frag, frag},
                                {{"num", int64_t{4}}, {"trans", g_.aColMajor}, {"row", row}, {"col", col}});
      for (auto& r : ld->results()) f.a.push_back(b_.named(r.get(), "a"));
    }
    b_.setLoc(g_.loadB->loc());
    for (int j = 0; j < (withB ? cx_.nTiles() : 0); ++j) {
      Value* off = offB_;
      int64_t row = kStep_ * kk, col = 8 * j;
      if (g_.bKMajor) {
        row = 8 * j;
        col = kStep_ * kk;
        if (row % periodB_ != 0) {
          off = offB8_;
          row -= 8;
        }
      }
      Operation* ld = b_.create("kern.ldmatrix", {sB_, slot, off}, {fragB, fragB},
                                {{"num", int64_t{2}}, {"trans", !g_.bKMajor}, {"row", row}, {"col", col}});
      for (auto& r : ld->results()) f.b.push_back(b_.named(r.get(), "b"));
    }
    return f;
  }

  void mmaStep(const Fragments& f, std::vector<Value*>& acc) {
    b_.setLoc(g_.dot->loc());
    for (int i = 0; i < cx_.mTiles(); ++i)
      for (int j = 0; j < cx_.nTiles(); ++j) {
        std::vector<Value*> ops(f.a.begin() + 4 * i, f.a.begin() + 4 * i + 4);
        ops.insert(ops.end(), f.b.begin() + 2 * j, f.b.begin() + 2 * j + 2);
        for (int q = 0; q < 4; ++q) ops.push_back(acc[cx_.accIndex(i, j, q)]);
        Operation* mma = b_.create("kern.mma_sync", ops, {types::f32(), types::f32(), types::f32(), types::f32()},
                                   {{"shape", g_.fp8 ? "m16n8k32" : "m16n8k16"}});
        for (int q = 0; q < 4; ++q) acc[cx_.accIndex(i, j, q)] = b_.named(mma->result(q), "d");
      }
  }

  std::vector<Value*> loop();
  void loopBody(Block* body, Value* kt, std::vector<Value*> acc, Fragments cur, Value* rs, Value* ws);

  Context& cx_;
  KernBuilder& b_;
  const Config& c_;
  const GemmProgram& g_;
  ScalarType e_, eB_;
  int eb_, ebB_, kStep_;
  Swizzle swA_, swB_;
  int64_t periodB_ = 1;
  Value *sA_ = nullptr, *sB_ = nullptr, *zero_ = nullptr;
  Value *offA_ = nullptr, *offB_ = nullptr, *offB8_ = nullptr;
  CopyPlan copyA_, copyB_;
  std::vector<Value*> pendingA_, pendingB_;
};

// The K loop, carrying the accumulators, the fragments of the current tile's first k step, the
// read slot and the write slot.
std::vector<Value*> Mainloop::loop() {
  bool carryA = c_.fragPrefetch == FragPrefetch::A;  // B's step-0 fragments are never carried
  // Tile 0 has landed for everyone; the carried part of its first k step goes into registers
  // before the loop.
  b_.setLoc(g_.reduce->loc());
  b_.create("kern.cp_async_wait", {}, {}, {{"pending", int64_t(c_.stages - 2)}});
  b_.create("kern.barrier", {}, {});
  Fragments first = loadFragments(b_.i32(0), 0, carryA, false);

  b_.setLoc(g_.reduce->loc());
  Value* numK = b_.named(b_.div(b_.addConst(cx_.dimK, c_.bk - 1), b_.i32(c_.bk)), "ktiles");
  std::vector<Value*> inits;
  Value* accInit = b_.f32(g_.accInit);
  for (int i = 0; i < cx_.numAcc(); ++i) inits.push_back(accInit);
  inits.insert(inits.end(), first.a.begin(), first.a.end());
  inits.insert(inits.end(), first.b.begin(), first.b.end());
  inits.push_back(b_.i32(0));              // read slot
  inits.push_back(b_.i32(c_.stages - 1));  // write slot
  std::vector<Value*> forOperands = {b_.i32(0), numK, b_.i32(1)};
  forOperands.insert(forOperands.end(), inits.begin(), inits.end());
  std::vector<Type> resultTypes;
  for (Value* v : inits) resultTypes.push_back(v->type());
  Operation* loop = b_.create("scf.for", forOperands, resultTypes, {}, 1);
  Block* body = loop->region(0).addBlock();
  Value* kt = body->addArgument(types::i32(), "kt");
  std::vector<Value*> acc;
  for (int i = 0; i < cx_.numAcc(); ++i) acc.push_back(body->addArgument(types::f32(), "acc"));
  Fragments cur;
  for (size_t i = 0; i < first.a.size(); ++i) cur.a.push_back(body->addArgument(kern::fragType(e_), "a_cur"));
  for (size_t i = 0; i < first.b.size(); ++i) cur.b.push_back(body->addArgument(kern::fragType(eB_), "b_cur"));
  Value* rs = body->addArgument(types::i32(), "rs");
  Value* ws = body->addArgument(types::i32(), "ws");
  loopBody(body, kt, std::move(acc), std::move(cur), rs, ws);
  b_.create("kern.cp_async_wait", {}, {}, {{"pending", int64_t{0}}});
  std::vector<Value*> out;
  for (int i = 0; i < cx_.numAcc(); ++i) out.push_back(b_.named(loop->result(i), "acc"));
  return out;
}

void Mainloop::loopBody(Block* body, Value* kt, std::vector<Value*> acc, Fragments cur, Value* rs, Value* ws) {
  bool carryA = c_.fragPrefetch == FragPrefetch::A;
  InsertionGuard guard(b_);
  b_.setInsertionPointToEnd(body);
  // The uncarried step-0 fragments, before the copy (slot rs: tile kt, landed at B(kt-1)).
  if (!carryA) cur.a = loadFragments(rs, 0, true, false).a;
  cur.b = loadFragments(rs, 0, false, true).b;
  // Slot ws = (kt - 1) mod stages was last read before the previous iteration's barrier.
  // (At the top, as one block: see "Where the copy goes" above.)
  copyStage(b_.addConst(kt, c_.stages - 1), ws);
  b_.create("kern.cp_async_commit", {}, {});
  b_.setLoc(g_.reduce->loc());
  Value* rsNext = b_.named(nextSlot(b_, rs, c_.stages), "rs_next");

  const int nk = c_.bk / kStep_;
  for (int kk = 0; kk < nk; ++kk) {
    Value* slot = rs;
    if (kk == nk - 1) {
      // Tile kt + 1 has landed for everyone, and every warp is done reading slot rs but for the
      // fragments already in registers. The register path's tile goes into ws first.
      storePending(ws);
      b_.setLoc(g_.reduce->loc());
      b_.create("kern.cp_async_wait", {}, {}, {{"pending", int64_t(c_.stages - 2)}});
      b_.create("kern.barrier", {}, {});
      slot = rsNext;
    }
    Fragments following = loadFragments(slot, (kk + 1) % nk, kk < nk - 1 || carryA, kk < nk - 1);
    mmaStep(cur, acc);
    cur = std::move(following);
  }
  b_.setLoc(g_.reduce->loc());
  std::vector<Value*> yields = acc;
  yields.insert(yields.end(), cur.a.begin(), cur.a.end());
  yields.insert(yields.end(), cur.b.begin(), cur.b.end());
  yields.push_back(rsNext);
  yields.push_back(rs);  // (ws + 1) mod stages: the slot read in this iteration
  b_.create("scf.yield", yields, {});
}

}  // namespace

std::vector<Value*> buildMainloop(Context& cx) { return Mainloop(cx).build(); }

}  // namespace kiln::sm80
