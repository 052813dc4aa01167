// sm90-promote-fp8: FP8 promotion (fp8_accum=promote | promote_pairs; docs/sm90-strategy.md, "FP8").
// The lowering writes the consumer's K loop as for fast accumulation, its wgmmas marked with the
// program's numerics; this pass makes each K step's FP8 wgmmas sum from zero (scale_d = false) into
// fresh registers and adds those sums to the f32 accumulators once their group is waited for, so
// the tensor cores never sum more than one step's products in their narrow accumulator.
//
//   Before (k_loop.cpp):
//     %r:n+3 = scf.for %kt = 0 to %ksteps step 1 iter_args(%acc.. = init, %s = %stage0, %ph = %phase0, %prev = 0) {
//       kern.mbarrier_wait(%full, %s, %ph)  kern.wgmma_fence
//       %d.. = kern.wgmma(%true, %da, %db, %acc..) {..., accumulate = "promote_pairs"}  ...
//       kern.wgmma_commit  kern.wgmma_wait {pending = 1}
//       scf.if (%kt > 0 && %lane0) { RELEASE(%prev) }
//       NEXT: %s1, %ph1 = the ring position after %s, %ph
//       scf.yield %d.., %s1, %ph1, %s
//     }
//     kern.wgmma_wait {pending = 0}
//     scf.if %lane0 { RELEASE(%r#last) REST }
//   After (promote_pairs; promote: only the second loop, over every K step):
//     %p = scf.for %kt = 0 to %ksteps / 2 step 1 iter_args(%acc.., %s, %ph) {
//       STEP(%s, %ph) from kern.undef sums, the first wgmma of each chain with scale_d = false
//       %s', %ph' = NEXT(%s, %ph)   STEP(%s', %ph')   %s'', %ph'' = NEXT(%s', %ph')
//       kern.wgmma_wait {pending = 1}  %acc = %acc + sums  scf.if %lane0 { RELEASE(%s) }
//       kern.wgmma_wait {pending = 0}  %acc = %acc + sums' scf.if %lane0 { RELEASE(%s') }
//       scf.yield %acc.., %s'', %ph''
//     }
//     %q = the same loop of single steps, %ksteps % 2 times, from %p
//     kern.wgmma_wait {pending = 0}
//     scf.if %lane0 { REST }                          (every stage went back in its own step)
//
// Block scales (tile.dot_scaled): the lowering starts the fast loop's body with the step's scale
// computation, pure ops of %kt and values from outside the loop, ending in kern.promote_scales(%f..)
// (one factor per accumulator). Each promoted step gets a copy of them for its own K step (2 kt,
// 2 kt + 1 in a pair, 2 (ksteps / 2) + kt in the tail): the loads issued before its wait for the
// stage, the products (arith.mulf) once its sums are waited for, so only the loaded scales live
// across the wgmmas; and it adds its sums as %acc = fma(sums, %f, %acc): the slice's partial sums
// scaled once, in f32.
//
// Every read of a step's sums waits for its group inside the same iteration: ptxas does not follow
// wgmma.wait_group across a back edge, and a pipeline that carries a step in flight into the next
// iteration gets every wgmma of the kernel serialized (C7514); issuing deeper than pairs within an
// iteration measured 1-5% slower (docs/history/2026-11-30.md, 4a6edc0).
//
// Legal only when the loop has exactly the shape above: one full-barrier wait at the carried
// (stage, phase), a fence, then only constants, descriptors and wgmmas that all carry the same
// {accumulate} and scale_d = true, each carried accumulator the start of one chain of them whose
// end the loop yields, one commit, a wait of 1, the release of %prev guarded by %kt > 0 && %lane0,
// pure ring arithmetic that yields the next position and %s as %prev; its accumulators start at a
// value (not kern.undef: a promoted sum adds to them); and after it a wait of 0, then an scf.if on
// the same %lane0 whose only uses of the loop's last stage are its release. Any other loop is left
// as it is, and the PTX emitter refuses a wgmma that still carries {accumulate}: the program asked
// for f32 sums, so they never silently become the fast form. Loops without {accumulate} (BF16,
// FP8 fast accumulation) are left untouched, and so is everything around a rewritten loop but the
// release of its last stage.
//
// The rewrite writes its ops where the lowering's builder wrote them before it was a pass, with the
// constants that builder shared (KernBuilder::adoptVisibleConstants), so the PTX is byte-identical;
// it runs right after the lowering, before other passes add constants of their own.
#include <algorithm>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "dialects/kern/kern_builder.h"
#include "kiln/ir/op_registry.h"
#include "schedule/sm90/passes.h"

namespace kiln::sm90 {
namespace {

using ir::Block;
using ir::Operation;
using ir::Value;

// The fast K loop, taken apart.
struct KLoop {
  Operation* loop = nullptr;
  size_t n = 0;                         // carried accumulators
  std::vector<Operation*> step;         // the K step: the full-barrier wait .. the commit
  Operation* wait1 = nullptr;           // kern.wgmma_wait {pending = 1}
  Operation* release = nullptr;         // scf.if (kt > 0 && lane0) { RELEASE(prev) }
  Value* lane0 = nullptr;
  std::vector<Operation*> next;         // the next ring position's arithmetic
  Operation* tail = nullptr;            // scf.if lane0 { RELEASE(last) REST } after the loop
  std::string mode;                     // "promote" | "promote_pairs"
  std::vector<Operation*> prologue;     // block scales: the ops before the wait, ending in ...
  Operation* scales = nullptr;          // ... kern.promote_scales (null: plain promotion)
};

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
  // Block scales: pure ops that read no carried value but %kt, then kern.promote_scales.
  std::vector<const Value*> carried;
  for (size_t i = 1; i < body.numArguments(); ++i) carried.push_back(body.argument(unsigned(i)));
  for (; it != end && !(*it)->is("kern.mbarrier_wait") && !k.scales; ++it) {
    Operation* op = it->get();
    bool pure = op->info() && op->info()->has(ir::kPure) && op->numRegions() == 0;
    if (op->is("kern.promote_scales") && op->numOperands() == k.n) k.scales = op;
    else if (!pure) return false;
    if (usesAny(*op, carried)) return false;
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

// Writes the promoted loops in place of one fast K loop.
class Rewrite {
 public:
  explicit Rewrite(const KLoop& k) : k_(k) {}

  void run() {
    Operation& fast = *k_.loop;
    Block& parent = *fast.parentBlock();
    // The lowering made its loop's step, 1, just before the loop when nothing before needed a 1;
    // the promoted form makes its trip count first, so such a constant is made again after it.
    Operation* step = fast.operand(2)->definingOp();
    auto before = parent.find(&fast);
    const bool remakeStep = before != parent.operations().begin() && std::prev(before)->get() == step;
    b_.setInsertionPoint(remakeStep ? step : &fast);
    b_.setLoc(fast.loc());
    b_.adoptVisibleConstants();
    Value* ksteps = fast.operand(1);
    std::vector<Value*> acc(fast.operands().begin() + 3, fast.operands().begin() + 3 + long(k_.n));
    Value *s = fast.operand(unsigned(3 + k_.n)), *ph = fast.operand(unsigned(4 + k_.n));
    std::vector<Value*> r;
    if (k_.mode == "promote_pairs") {
      Value* pairs = b_.div(ksteps, b_.i32(2));
      r = loopOf(pairs, 2, acc, s, ph, k_.scales ? b_.i32(0) : nullptr);
      acc.assign(r.begin(), r.begin() + long(k_.n));
      r = loopOf(b_.rem(ksteps, b_.i32(2)), 1, acc, r[k_.n], r[k_.n + 1], k_.scales ? b_.mulConst(pairs, 2) : nullptr);
    } else {
      r = loopOf(ksteps, 1, acc, s, ph, k_.scales ? b_.i32(0) : nullptr);
    }
    for (size_t i = 0; i < k_.n; ++i) {
      r[i]->setNameHint(fast.result(unsigned(i))->nameHint());
      fast.result(unsigned(i))->replaceAllUsesWith(r[i]);
    }
    dropLastRelease();
    fast.erase();
    if (remakeStep) {
      step_->setNameHint(step->result()->nameHint());
      step->result()->replaceAllUsesWith(step_);
      step->erase();
    }
  }

 private:
  // A loop of `count` iterations of `steps` K steps each, from ring position (s, ph); its results.
  // Block scales: its iteration i runs the fast loop's K steps first + steps i + j.
  std::vector<Value*> loopOf(Value* count, int steps, const std::vector<Value*>& accIn, Value* s, Value* ph,
                             Value* first) {
    std::vector<Value*> operands = {b_.i32(0), count, b_.i32(1)};
    step_ = operands[2];
    operands.insert(operands.end(), accIn.begin(), accIn.end());
    operands.push_back(s);
    operands.push_back(ph);
    std::vector<ir::Type> types(accIn.size(), ir::types::f32());
    types.push_back(ir::types::i32());
    types.push_back(ir::types::i32());
    Operation* loop = b_.create("scf.for", operands, types, {}, 1);
    Block* body = loop->region(0).addBlock();
    Value* iv = body->addArgument(ir::types::i32(), "kt");  // the ring position is carried; scales read it
    std::vector<Value*> acc;
    for (size_t i = 0; i < accIn.size(); ++i) acc.push_back(body->addArgument(ir::types::f32(), "acc"));
    s = body->addArgument(ir::types::i32(), "s");
    ph = body->addArgument(ir::types::i32(), "ph");
    ir::InsertionGuard guard(b_);
    b_.setInsertionPointToEnd(body);
    std::vector<std::vector<Value*>> sums;
    std::vector<std::unordered_map<const Value*, Value*>> scaleMaps(static_cast<size_t>(steps));
    std::vector<Value*> stages;
    for (int i = 0; i < steps; ++i) {
      if (first) scaleMaps[size_t(i)] = stepScales(b_.addConst(b_.add(first, b_.mulConst(iv, steps)), i));
      sums.push_back(issueStep(s, ph));
      stages.push_back(s);
      std::tie(s, ph) = nextPosition(s, ph);
    }
    for (int i = 0; i < steps; ++i) {
      b_.setLoc(k_.wait1->loc());
      b_.create("kern.wgmma_wait", {}, {}, {{"pending", int64_t(steps - 1 - i)}});
      std::vector<Value*> factors = first ? stepFactors(scaleMaps[size_t(i)]) : std::vector<Value*>{};
      for (size_t j = 0; j < acc.size(); ++j) {
        Value* sum = sums[size_t(i)][j];
        acc[j] = b_.named(first ? b_.op1("arith.fmaf", {sum, factors[j], acc[j]}, ir::types::f32())
                                : b_.fbin("arith.addf", acc[j], sum),
                          "acc");
      }
      release(stages[size_t(i)]);
    }
    std::vector<Value*> yields = acc;
    yields.push_back(s);
    yields.push_back(ph);
    b_.create("scf.yield", yields, {});
    std::vector<Value*> out;
    for (unsigned i = 0; i < loop->numResults(); ++i) out.push_back(loop->result(i));
    return out;
  }

  // The fast loop's scale computation for K step `kt`, but its products: the loads, issued before
  // the step's wait for its stage. Its value map, for stepFactors.
  std::unordered_map<const Value*, Value*> stepScales(Value* kt) {
    std::unordered_map<const Value*, Value*> map = {{k_.loop->body().argument(0), kt}};
    b_.setLoc(k_.scales->loc());
    for (Operation* op : k_.prologue)
      if (op != k_.scales && !op->is("arith.mulf")) copy(*op, map);
    return map;
  }

  // The products of the step's scales (after its wgmmas, where the sums are added, so that only the
  // loaded scales live across them): its factors, one per accumulator.
  std::vector<Value*> stepFactors(std::unordered_map<const Value*, Value*>& map) {
    b_.setLoc(k_.scales->loc());
    for (Operation* op : k_.prologue)
      if (op->is("arith.mulf")) copy(*op, map);
    std::vector<Value*> f;
    for (Value* v : k_.scales->operands()) f.push_back(map.count(v) ? map.at(v) : v);
    return f;
  }

  // One K step at (s, ph) into fresh sums: the fast step's ops, its wgmmas unmarked, each chain's
  // first from kern.undef with scale_d = false. The sums.
  std::vector<Value*> issueStep(Value* s, Value* ph) {
    Block& fastBody = k_.loop->body();
    std::unordered_map<const Value*, Value*> map = {{fastBody.argument(unsigned(k_.n + 1)), s},
                                                    {fastBody.argument(unsigned(k_.n + 2)), ph}};
    // A constant of the block scales' ops that the step uses too is the builder's here as well.
    for (Operation* op : k_.prologue)
      if (op->is("arith.constant")) map[op->result()] = b_.constant(op->result()->type(), *op->attr("value"));
    // The wait and the fence, then (as the lowering's issueKStep made them) true, false, the sums.
    copy(*k_.step[0], map);
    copy(*k_.step[1], map);
    b_.setLoc(k_.step[2]->loc());
    b_.i1(true);
    Value* off = b_.i1(false);
    for (size_t i = 0; i < k_.n; ++i) map[fastBody.argument(unsigned(1 + i))] = b_.op1("kern.undef", {}, ir::types::f32());
    for (size_t i = 2; i < k_.step.size(); ++i) {
      const Operation& op = *k_.step[i];
      Operation* c = copy(op, map);
      if (!c || !c->is("kern.wgmma")) continue;
      c->removeAttr("accumulate");
      if (!op.operand(3)->definingOp()) c->setOperand(0, off);  // a chain's first: its sums start here
    }
    // The sums: what the fast loop yields as its accumulators.
    const Operation& yield = *fastBody.back();
    std::vector<Value*> sums;
    for (size_t i = 0; i < k_.n; ++i) sums.push_back(map.at(yield.operand(unsigned(i))));
    return sums;
  }

  // The ring position after (s, ph): the fast loop's arithmetic.
  std::pair<Value*, Value*> nextPosition(Value* s, Value* ph) {
    Block& fastBody = k_.loop->body();
    std::unordered_map<const Value*, Value*> map = {{fastBody.argument(unsigned(k_.n + 1)), s},
                                                    {fastBody.argument(unsigned(k_.n + 2)), ph}};
    for (Operation* op : k_.next) copy(*op, map);
    const Operation& yield = *fastBody.back();
    return {map.at(yield.operand(unsigned(k_.n))), map.at(yield.operand(unsigned(k_.n + 1)))};
  }

  // scf.if lane0 { RELEASE(stage) }: the fast loop's release of prev.
  void release(Value* stage) {
    b_.setLoc(k_.release->loc());
    std::unordered_map<const Value*, Value*> map = {{k_.loop->body().argument(unsigned(k_.n + 3)), stage}};
    b_.ifThen(k_.lane0, [&] {
      for (const auto& op : k_.release->body(0).operations())
        if (!op->is("scf.yield")) copy(*op, map);
    });
  }

  // `op` at the insertion point with its operands mapped; a constant is the builder's (shared as
  // the lowering's builder shared it). The copy, or nullptr for a constant.
  Operation* copy(const Operation& op, std::unordered_map<const Value*, Value*>& map) {
    if (op.is("arith.constant")) {
      map[op.result()] = b_.constant(op.result()->type(), *op.attr("value"));
      return nullptr;
    }
    return b_.insert(ir::cloneOp(op, map));
  }

  // The tail's release of the last stage goes (every stage went back in its own step), with the
  // peer ranks and constants its remote arrivals alone used.
  void dropLastRelease() {
    Block& tail = k_.tail->body(0);
    std::set<const Operation*> doomed;
    for (const ir::Use& u : k_.loop->result(unsigned(k_.n + 2))->uses()) doomed.insert(u.user);
    std::vector<Operation*> order;
    for (auto it = tail.operations().rbegin(); it != tail.operations().rend(); ++it) {
      Operation* op = it->get();
      bool feedsOnlyDoomed = op->numResults() == 1 && op->info() && op->info()->has(ir::kPure) && op->result()->hasUses();
      for (const ir::Use& u : feedsOnlyDoomed ? op->result()->uses() : std::vector<ir::Use>{})
        feedsOnlyDoomed &= doomed.count(u.user) > 0;
      if (feedsOnlyDoomed) doomed.insert(op);
      if (doomed.count(op)) order.push_back(op);
    }
    for (Operation* op : order) op->erase();  // users before the values they use
  }

  const KLoop& k_;
  KernBuilder b_;
  Value* step_ = nullptr;  // the promoted loops' step, 1
};
}  // namespace

bool promoteFp8Pass(ir::Module& m, ir::DiagnosticEngine&) {
  for (Operation* loop : markedLoops(m))
    if (auto k = match(*loop)) Rewrite(*k).run();
  return true;
}

}  // namespace kiln::sm90
