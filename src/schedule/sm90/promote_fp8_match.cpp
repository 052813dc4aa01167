// The matcher of sm90-promote-fp8 (promote_fp8_match.h; the pass and its legality conditions are in
// promote_fp8.cpp).
#include "schedule/sm90/promote_fp8_match.h"

#include <algorithm>
#include <set>

#include "dialects/kern/kern_builder.h"
#include "kiln/ir/op_registry.h"

namespace kiln::sm90::promote {
namespace {

using ir::Block;
using ir::Operation;
using ir::Value;

bool isConstant(const Value* v, int64_t want) {
  auto c = KernBuilder::intConstant(v);
  return c && *c == want;
}

bool isTrue(const Value* v) {
  const Operation* d = v->definingOp();
  return d && d->is("arith.constant") && d->attr("value") && d->attr("value")->isBool() && d->attr("value")->asBool();
}

bool usesAny(const Operation& op, const std::vector<const Value*>& vs) {
  bool hit = false;
  op.walk([&](const Operation& inner) {
    for (const Value* v : inner.operands())
      for (const Value* w : vs) hit |= v == w;
  });
  return hit;
}

// The K step's ops from the body's start; false unless they are the wait, the fence, constants,
// descriptors and marked wgmmas, and the commit.
bool matchStep(Block& body, KLoop& k, Block::iterator& it) {
  Value *s = body.argument(unsigned(k.n + 1)), *ph = body.argument(unsigned(k.n + 2));
  auto end = body.operations().end();
  // Block scales: pure ops that read no carried value but %kt, then kern.promote_scales; a
  // kern.ld_shared may read the step's stage %s (scale_b's row copied with the stage).
  std::vector<const Value*> carried;
  for (size_t i = 1; i < body.numArguments(); ++i)
    if (body.argument(unsigned(i)) != s) carried.push_back(body.argument(unsigned(i)));
  for (; it != end && !(*it)->is("kern.mbarrier_wait") && !k.scales; ++it) {
    Operation* op = it->get();
    bool pure = op->info() && op->info()->has(ir::kPure) && op->numRegions() == 0;
    if (op->is("kern.promote_scales") && op->numOperands() == k.n) k.scales = op;
    else if (!pure) return false;
    if (usesAny(*op, carried)) return false;
    if (usesAny(*op, {s}) && !(op->is("kern.ld_shared") && op->operand(1) == s)) return false;
    if (usesAny(*op, {s})) k.stageReads = true;
    k.prologue.push_back(op);
  }
  if (!k.prologue.empty() && !k.scales) return false;
  if (it == end || !(*it)->is("kern.mbarrier_wait") || (*it)->numOperands() != 3 || (*it)->operand(1) != s ||
      (*it)->operand(2) != ph)
    return false;
  k.step.push_back((it++)->get());
  if (it == end || !(*it)->is("kern.wgmma_fence")) return false;
  k.step.push_back((it++)->get());
  for (; it != end && !(*it)->is("kern.wgmma_commit"); ++it) {
    Operation* op = it->get();
    if (op->is("kern.wgmma")) {
      if (!op->attr("accumulate") || !isTrue(op->operand(0))) return false;
      if (k.mode.empty()) k.mode = op->stringAttr("accumulate");
      if (op->stringAttr("accumulate") != k.mode) return false;
    } else if (!op->is("arith.constant") && !op->is("kern.wgmma_desc")) {
      return false;
    }
    k.step.push_back(op);
  }
  if (it == end || k.mode.empty()) return false;
  k.step.push_back((it++)->get());
  return true;
}

// Every carried accumulator starts one chain of the step's wgmmas (each result used once, by the
// next wgmma of its chain or the yield), and the yield ends each chain at its own position.
bool chainsClose(const KLoop& k, const Operation& yield) {
  Block& body = k.loop->body();
  for (size_t i = 0; i < k.n; ++i) {
    Value* v = body.argument(unsigned(1 + i));
    for (;;) {
      if (v->uses().size() != 1) return false;
      Operation* user = v->uses().front().user;
      if (user == &yield) {
        if (v->uses().front().operandIndex != i) return false;
        break;
      }
      if (!user->is("kern.wgmma") || user->parentBlock() != &body) return false;
      unsigned idx = v->uses().front().operandIndex;
      if (idx < 3) return false;
      v = user->result(idx - 3);
    }
  }
  return true;
}

// The rest of the body after the step: wait 1, the guarded release of prev, the ring arithmetic,
// the yield.
bool matchRest(Block& body, KLoop& k, Block::iterator it) {
  auto end = body.operations().end();
  Value *kt = body.argument(0), *s = body.argument(unsigned(k.n + 1)), *prev = body.argument(unsigned(k.n + 3));
  if (it == end || !(*it)->is("kern.wgmma_wait") || (*it)->intAttr("pending", -1) != 1) return false;
  k.wait1 = (it++)->get();
  if (it == end || !(*it)->is("arith.cmpi") || (*it)->stringAttr("pred") != "sgt" || (*it)->operand(0) != kt ||
      !isConstant((*it)->operand(1), 0))
    return false;
  Value* positive = (it++)->get()->result();
  if (it == end || !(*it)->is("arith.andi") || (*it)->operand(0) != positive) return false;
  Value* cond = (*it)->result();
  k.lane0 = (it++)->get()->operand(1);
  if (it == end || !(*it)->is("scf.if") || (*it)->operand(0) != cond || (*it)->numResults() != 0) return false;
  k.release = (it++)->get();
  std::vector<const Value*> carried;
  for (size_t i = 0; i + 1 < body.numArguments(); ++i) carried.push_back(body.argument(unsigned(i)));
  if (usesAny(*k.release, carried) || !usesAny(*k.release, {prev}) || k.release->body(1).operations().size() != 1)
    return false;
  for (; it != end && !(*it)->is("scf.yield"); ++it) {
    Operation* op = it->get();
    if (!op->info() || !op->info()->has(ir::kPure) || op->numRegions() != 0 || usesAny(*op, {kt, prev})) return false;
    for (size_t i = 0; i < k.n; ++i)
      if (usesAny(*op, {body.argument(unsigned(1 + i))})) return false;
    k.next.push_back(op);
  }
  if (it == end) return false;
  Operation& yield = **it;
  if (yield.numOperands() != k.n + 3 || yield.operand(unsigned(k.n + 2)) != s) return false;
  for (unsigned i : {unsigned(k.n), unsigned(k.n + 1)})
    if (std::find(k.next.begin(), k.next.end(), yield.operand(i)->definingOp()) == k.next.end()) return false;
  return chainsClose(k, yield);
}

// After the loop: a wait of 0, then scf.if lane0 whose only uses of the last stage release it.
bool matchAfter(KLoop& k) {
  Operation& loop = *k.loop;
  const size_t n = k.n;
  if (loop.result(unsigned(n))->hasUses() || loop.result(unsigned(n + 1))->hasUses()) return false;
  Block& parent = *loop.parentBlock();
  auto it = std::next(parent.find(&loop));
  if (it == parent.operations().end() || !(*it)->is("kern.wgmma_wait") || (*it)->intAttr("pending", -1) != 0)
    return false;
  ++it;
  if (it == parent.operations().end() || !(*it)->is("scf.if") || (*it)->operand(0) != k.lane0) return false;
  k.tail = it->get();
  for (const ir::Use& u : loop.result(unsigned(n + 2))->uses()) {
    if (u.user->parentBlock() != &k.tail->body(0) ||
        !(u.user->is("kern.mbarrier_arrive") || u.user->is("kern.mbarrier_arrive_remote")))
      return false;
  }
  return true;
}

bool isStageRead(const Operation& op, const Value* stage) {
  return op.is("kern.ld_shared") && op.operand(1) == stage;
}

// A kern.smem_offset that a read of the step's stage takes as its offset.
bool addressesStageRead(const Operation& op, const Value* stage) {
  if (!op.is("kern.smem_offset")) return false;
  for (const ir::Use& u : op.result()->uses())
    if (isStageRead(*u.user, stage) && u.user->operand(2) == op.result()) return true;
  return false;
}

// Block scales: the prologue's products (arith.mulf, and what reads a product: a select between
// two), made after the step's sums are waited for; the ops that read %kt (the loads and their
// addresses); and the values of the latter the products read: what a loop carries to load scales
// an iteration ahead. None carried unless every load of the prologue is kern.ld_global(ptr, pred),
// whose predicate can switch it off past the K range.
void classifyScales(KLoop& k) {
  std::set<const Value*> fromKt = {k.loop->body().argument(0)}, fromProducts;
  const Value* stage = k.loop->body().argument(unsigned(k.n + 1));
  bool carryable = true;
  for (Operation* op : k.prologue) {
    if (op == k.scales) continue;
    // A read of the step's stage goes with the products: after the stage's wait, before its release,
    // and so does a kern.smem_offset it reads (the verifier wants its offset straight from one: a
    // block scale's element of its box, which reads %kt).
    bool product = op->is("arith.mulf") || isStageRead(*op, stage) || addressesStageRead(*op, stage), kt = false;
    for (const Value* v : op->operands()) {
      product |= fromProducts.count(v) > 0;
      kt |= fromKt.count(v) > 0;
    }
    if (product) k.products.insert(op);
    if (kt && !product) k.ktDependent.insert(op);
    for (unsigned i = 0; i < op->numResults() && (product || kt); ++i)
      (product ? fromProducts : fromKt).insert(op->result(i));
    const bool load = op->name().rfind("kern.ld", 0) == 0;
    carryable &= !load || product || (op->is("kern.ld_global") && op->numOperands() == 2);
  }
  if (!carryable) return;
  for (Operation* op : k.prologue) {
    if (!k.products.count(op) && op != k.scales) continue;
    for (Value* v : op->operands())
      if (k.ktDependent.count(v->definingOp()) && std::find(k.loaded.begin(), k.loaded.end(), v) == k.loaded.end())
        k.loaded.push_back(v);
  }
}

}  // namespace

std::optional<KLoop> match(Operation& loop) {
  if (!loop.is("scf.for") || loop.numRegions() != 1 || loop.numOperands() < 7) return std::nullopt;
  KLoop k;
  k.loop = &loop;
  k.n = loop.numOperands() - 6;
  Block& body = loop.body();
  if (body.numArguments() != k.n + 4 || loop.numResults() != k.n + 3 || !isConstant(loop.operand(0), 0) ||
      !isConstant(loop.operand(2), 1))
    return std::nullopt;
  for (size_t i = 0; i < k.n; ++i) {
    const Operation* init = loop.operand(unsigned(3 + i))->definingOp();
    if (init && init->is("kern.undef")) return std::nullopt;
  }
  auto it = body.operations().begin();
  if (!matchStep(body, k, it) || !matchRest(body, k, it) || !matchAfter(k)) return std::nullopt;
  classifyScales(k);
  return k;
}

// The loops with marked wgmmas directly in their body.
std::vector<Operation*> markedLoops(ir::Module& m) {
  std::vector<Operation*> loops;
  m.op().walk([&](Operation& op) {
    if (!op.is("kern.wgmma") || !op.attr("accumulate")) return;
    Operation* loop = op.parentOp();
    if (loop && loop->is("scf.for") && (loops.empty() || loops.back() != loop)) loops.push_back(loop);
  });
  return loops;
}

}  // namespace kiln::sm90::promote
