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
// stage, the products (arith.mulf, and a select between two) once its sums are waited for, so only the loaded scales live
// across the wgmmas; and it adds its sums as %acc = fma(sums, %f, %acc): the slice's partial sums
// scaled once, in f32. A kern.ld_shared of the step's stage %s (per-column scale_b copied with the
// stage, slice_scales.cpp) goes with the products: after the stage's wait, before its release.
//
// Scales a loop iteration ahead: where the loaded values a step's products read are few (at most
// kPrefetchedScales over an iteration's steps: 1x128 x 128x128, 3 or 4 a
// step), a promoted loop (not the tail of pairs, which runs at most once) carries them: the loads
// of its first iteration's steps go before it, and each iteration, once a step's products are made,
// loads the scales of that step one iteration later, kt + steps, predicated off past %ksteps (no
// read outside the unit's K range). A global load's latency (an L2 hit under the kernel's own
// traffic takes about as long as a K step's wgmmas) then runs under a whole iteration's wgmmas
// instead of between the step's issue and its products:
//
//     %sc0 = LOADS(first)                              (valid: first < %ksteps)
//     scf.for %kt ... iter_args(%acc.., %s, %ph, %sc = %sc0) {
//       STEP(%s, %ph)  kern.wgmma_wait {pending = 0}
//       %f = PRODUCTS(%sc)  %sc' = LOADS(first + kt + 1)  %acc = fma(sums, %f, %acc)  RELEASE
//       scf.yield %acc.., %s', %ph', %sc'
//     }
//
// Factors under the wgmmas: where a step's scales all come from its stage (kern.ld_shared of %s,
// no global load) and its distinct factors are few (kEarlyFactors), the reads and products are
// made right after the step's commit, before its wait: the stage has landed (the step waited for
// it), and only the factors, not the loaded scales, live across the wgmmas. What is left after the
// wait is the FFMAs and the release:
//
//     STEP(%s, %ph)  %f = READS+PRODUCTS(%s)  kern.wgmma_wait {pending = 0}  %acc = fma(sums, %f, %acc)  RELEASE
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
#include "schedule/sm90/promote_fp8_match.h"

namespace kiln::sm90 {
namespace {

using ir::Block;
using ir::Operation;
using ir::Value;
using promote::KLoop;

// The most loaded scale values a promoted loop carries into its next iteration (over its steps): a
// few registers. Per-column scale_b (1x128 x 1x128: 2 per n8 group, 40 or more) keeps loading in the step.
constexpr size_t kPrefetchedScales = 8;
// The most distinct factors a step makes under its own wgmmas (before its wait): 1x128 x 128x128
// makes 10 (128x160: 2 rows x 5 chunks of 32 columns) or 2-4; 1x128 x 1x128's 80 wait for the sums.
constexpr size_t kEarlyFactors = 16;

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
      r = loopOf(pairs, 2, acc, s, ph, k_.scales ? b_.i32(0) : nullptr, true);
      acc.assign(r.begin(), r.begin() + long(k_.n));
      r = loopOf(b_.rem(ksteps, b_.i32(2)), 1, acc, r[k_.n], r[k_.n + 1], k_.scales ? b_.mulConst(pairs, 2) : nullptr,
                 false);
    } else {
      r = loopOf(ksteps, 1, acc, s, ph, k_.scales ? b_.i32(0) : nullptr, true);
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
  // Block scales: its iteration i runs the fast loop's K steps first + steps i + j, their scales
  // loaded an iteration ahead where `ahead` and they are few.
  std::vector<Value*> loopOf(Value* count, int steps, const std::vector<Value*>& accIn, Value* s, Value* ph,
                             Value* first, bool ahead) {
    const size_t nl = k_.loaded.size();
    // Factors made under the wgmmas need nothing carried; otherwise the loads go an iteration ahead.
    const bool factorsEarly = first && fewStageFactors();
    ahead = ahead && first && !factorsEarly && nl > 0 && nl * size_t(steps) <= kPrefetchedScales;
    std::vector<Value*> carried;
    for (int i = 0; ahead && i < steps; ++i) {
      std::vector<Value*> l = loadScales(b_.addConst(first, i));
      carried.insert(carried.end(), l.begin(), l.end());
    }
    std::vector<Value*> operands = {b_.i32(0), count, b_.i32(1)};
    step_ = operands[2];
    operands.insert(operands.end(), accIn.begin(), accIn.end());
    operands.push_back(s);
    operands.push_back(ph);
    operands.insert(operands.end(), carried.begin(), carried.end());
    std::vector<ir::Type> types(accIn.size(), ir::types::f32());
    types.push_back(ir::types::i32());
    types.push_back(ir::types::i32());
    for (Value* v : carried) types.push_back(v->type());
    Operation* loop = b_.create("scf.for", operands, types, {}, 1);
    Block* body = loop->region(0).addBlock();
    Value* iv = body->addArgument(ir::types::i32(), "kt");  // the ring position is carried; scales read it
    std::vector<Value*> acc;
    for (size_t i = 0; i < accIn.size(); ++i) acc.push_back(body->addArgument(ir::types::f32(), "acc"));
    s = body->addArgument(ir::types::i32(), "s");
    ph = body->addArgument(ir::types::i32(), "ph");
    for (Value*& v : carried) v = body->addArgument(v->type(), "sc");
    ir::InsertionGuard guard(b_);
    b_.setInsertionPointToEnd(body);
    std::vector<std::vector<Value*>> sums;
    std::vector<std::unordered_map<const Value*, Value*>> scaleMaps(static_cast<size_t>(steps));
    std::vector<std::vector<Value*>> early(static_cast<size_t>(steps));
    std::vector<Value*> stages, next;
    for (int i = 0; i < steps; ++i) {
      if (first && !ahead) scaleMaps[size_t(i)] = stepScales(b_.addConst(b_.add(first, b_.mulConst(iv, steps)), i));
      sums.push_back(issueStep(s, ph));
      stages.push_back(s);
      if (factorsEarly) {  // under the step's wgmmas: its stage has landed, its sums are not read
        scaleMaps[size_t(i)][k_.loop->body().argument(unsigned(k_.n + 1))] = s;
        early[size_t(i)] = stepFactors(scaleMaps[size_t(i)]);
      }
      std::tie(s, ph) = nextPosition(s, ph);
    }
    for (int i = 0; i < steps; ++i) {
      b_.setLoc(k_.wait1->loc());
      b_.create("kern.wgmma_wait", {}, {}, {{"pending", int64_t(steps - 1 - i)}});
      if (ahead) {  // the step's products from the carried scales, then the loads of its next turn
        scaleMaps[size_t(i)] = carriedScales({carried.begin() + long(nl) * i, carried.begin() + long(nl) * (i + 1)});
      }
      // A product reading the stage (scale_b's row copied with it) reads this step's.
      if (first) scaleMaps[size_t(i)][k_.loop->body().argument(unsigned(k_.n + 1))] = stages[size_t(i)];
      std::vector<Value*> factors = factorsEarly ? early[size_t(i)]
                                    : first      ? stepFactors(scaleMaps[size_t(i)])
                                                 : std::vector<Value*>{};
      if (ahead) {
        std::vector<Value*> l = loadScales(b_.addConst(b_.add(first, b_.mulConst(iv, steps)), steps + i));
        next.insert(next.end(), l.begin(), l.end());
      }
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
    yields.insert(yields.end(), next.begin(), next.end());
    b_.create("scf.yield", yields, {});
    std::vector<Value*> out;
    for (unsigned i = 0; i < loop->numResults(); ++i) out.push_back(loop->result(i));
    return out;
  }

  // Whether a step's factors can be made under its wgmmas: its scales all come from its stage
  // (no global load: nothing in flight at the next fence; integer arithmetic of %kt, as a block
  // scale's element of its 16-byte box, is made again for each step, not carried) and its distinct
  // factors are few (kEarlyFactors registers live across the wgmmas; 1x128 x 1x128's 80 a step
  // would spill).
  bool fewStageFactors() const {
    if (!k_.stageReads) return false;
    for (const Operation* op : k_.prologue)
      if (op->is("kern.ld_global")) return false;
    std::set<const Value*> distinct(k_.scales->operands().begin(), k_.scales->operands().end());
    return distinct.size() <= kEarlyFactors;
  }

  // The fast loop's scale computation for K step `kt`, but its products: the loads, issued before
  // the step's wait for its stage. Its value map, for stepFactors.
  std::unordered_map<const Value*, Value*> stepScales(Value* kt) {
    std::unordered_map<const Value*, Value*> map = {{k_.loop->body().argument(0), kt}};
    b_.setLoc(k_.scales->loc());
    for (Operation* op : k_.prologue)
      if (op != k_.scales && !k_.products.count(op)) copy(*op, map);
    return map;
  }

  // The loads of K step `kt` a loop carries: the prologue but its products, each kern.ld_global
  // predicated off unless kt < %ksteps. The loaded values, in k_.loaded's order.
  std::vector<Value*> loadScales(Value* kt) {
    std::unordered_map<const Value*, Value*> map = {{k_.loop->body().argument(0), kt}};
    b_.setLoc(k_.scales->loc());
    Value* inRange = b_.cmp("slt", kt, k_.loop->operand(1));
    for (Operation* op : k_.prologue) {
      if (op == k_.scales || k_.products.count(op) || !feedsLoads(*op)) continue;
      Value* on = nullptr;
      if (op->is("kern.ld_global")) {
        Value* pred = op->operand(1);
        on = b_.andi(map.count(pred) ? map.at(pred) : pred, inRange);
      }
      Operation* c = copy(*op, map);
      if (on) c->setOperand(1, on);
    }
    std::vector<Value*> out;
    for (Value* v : k_.loaded) out.push_back(map.at(v));
    return out;
  }

  // Whether a non-product op of the prologue is needed by its loads: it reads %kt, or a constant,
  // or an op other than a product reads it (a per-column load's in-bounds test), where an op read
  // by products alone (which block a column is in) is made again with them, not carried.
  bool feedsLoads(const Operation& op) const {
    if (k_.ktDependent.count(&op) || op.is("arith.constant")) return true;
    for (unsigned i = 0; i < op.numResults(); ++i)
      for (const ir::Use& u : op.result(i)->uses())
        if (u.user != k_.scales && !k_.products.count(u.user)) return true;
    return false;
  }

  // A value map for stepFactors from a step's carried scales, and the prologue's ops that read
  // neither %kt nor a product (constants; which scale_b block a column is in) made again here.
  std::unordered_map<const Value*, Value*> carriedScales(const std::vector<Value*>& sc) {
    std::unordered_map<const Value*, Value*> map;
    for (size_t i = 0; i < sc.size(); ++i) map[k_.loaded[i]] = sc[i];
    for (Operation* op : k_.prologue)
      if (op != k_.scales && !k_.products.count(op) && !k_.ktDependent.count(op)) copy(*op, map);
    return map;
  }

  // The products of the step's scales (after its wgmmas, where the sums are added, so that only the
  // loaded scales live across them): its factors, one per accumulator.
  std::vector<Value*> stepFactors(std::unordered_map<const Value*, Value*>& map) {
    b_.setLoc(k_.scales->loc());
    for (Operation* op : k_.prologue)
      if (k_.products.count(op)) copy(*op, map);
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
  for (Operation* loop : promote::markedLoops(m))
    if (auto k = promote::match(*loop)) Rewrite(*k).run();
  return true;
}

}  // namespace kiln::sm90
