// The reductions of one pass (contract in row_reduce.h).
#include "schedule/rowwise/row_reduce.h"

#include <algorithm>
#include <limits>

namespace kiln::rowwise {
using namespace ir;

namespace {

const double kInf = std::numeric_limits<double>::infinity();

double identity(const std::string& kind) { return kind == "sum" ? 0.0 : kind == "max" ? -kInf : kInf; }

Value* combineKind(KernBuilder& b, const std::string& kind, Value* x, Value* y) {
  const char* name = kind == "sum" ? "arith.addf" : kind == "max" ? "arith.maxf" : "arith.minf";
  return b.fbin(name, x, y);
}

// The base an online sum's terms are taken relative to: the maximum, or 0 while it is -inf.
// (Builder calls are sequenced one statement at a time throughout, so the order of the ops, and
// so the PTX, does not depend on the C++ compiler's order of evaluating arguments.)
Value* expBase(KernBuilder& b, Value* m) {
  Value* minusInf = b.f32(-kInf);
  Value* none = b.op1("arith.cmpf", {m, minusInf}, types::i1(), {{"pred", "eq"}});
  Value* zero = b.f32(0.0);
  return b.select(none, zero, m);
}

Value* expOf(KernBuilder& b, Value* x, Value* base) { return b.fun("math.exp", b.fbin("arith.subf", x, base)); }

}  // namespace

PassReductions::PassReductions(Context& cx, Values& vals, int pass) : cx_(cx), vals_(vals) {
  for (size_t i = 0; i < cx.rp.reductions.size(); ++i)
    if (cx.plan->pass[i] == pass) {
      red_.push_back(&cx.rp.reductions[i]);
      index_.push_back(i);
    }
}

int PassReductions::partnerOf(size_t i) const {
  int mx = cx_.plan->onlineMax[index_[i]];
  if (mx < 0) return -1;
  for (size_t j = 0; j < index_.size(); ++j)
    if (index_[j] == size_t(mx)) return int(j);
  KILN_ICE("rowwise: an online sum whose max is in another pass");
}

std::vector<Value*> PassReductions::init() {
  std::vector<Value*> acc;
  for (const Reduction* r : red_) acc.push_back(cx_.b.f32(identity(r->op->stringAttr("kind"))));
  return acc;
}

std::vector<Value*> PassReductions::update(const std::vector<Value*>& acc, Chunk& ch) {
  KernBuilder& b = cx_.b;
  std::vector<Value*> next(acc.size());
  for (size_t i = 0; i < red_.size(); ++i) {
    const Operation& op = *red_[i]->op;
    b.setLoc(op.loc());
    int partner = partnerOf(i);
    if (partner >= 0) {
      // s' = s exp(m - m') + sum exp(a - m'), with m' the max's partial after this vector.
      Value* base = expBase(b, next[size_t(partner)]);
      Value* terms = nullptr;
      for (Value* a : vals_.get(red_[i]->onlineInput, &ch)) {
        Value* t = expOf(b, a, base);
        terms = terms ? b.fbin("arith.addf", terms, t) : t;
      }
      Value* scaled = b.fbin("arith.mulf", acc[i], expOf(b, acc[size_t(partner)], base));
      next[i] = b.select(ch.colOk, b.fbin("arith.addf", scaled, terms), acc[i]);
      continue;
    }
    std::string kind = op.stringAttr("kind");
    Value* part = nullptr;
    for (Value* x : vals_.get(op.operand(0), &ch)) part = part ? combineKind(b, kind, part, x) : x;
    next[i] = b.select(ch.colOk, combineKind(b, kind, acc[i], part), acc[i]);
  }
  return next;
}

std::vector<Value*> PassReductions::combine(const std::vector<Value*>& x, const std::vector<Value*>& y) {
  KernBuilder& b = cx_.b;
  std::vector<Value*> r(x.size());
  for (size_t i = 0; i < red_.size(); ++i)
    if (partnerOf(i) < 0) r[i] = combineKind(b, red_[i]->op->stringAttr("kind"), x[i], y[i]);
  for (size_t i = 0; i < red_.size(); ++i) {
    int p = partnerOf(i);
    if (p < 0) continue;
    Value* base = expBase(b, r[size_t(p)]);
    Value* sx = b.fbin("arith.mulf", x[i], expOf(b, x[size_t(p)], base));
    Value* sy = b.fbin("arith.mulf", y[i], expOf(b, y[size_t(p)], base));
    r[i] = b.fbin("arith.addf", sx, sy);
  }
  return r;
}

void PassReductions::finish(std::vector<Value*> acc) {
  KernBuilder& b = cx_.b;
  const Geometry& g = cx_.geo;
  b.setLoc(red_.front()->op->loc());
  // Within the warp: butterflies over the row's lanes (all of them when the row spans warps).
  for (int off = std::min(g.G, 32) / 2; off >= 1; off /= 2) {
    std::vector<Value*> other;
    for (Value* v : acc) other.push_back(b.op1("kern.shfl_xor", {v}, types::f32(), {{"offset", int64_t(off)}}));
    acc = combine(acc, other);
  }
  // Across the row's warps: each warp's totals through shared memory, combined in warp order.
  if (g.warpsPerRow() > 1) {
    Value* buf = cx_.reduceBuf;
    Value* zero = b.i32(0);
    Value* slot0 = b.mulConst(cx_.rowInBlock, g.warpsPerRow());
    Value* mine = b.op1("kern.smem_offset", {buf, zero, b.add(slot0, cx_.warpInRow)}, types::i32());
    for (size_t i = 0; i < acc.size(); ++i)
      b.create("kern.st_shared", {buf, zero, mine, acc[i]}, {}, {{"row", int64_t(i)}, {"col", int64_t(0)}});
    b.create("kern.barrier", {}, {});
    Value* first = b.op1("kern.smem_offset", {buf, zero, slot0}, types::i32());
    std::vector<Value*> total;
    for (int w = 0; w < g.warpsPerRow(); ++w) {
      std::vector<Value*> part;
      for (size_t i = 0; i < acc.size(); ++i)
        part.push_back(b.op1("kern.ld_shared", {buf, zero, first}, types::f32(), {{"row", int64_t(i)}, {"col", int64_t(w)}}));
      total = w == 0 ? part : combine(total, part);
    }
    b.create("kern.barrier", {}, {});  // the buffer is free again for the next pass
    acc = total;
  }
  for (size_t i = 0; i < red_.size(); ++i) {
    Value* v = acc[i];
    int p = partnerOf(i);
    if (p >= 0) {  // nothing but -inf: exp(-inf - -inf) is NaN
      Value* minusInf = b.f32(-kInf);
      Value* none = b.op1("arith.cmpf", {acc[size_t(p)], minusInf}, types::i1(), {{"pred", "eq"}});
      Value* nan = b.f32(std::numeric_limits<double>::quiet_NaN());
      v = b.select(none, nan, v);
    }
    cx_.rowVals[red_[i]->op->result()] = vals_.round(red_[i]->op->result()->type().elem(), {v});
  }
}

int64_t mostPartials(const RowProgram& rp) {
  int64_t most = 0;
  for (const Plan* pl : {&rp.onChip, &rp.streaming})
    for (int p = 0; p < pl->passes; ++p)
      most = std::max<int64_t>(most, std::count(pl->pass.begin(), pl->pass.end(), p));
  return most;
}

int64_t reduceSlots(const Geometry& g) { return (g.T / 32 + 31) / 32 * 32; }

int64_t reduceSmemBytes(const RowProgram& rp, const Geometry& g) {
  if (g.warpsPerRow() <= 1) return 0;
  return mostPartials(rp) * reduceSlots(g) * 4;
}

}  // namespace kiln::rowwise
