// The gemv strategy's K loops (contract in gemv.h, geometry in gemv_loops.h). Each step issues
// every load of B it makes (U per thread, or U x R on the K path) and A's, and only then the FMAs,
// so a thread has U 16-byte loads of B in flight; the loop's bounds are the same for every thread
// of the block (loads past K or N are masked off and read as 0), so the shuffles after it run
// converged.
//
//   N path:  scf.for %kb = 0 to K step groups * U (acc[bm][V]) {
//              %k_u = %kb + ko + u * groups          ld.global.v4 B[k_u][col .. col + V]   (u < U)
//              A(m, k_u) (m < bm)                    fma acc[m][v] += A(m, k_u) * B[k_u][col + v]
//            }
//            shfl.bfly over the warp's rows of threads; partials[warp][m][cn * V + v];
//            barrier; sums[m][c] = sum over warps (fixed order) + acc_init; barrier
//            (strided B, V > 1: scf.if (n0 + bn <= N) { the loop } else { the loop with V element loads
//             of B per row, each masked by its column }: N need not be a multiple of V)
//   K path:  scf.for %kb = 0 to K step lanes * V * U (acc[bm][R]) {
//              %k_u = %kb + c * V + u * lanes * V     ld.global.v4 B[n_r][k_u .. k_u + V]  (u < U, r < R)
//              A(m, k_u .. k_u + V)                  fma acc[m][r] += sum_v A(m, k_u + v) * B[n_r][k_u + v]
//            }
//            shfl.bfly over the group's lanes; sums[m][group * R + r]; barrier
#include <functional>

#include "schedule/gemv/gemv_loops.h"

namespace kiln::gemv {
using namespace ir;

namespace {

using Body = std::function<std::vector<Value*>(Value*, const std::vector<Value*>&)>;

// scf.for (lb, ub, step) carrying `inits`; returns the loop's results.
std::vector<Value*> forLoop(KernBuilder& b, Value* lb, Value* ub, Value* step, const std::vector<Value*>& inits,
                            const Body& body) {
  std::vector<Value*> operands{lb, ub, step};
  std::vector<Type> types;
  for (Value* v : inits) {
    operands.push_back(v);
    types.push_back(v->type());
  }
  Operation* loop = b.create("scf.for", operands, types, {}, 1);
  Block* blk = loop->region(0).addBlock();
  Value* iv = blk->addArgument(types::i32(), "kb");
  std::vector<Value*> carried;
  for (Value* v : inits) carried.push_back(blk->addArgument(v->type()));
  {
    InsertionGuard guard(b);
    b.setInsertionPointToEnd(blk);
    b.create("scf.yield", body(iv, carried), {});
  }
  std::vector<Value*> results;
  for (unsigned i = 0; i < loop->numResults(); ++i) results.push_back(loop->result(i));
  return results;
}

// Loads n consecutive elements of type e at p (n = 1, 2, 4 or 8 16-bit elements: one access of
// 2 to 16 bytes), masked by ok (a masked-off load reads 0); returns the raw words.
std::vector<Value*> loadRaw(KernBuilder& b, Value* p, Value* ok, int n, ScalarType e) {
  if (n == 1) return {b.op1("kern.ld_global", {p, ok}, Type::scalar(e))};
  Operation* ld = b.create("kern.ld_global", {p, ok}, std::vector<Type>(size_t(n / 2), kern::fragType(e)));
  std::vector<Value*> w;
  for (unsigned i = 0; i < ld->numResults(); ++i) w.push_back(ld->result(i));
  return w;
}

// The words as f32, lowest element first.
std::vector<Value*> unpack(KernBuilder& b, const std::vector<Value*>& words) {
  std::vector<Value*> r;
  for (Value* w : words) {
    size_t n = kern::isFrag(w->type()) ? size_t(w->type().shape()[0].value) : 1;
    Operation* u = b.create("kern.cvt_unpack", {w}, std::vector<Type>(n, types::f32()));
    for (size_t k = 0; k < n; ++k) r.push_back(u->result(unsigned(k)));
  }
  return r;
}

Value* i64(KernBuilder& b, Value* v) { return b.cast(v, types::i64()); }

// How A(m, k) is addressed: A's matrix base + m * sM + k * sK (i64 elements).
struct AAccess {
  Value* base = nullptr;
  Value *sM = nullptr, *sK = nullptr;
};
AAccess aAccess(sm80::Context& cx) {
  KernBuilder& b = cx.b;
  Value* ld = i64(b, cx.extent(cx.g.accessA.ld));
  AAccess a{cx.matrixBase(cx.g.tensorA), nullptr, nullptr};
  a.sM = cx.g.aColMajor ? b.i64(1) : ld;
  a.sK = cx.g.aColMajor ? ld : b.i64(1);
  return a;
}

// The rows of M this block computes, m0 + m, and whether each is inside M.
std::vector<Value*> rowsOk(sm80::Context& cx, const Geometry& geo) {
  std::vector<Value*> ok;
  for (int m = 0; m < geo.bm; ++m) ok.push_back(cx.b.cmp("slt", cx.b.addConst(cx.m0, m), cx.dimM));
  return ok;
}

// Butterfly sums over the lanes lane ^ offset, offset = lo, 2 lo, ... below hi.
void butterfly(KernBuilder& b, std::vector<Value*>& acc, int lo, int hi) {
  for (int off = lo; off < hi; off *= 2)
    for (Value*& v : acc) v = b.fbin("arith.addf", v, b.op1("kern.shfl_xor", {v}, types::f32(), {{"offset", int64_t(off)}}));
}

void store(KernBuilder& b, Value* sums, Value* slot, Value* off, int row, int col, Value* v) {
  b.create("kern.st_shared", {sums, slot, off, v}, {}, {{"row", int64_t(row)}, {"col", int64_t(col)}});
}


// K path: one step's loads of A(m0 + m, k + v), m < bm, v < V, as raw words (kA: k's offset along
// A's K). A row-major A: an entry per row m, V / VA loads of VA elements (VA = V: one vector). A
// column-major A: with VM = 1 an entry per row of V element loads, each lane reading its own k's
// ld apart; with VM > 1 one entry [v][m], V x bm / VM loads of VM contiguous rows (bm elements of
// one k are contiguous in a column-major A: as many loads a step as a row-major A's, not bm x V).
std::vector<std::vector<Value*>> kPathLoadA(KernBuilder& b, const Geometry& geo, const std::vector<Value*>& aRow,
                                            const std::vector<Value*>& mOk, Value* kA, Value* sK, Value* kOk,
                                            ScalarType eA) {
  std::vector<std::vector<Value*>> out;
  if (geo.VM > 1) {
    std::vector<Value*> words;
    for (int v = 0; v < geo.V; ++v)
      for (int m = 0; m < geo.bm; m += geo.VM) {
        Value* p = b.ptrAdd(aRow[size_t(m)], kA);
        Value* pv = v == 0 ? p : b.ptrAdd(p, b.mul(b.i64(v), sK));
        for (Value* w : loadRaw(b, pv, b.andi(kOk, mOk[size_t(m)]), geo.VM, eA)) words.push_back(w);
      }
    out.push_back(words);
    return out;
  }
  for (int m = 0; m < geo.bm; ++m) {
    Value* p = b.ptrAdd(aRow[size_t(m)], kA);
    Value* ok = b.andi(kOk, mOk[size_t(m)]);
    std::vector<Value*> words;
    for (int v = 0; v < geo.V; v += geo.VA) {
      Value* pv = v == 0 ? p : b.ptrAdd(p, b.mul(b.i64(v), sK));
      for (Value* w : loadRaw(b, pv, ok, geo.VA, eA)) words.push_back(w);
    }
    out.push_back(words);
  }
  return out;
}
}  // namespace

int kStep(const Geometry& geo) { return geo.kMajor ? geo.lanes * geo.V * geo.U : geo.groups() * geo.U; }

void nPathSums(sm80::Context& cx, const Geometry& geo, Value* partials, Value* sums, const KRange& kr) {
  KernBuilder& b = cx.b;
  const GemmProgram& g = cx.g;
  b.setLoc(g.reduce->loc());
  Value* cn = b.named(b.rem(cx.tid, b.i32(geo.lanes)), "cn");
  Value* ko = b.named(b.div(cx.tid, b.i32(geo.lanes)), "ko");
  Value* col = b.named(b.add(cx.n0, b.mulConst(cn, geo.V)), "col");
  Value* colOk = b.cmp("slt", col, cx.dimN);
  Value* ldb = i64(b, cx.extent(g.accessB.ld));
  Value* bBase = b.ptrAdd(cx.matrixBase(g.tensorB), i64(b, col));
  AAccess a = aAccess(cx);
  std::vector<Value*> mOk = rowsOk(cx, geo);
  std::vector<Value*> aRow;  // A's matrix base at row m0 + m
  for (int m = 0; m < geo.bm; ++m) aRow.push_back(b.ptrAdd(a.base, b.mul(i64(b, b.addConst(cx.m0, m)), a.sM)));
  const ScalarType eA = g.abType, eB = g.bType;
  std::vector<Value*> inits(size_t(geo.bm * geo.V), b.f32(0.0));
  Value* step = b.i32(int64_t(geo.groups()) * geo.U);
  b.setLoc(g.dot->loc());
  Value* kEnd = kr.end ? kr.end : cx.dimK;
  // The tail's columns, each inside N or not (elements: the block past N's last whole vector).
  std::vector<Value*> elemOk;
  if (geo.nTail)
    for (int v = 0; v < geo.V; ++v) elemOk.push_back(b.cmp("slt", b.addConst(col, v), cx.dimN));
  auto kLoop = [&](bool elements) {
    return forLoop(b, kr.begin ? kr.begin : b.i32(0), kEnd, step, inits, [&](Value* kb, const std::vector<Value*>& in) {
      std::vector<Value*> next = in;
      std::vector<std::vector<Value*>> bw(size_t(geo.U)), aw(size_t(geo.U));
      Value* k0 = b.add(kb, ko);
      for (int u = 0; u < geo.U; ++u) {  // every load first
        Value* k = b.addConst(k0, int64_t(u) * geo.groups());
        Value* kOk = b.cmp("slt", k, kEnd);
        // (The mask before the address: the order of the unsplit kernels' pinned PTX.)
        Value* vecOk = elements ? nullptr : b.andi(kOk, colOk);
        Value* row = b.ptrAdd(bBase, b.mul(i64(b, k), ldb));
        if (!elements) {
          bw[size_t(u)] = loadRaw(b, row, vecOk, geo.V, eB);
        } else {
          for (int v = 0; v < geo.V; ++v)
            bw[size_t(u)].push_back(loadRaw(b, v ? b.ptrAdd(row, b.i64(v)) : row, b.andi(kOk, elemOk[size_t(v)]), 1, eB)[0]);
        }
        // A(m0 .. m0 + bm, k): one element a row (the lanes of a row of threads read the same
        // address: L1 broadcasts it), or VM rows a load where A is column-major.
        Value* kA = b.mul(i64(b, k), a.sK);
        for (int m = 0; m < geo.bm; m += geo.VM)
          for (Value* w : loadRaw(b, b.ptrAdd(aRow[size_t(m)], kA), b.andi(kOk, mOk[size_t(m)]), geo.VM, eA))
            aw[size_t(u)].push_back(w);
      }
      for (int u = 0; u < geo.U; ++u) {
        std::vector<Value*> bv = unpack(b, bw[size_t(u)]);
        std::vector<Value*> av = unpack(b, aw[size_t(u)]);
        for (int m = 0; m < geo.bm; ++m)
          for (int v = 0; v < geo.V; ++v) {
            Value*& s = next[size_t(m * geo.V + v)];
            s = b.op1("arith.fmaf", {av[size_t(m)], bv[size_t(v)], s}, types::f32());
          }
      }
      return next;
    });
  };
  std::vector<Value*> acc;
  if (!geo.nTail) {
    acc = kLoop(false);
  } else {
    // Block-uniform: a block whose columns all lie inside N takes the vector loop; the block over
    // N's end (one per row of tiles) loads its columns one element at a time.
    Value* whole = b.cmp("sle", b.addConst(cx.n0, geo.bn), cx.dimN);
    Operation* branch = b.create("scf.if", {whole}, std::vector<Type>(inits.size(), types::f32()), {}, 2);
    for (unsigned arm = 0; arm < 2; ++arm) {
      InsertionGuard guard(b);
      b.setInsertionPointToEnd(branch->region(arm).addBlock());
      b.create("scf.yield", kLoop(arm == 1), {});
    }
    for (unsigned i = 0; i < branch->numResults(); ++i) acc.push_back(branch->result(i));
  }
  // The warp's rows of threads (lanes lanes apart) summed; its first row writes the warp's slot.
  b.setLoc(g.reduce->loc());
  butterfly(b, acc, geo.lanes, 32);
  Value* zero = b.i32(0);
  Value* mine = b.op1("kern.smem_offset", {partials, zero, b.mulConst(cn, geo.V)}, types::i32());
  // Every row of the warp holds the same (bitwise: the butterfly adds the same pairs) sums, so all
  // write them: no lane-dependent branch (the shared stores take no predicate).
  for (int m = 0; m < geo.bm; ++m)
    for (int v = 0; v < geo.V; ++v) store(b, partials, cx.warp, mine, m, v, acc[size_t(m * geo.V + v)]);
  b.create("kern.barrier", {}, {});
  // The warps' slots summed in warp order into `sums`, bm * bn sums dealt out over the threads; in
  // the last round the threads past the end repeat the last sum (the same value to the same place).
  const int outputs = geo.bm * geo.bn;
  for (int first = 0; first < outputs; first += geo.T) {
    Value* idx = b.addConst(cx.tid, first);
    if (first + geo.T > outputs) idx = b.min(idx, b.i32(outputs - 1));
    Value* row = b.div(idx, b.i32(geo.bn)), *col = b.rem(idx, b.i32(geo.bn));
    Value* from = b.op1("kern.smem_offset", {partials, row, col}, types::i32());
    Value* total = b.f32(kr.addInit ? g.accInit : 0.0);
    for (int w = 0; w < geo.warps(); ++w)
      total = b.fbin("arith.addf", total,
                     b.op1("kern.ld_shared", {partials, b.i32(w), from}, types::f32(), {{"row", int64_t(0)}, {"col", int64_t(0)}}));
    store(b, sums, zero, b.op1("kern.smem_offset", {sums, row, col}, types::i32()), 0, 0, total);
  }
  b.create("kern.barrier", {}, {});
}

void kPathSums(sm80::Context& cx, const Geometry& geo, Value* sums, const KRange& kr) {
  KernBuilder& b = cx.b;
  const GemmProgram& g = cx.g;
  b.setLoc(g.reduce->loc());
  const int R = geo.rowsPerGroup();
  Value* c = b.named(b.rem(cx.tid, b.i32(geo.lanes)), "kc");
  Value* grp = b.named(b.div(cx.tid, b.i32(geo.lanes)), "grp");
  Value* ldb = i64(b, cx.extent(g.accessB.ld));
  Value* bMat = cx.matrixBase(g.tensorB);
  std::vector<Value*> bRow, nOk;  // B's row n0 + grp * R + r, and whether it is inside N
  for (int r = 0; r < R; ++r) {
    Value* n = b.addConst(b.add(cx.n0, b.mulConst(grp, R)), r);
    nOk.push_back(b.cmp("slt", n, cx.dimN));
    bRow.push_back(b.ptrAdd(bMat, b.mul(i64(b, n), ldb)));
  }
  AAccess a = aAccess(cx);
  std::vector<Value*> mOk = rowsOk(cx, geo);
  std::vector<Value*> aRow;
  for (int m = 0; m < geo.bm; ++m) aRow.push_back(b.ptrAdd(a.base, b.mul(i64(b, b.addConst(cx.m0, m)), a.sM)));
  Value* kLane = b.mulConst(c, geo.V);
  const ScalarType eA = g.abType, eB = g.bType;
  std::vector<Value*> inits(size_t(geo.bm * R), b.f32(0.0));
  Value* step = b.i32(int64_t(geo.lanes) * geo.V * geo.U);
  b.setLoc(g.dot->loc());
  Value* kEnd = kr.end ? kr.end : cx.dimK;
  std::vector<Value*> acc = forLoop(b, kr.begin ? kr.begin : b.i32(0), kEnd, step, inits, [&](Value* kb, const std::vector<Value*>& in) {
    std::vector<Value*> next = in;
    std::vector<std::vector<Value*>> bw, aw;  // [u * R + r], [u * bm + m] (VM > 1: [u], [v][m] inside)
    Value* k0 = b.add(kb, kLane);
    for (int u = 0; u < geo.U; ++u) {  // every load first
      Value* k = b.addConst(k0, int64_t(u) * geo.lanes * geo.V);
      Value* kOk = b.cmp("slt", k, kEnd);
      Value* k64 = i64(b, k);
      for (int r = 0; r < R; ++r)
        bw.push_back(loadRaw(b, b.ptrAdd(bRow[size_t(r)], k64), b.andi(kOk, nOk[size_t(r)]), geo.V, eB));
      for (auto& words : kPathLoadA(b, geo, aRow, mOk, b.mul(k64, a.sK), a.sK, kOk, eA)) aw.push_back(words);
    }
    for (int u = 0; u < geo.U; ++u) {
      std::vector<std::vector<Value*>> bv;
      for (int r = 0; r < R; ++r) bv.push_back(unpack(b, bw[size_t(u * R + r)]));
      std::vector<Value*> colMajor = geo.VM > 1 ? unpack(b, aw[size_t(u)]) : std::vector<Value*>{};  // [v][m]
      for (int m = 0; m < geo.bm; ++m) {
        std::vector<Value*> av;  // A(m, k + v), v < V
        if (geo.VM > 1) {
          for (int v = 0; v < geo.V; ++v) av.push_back(colMajor[size_t(v * geo.bm + m)]);
        } else {
          av = unpack(b, aw[size_t(u * geo.bm + m)]);
        }
        for (int r = 0; r < R; ++r) {
          Value*& s = next[size_t(m * R + r)];
          for (int v = 0; v < geo.V; ++v)
            s = b.op1("arith.fmaf", {av[size_t(v)], bv[size_t(r)][size_t(v)], s}, types::f32());
        }
      }
    }
    return next;
  });
  b.setLoc(g.reduce->loc());
  butterfly(b, acc, 1, geo.lanes);
  Value* zero = b.i32(0);
  Value* mine = b.op1("kern.smem_offset", {sums, zero, b.mulConst(grp, R)}, types::i32());
  // Every lane of the group holds the same sums (see nPathSums): all write them.
  for (int m = 0; m < geo.bm; ++m)
    for (int r = 0; r < R; ++r)
      store(b, sums, zero, mine, m, r,
            g.accInit == 0.0 || !kr.addInit ? acc[size_t(m * R + r)] : b.fbin("arith.addf", acc[size_t(m * R + r)], b.f32(g.accInit)));
  b.create("kern.barrier", {}, {});
}

}  // namespace kiln::gemv
