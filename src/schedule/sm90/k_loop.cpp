// The sm90 consumer's K loop over the stage ring (PTX ISA, "wgmma.mma_async", "wgmma.fence",
// "wgmma.commit_group", "wgmma.wait_group"; descriptors in wgmma_desc.h). As kern IR, per unit:
//
//   for kt in 0 .. ksteps-1  carrying (acc, s, ph, prev) from (acc0, stage0, phase0, -):
//     if copier: copies(kt, s, ph)             producer.cpp: a free stage s, its TMA copies
//                                              (sm90-warp-specialize moves them to the producer)
//     mbarrier_wait(full[s], ph)               TMA has landed stage s
//     wgmma_fence                              the accumulators were last written by other code
//     for kk in 0 .. bk/kstep-1, for each m64 block i:   (kstep: 16 for 16-bit operands, 32 for FP8)
//       acc_i = wgmma(desc(A, s, rows of i, k step kk), desc(B, s, k step kk), acc_i)
//     wgmma_commit                             one group per K step
//     wgmma_wait(1)                            the previous K step's group is done ...
//     if kt > 0 && lane == 0: release(prev)    ... so its stage goes back to TMA
//     (s, ph) = next(s, ph); prev = s
//
// Keeping one group in flight while waiting means the tensor cores always have the next K step's
// wgmma queued behind the one that finishes. The empty barriers count one arrival per consumer
// warp: a warp arrives (from lane 0, after its own wait_group, which all its lanes executed) only
// when its part of the warpgroup's reads of the stage is complete.
//
// fp8_accum=promote / promote_pairs (FP8 operands): the loop is written as above, its wgmmas marked
// {accumulate = "promote" | "promote_pairs"}; the pass sm90-promote-fp8 (promote_fp8.cpp) makes
// each K step sum from zero into fresh registers added to the f32 accumulators once its group is
// waited for. tile.dot_scaled: each step starts with its block scales' factors (slice_scales.cpp),
// which that pass multiplies the sums by as it adds them.
#include "schedule/sm90/lowering.h"
#include "target/wgmma_desc.h"

namespace kiln::sm90 {
using namespace ir;

// All arrives of releaseStage are issued after this warp's wait_group retired its wgmma groups, so
// its reads of the stage are complete before any producer can see the arrival, and so before its
// next TMA writes here.
void releaseStage(KernBuilder& b, const Request& r, const Kernel& k, Value* s) {
  b.create("kern.mbarrier_arrive", {k.smem.empty, s}, {});
  // Peer rank ^ j for j = 1 .. n - 1 (n a power of two): each other block once.
  for (int j = 1; j < r.geo.clusterSize; ++j)
    b.create("kern.mbarrier_arrive_remote", {k.smem.empty, s, b.intBin("arith.xori", k.rank, b.i32(j))}, {});
}

namespace {

// The most scale elements (per thread and K step) whose addresses are made once, before the K loop:
// 1x128 x 128x128 needs 3 to 5 (at 160 columns, 4: two scale_b blocks), and their pointers then
// cost a few registers; per-column scales (1x128 x 1x128: 2 per n8 group) would hold 40 or more
// registers through the loop and spill.
constexpr int kHoistedScaleLoads = 8;

// The attributes of one K step's wgmmas: wgmma's A is the warpgroup's own operand (A's rows, or with
// swap_ab B's columns), its B the one the warpgroups share.
std::vector<NamedAttr> wgmmaAttrs(const Request& r) {
  const GemmProgram& g = r.g;
  const bool swapped = r.geo.swapped;
  ScalarType wa = swapped ? g.bType : g.abType, wb = swapped ? g.abType : g.bType;
  std::vector<NamedAttr> attrs = {{"shape", Attribute::ints({64, r.geo.wgmmaN, kStepOf(r.elemBytes())})},
                                  {"ab", std::string(scalarName(wa))}};
  if (wb != wa) attrs.push_back({"b", std::string(scalarName(wb))});
  if (swapped) {
    attrs.push_back({"trans_b", false});
    attrs.push_back({"trans_a", !g.bKMajor});
  } else {
    if (g.aColMajor) attrs.push_back({"trans_a", true});
    attrs.push_back({"trans_b", !g.bKMajor});
  }
  // fp8_accum=promote / promote_pairs: the program's FP8 numerics, for sm90-promote-fp8.
  if (r.c.fp8Accum != Fp8Accum::Fast) attrs.push_back({"accumulate", std::string(fp8AccumName(r.c.fp8Accum))});
  return attrs;
}

// One K step of the warpgroup on stage s: wait for its copies (full[s] at phase ph), then every
// wgmma of the step into `sums` (its results replace them), and commit the group. The step's first
// wgmma has scale_d = firstScale(on), `on` being true.
void issueKStep(KernBuilder& b, const Request& r, const Kernel& k, const Warpgroup& w, Value* s, Value* ph,
                const std::function<Value*(Value* on)>& firstScale, std::vector<Value*>& sums,
                const std::function<void()>& afterWait) {
  const Config& c = r.c;
  const GemmProgram& g = r.g;
  const int blocks = r.geo.wgmmaBlocks, nacc = r.geo.accPerBlock;
  // CTA scope (no attributes), with or without a cluster: the full barriers complete by TMA
  // complete-tx, which orders the copies' writes into this block's shared memory before the phase
  // completes, whichever block issued them. A cluster-scope acquire would add CCTL.IVALL (an L1
  // invalidation) after every wait. CUTLASS's TMA pipelines synchronize the same way.
  b.create("kern.mbarrier_wait", {k.smem.full, s, ph}, {});
  if (afterWait) afterWait();  // groups along K: the stage's tokens past the group's end zeroed
  b.setLoc(g.dot->loc());
  b.create("kern.wgmma_fence", {}, {});
  Value* on = b.i1(true);
  Value* first = firstScale(on);
  // One wgmma takes 32 bytes of K from each operand's 128-byte row: k16 for 16-bit operands,
  // k32 for FP8 (whose forms read both operands K-major).
  const int kStep = kStepOf(r.elemBytes());
  // Descriptors of the stage's operands for k step kk: A's rows `row` on from rowA (K-major),
  // and B's columns from 64 j past the warpgroup's (K-major B: its rows; row-major B: its box j,
  // whose K rows follow one another, the next box LBO further).
  // A column-major: its m64 block `row` / 64 is the stage's box of those 64 columns, whose K rows
  // follow one another from row (row / 64) bk = row (bk is 64 for 16-bit operands; the
  // warpgroup's first row rowA is a multiple of 64 too), MN-major as a row-major B's.
  auto descA = [&](int kk, int64_t row) {
    KILN_ASSERT(!g.aColMajor || c.bk == 64, "sm90: a column-major A's boxes are 64 K rows");
    if (g.aColMajor)
      return b.op1("kern.wgmma_desc", {k.smem.sA, s, w.rowA}, types::i64(),
                   {{"row", row / 64 * c.bk + kStep * kk}, {"col", int64_t{0}}, {"major", "mn"},
                    {"lbo", wgmma::mnMajorLbo(c.bk)}, {"sbo", wgmma::kMnMajorSbo}});
    return b.op1("kern.wgmma_desc", {k.smem.sA, s, w.rowA}, types::i64(),
                 {{"row", row}, {"col", int64_t(kStep * kk)}, {"major", "k"}, {"lbo", wgmma::kKMajorLbo},
                  {"sbo", wgmma::kKMajorSbo}});
  };
  auto descB = [&](int kk, int64_t j) {
    if (g.bKMajor)
      return b.op1("kern.wgmma_desc", {k.smem.sB, s, w.rowB}, types::i64(),
                   {{"row", 64 * j}, {"col", int64_t(kStep * kk)}, {"major", "k"}, {"lbo", wgmma::kKMajorLbo},
                    {"sbo", wgmma::kKMajorSbo}});
    return b.op1("kern.wgmma_desc", {k.smem.sB, s, w.rowB}, types::i64(),
                 {{"row", j * c.bk + kStep * kk}, {"col", int64_t{0}}, {"major", "mn"},
                  {"lbo", wgmma::mnMajorLbo(c.bk)}, {"sbo", wgmma::kMnMajorSbo}});
  };
  const std::vector<NamedAttr> mmaAttrs = wgmmaAttrs(r);
  for (int kk = 0; kk < c.bk / kStep; ++kk) {
    // Block i: A's rows 64 i .. 64 i + 63 of the warpgroup times the whole B stage; swap_ab: B's
    // columns 64 i .. 64 i + 63 as wgmma's A (MN-major for a row-major B) times the warpgroup's
    // A rows as its B (K-major).
    Value* shared = r.geo.swapped ? descA(kk, 0) : descB(kk, 0);
    for (int i = 0; i < blocks; ++i) {
      Value* own = r.geo.swapped ? descB(kk, i) : descA(kk, 64 * i);
      std::vector<Value*> ops = {kk == 0 ? first : on, own, shared};
      ops.insert(ops.end(), sums.begin() + i * nacc, sums.begin() + (i + 1) * nacc);
      Operation* mma = b.create("kern.wgmma", ops, std::vector<Type>(size_t(nacc), types::f32()), mmaAttrs);
      for (int e = 0; e < nacc; ++e) sums[size_t(i * nacc + e)] = b.named(mma->result(unsigned(e)), "d");
    }
  }
  b.create("kern.wgmma_commit", {}, {});
}

// reuse_stage: the previous tile's last stage holds boxes of its epilogue until their TMA stores
// have read them; with this tile's first wgmmas queued, the elected thread waits for those reads,
// and then every warp gives the stage back (the arrivals it skipped then).
void releasePreviousTileStage(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, const Warpgroup& w,
                              Value* kt, Value* isLane0, Value* elected, Value* prevLast) {
  b.ifThen(b.andi(b.cmp("eq", kt, b.i32(0)), b.cmp("sgt", u.iter, b.i32(0))), [&] {
    b.ifThen(elected, [&] { b.create("kern.bulk_wait", {}, {}, {{"pending", int64_t{0}}, {"read", true}}); });
    b.create("kern.named_barrier", {groupBarrier(b, w.wg)}, {}, {{"threads", int64_t{128}}});
    b.ifThen(isLane0, [&] { releaseStage(b, r, k, prevLast); });
  });
}

}  // namespace

KLoop buildKLoop(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, const Warpgroup& w, Value* copier,
                 Value* isLane0, const std::vector<Value*>& acc0, bool firstIgnoresAcc, Value* elected,
                 Value* prevLast) {
  // tile.dot_scaled: the thread's scale elements (slice_scales.cpp), their addresses made before
  // the loop when they are few (their 64-bit pointers live through it), else in each K step.
  const bool hoist = r.g.blockK && sliceScaleLoads(r) <= kHoistedScaleLoads;
  const SliceScales hoisted = hoist ? prepareSliceScales(b, r, k, u, w) : SliceScales{};
  Value* zero = b.i32(0);
  std::vector<Value*> forOps = {zero, u.ksteps, b.i32(1)};
  forOps.insert(forOps.end(), acc0.begin(), acc0.end());
  forOps.push_back(u.stage0);
  forOps.push_back(u.phase0);
  forOps.push_back(zero);  // prev: unused in the first step
  std::vector<Type> resultTypes(acc0.size(), types::f32());
  for (int i = 0; i < 3; ++i) resultTypes.push_back(types::i32());
  Operation* loop = b.create("scf.for", forOps, resultTypes, {}, 1);
  Block* body = loop->region(0).addBlock();
  Value* kt = body->addArgument(types::i32(), "kt");
  std::vector<Value*> acc;
  for (size_t i = 0; i < acc0.size(); ++i) acc.push_back(body->addArgument(types::f32(), "acc"));
  Value* s = body->addArgument(types::i32(), "s");
  Value* ph = body->addArgument(types::i32(), "ph");
  Value* prev = body->addArgument(types::i32(), "prev");
  {
    InsertionGuard guard(b);
    b.setInsertionPointToEnd(body);
    // A ring of one: the previous step's stage goes back before this step's copies may take it
    // (sm90-multistage-ring moves these releases after the step's wgmmas).
    b.setLoc(r.g.reduce->loc());
    Value* release = b.andi(b.cmp("sgt", kt, zero), isLane0);
    b.ifThen(release, [&] { releaseStage(b, r, k, prev); });
    if (k.smem.sR) releasePreviousTileStage(b, r, k, u, w, kt, isLane0, elected, prevLast);
    // The step's copies, by one thread (sm90-warp-specialize gives them to the producer role).
    b.ifThen(copier, [&] { buildCopies(b, r, k, u, kt, s, ph); });
    b.setLoc(r.g.reduce->loc());
    // tile.dot_scaled: the step's factors first, for sm90-promote-fp8 (slice_scales.cpp).
    if (r.g.blockK) {
      const SliceScales scales = hoist ? hoisted : prepareSliceScales(b, r, k, u, w);
      b.create("kern.promote_scales",
               buildSliceScales(b, scales, u.kbase ? b.add(u.kbase, kt) : kt, k, s, r.c.splitK > 1 ? k.ktiles : nullptr),
               {});
    }
    // scale_d of the K step's first wgmma: the tile's first step ignores the undefined start.
    issueKStep(b, r, k, w, s, ph, [&](Value* on) { return firstIgnoresAcc ? b.cmp("ne", kt, zero) : on; }, acc,
               u.kEnd && !r.g.fp8 ? std::function<void()>([&] { zeroTokenTail(b, r, k, u, w, kt, s); }) : nullptr);
    // No group in flight: the next step's release needs this step's reads done.
    b.create("kern.wgmma_wait", {}, {}, {{"pending", int64_t{0}}});
    b.setLoc(r.g.reduce->loc());
    auto [s1, ph1] = nextStage(b, s, ph, 1);
    std::vector<Value*> yields = acc;
    yields.push_back(s1);
    yields.push_back(ph1);
    yields.push_back(s);
    b.create("scf.yield", yields, {});
  }
  KLoop out;
  for (size_t i = 0; i < acc0.size(); ++i) out.acc.push_back(loop->result(unsigned(i)));
  out.last = loop->result(unsigned(acc0.size() + 2));
  return out;
}

}  // namespace kiln::sm90
