// fp8_accum=promote and promote_pairs (docs/sm90-strategy.md, "FP8"): the consumer's K loop in
// which each K step's FP8 wgmmas sum from zero (scale_d = false), and those sums are added to f32
// accumulators once their group is waited for. The tensor cores then never sum more than one
// step's 128 products in their narrow accumulator.
//
// promote, one step at a time (the tensor cores idle while the sums are added):
//   for kt in 0 .. ksteps-1:  sums = wgmma(step); wait(0); acc += sums; release(its stage)
//
// promote_pairs, a pipeline two steps deep that drains once per tile:
//   if ksteps is odd:  sums = wgmma(step); wait(0); acc += sums; release       (one step, drained)
//   pend = 0
//   for kt in 0 .. ksteps/2 - 1, carrying (acc, pend, ring position, prev):
//     cur  = wgmma(step);               wait(1); acc += pend; release(pend's stage) if kt > 0
//     pend = wgmma(step) into pend;     wait(1); acc += cur;  release(cur's stage)
//   wait(0); acc += pend; release(pend's stage) if a pair ran
// While one step's sums are added, the next step's wgmmas run. The second step of a pair sums
// into pend's own registers (its old values were just added; scale_d = false ignores them), so the
// loop carries a wgmma result in flight the way the fast K loop carries its accumulators, in place:
// no in-flight result is ever copied, which ptxas would have to wait for (it then serializes every
// wgmma of the kernel, C7518). For the same reason the odd step comes first, not in a branch after
// the pairs. An empty run (a split-K slice or stream-K unit without K steps) runs no step.
#include <tuple>

#include "schedule/sm90_context.h"

namespace kiln::sm90 {
using namespace ir;

namespace {

// Where the next K step's stage is, and the stage of the step before it (to give back).
struct RingAt {
  Value *s, *ph, *prev;
};

// The consumer warpgroup's promoted K steps, as kern IR at the builder's insertion point.
class PromotedSteps {
 public:
  PromotedSteps(Plan& p, const StepOperands& at, Value* isLane0, size_t sums)
      : p_(p), b_(p.b), at_(at), isLane0_(isLane0), n_(sums) {}

  // Issues the K step at r into fresh sums; r moves on to the next step.
  std::vector<Value*> issue(RingAt& r) {
    std::vector<Value*> sums(n_);
    issueKStep(p_, at_, r.s, r.ph, off(), /*fresh=*/true, sums);
    advance(r);
    return sums;
  }
  // The same into the registers of `sums`, whose values have been used.
  void issueInto(RingAt& r, std::vector<Value*>& sums) {
    issueKStep(p_, at_, r.s, r.ph, off(), /*fresh=*/false, sums);
    advance(r);
  }

  // Waits until `pending` groups are left, then adds `sums` (of a retired group) to acc.
  void retire(int pending, std::vector<Value*>& acc, const std::vector<Value*>& sums) {
    b_.create("kern.wgmma_wait", {}, {}, {{"pending", int64_t(pending)}});
    for (size_t i = 0; i < n_; ++i) acc[i] = b_.named(b_.fbin("arith.addf", acc[i], sums[i]), "acc");
  }
  // Gives `stage` back (if `when`).
  void release(Value* stage, Value* when = nullptr) {
    b_.setLoc(p_.g.reduce->loc());
    b_.ifThen(when ? b_.andi(when, isLane0_) : isLane0_, [&] { releaseStage(p_, stage); });
  }

  // A loop of `count` iterations carrying acc, `extra` (more f32 values) and the ring position;
  // body(kt, acc, extra, ring) emits an iteration. Returns the loop's acc, extra and ring.
  using Body = std::function<void(Value* kt, std::vector<Value*>& acc, std::vector<Value*>& extra, RingAt& r)>;
  std::tuple<std::vector<Value*>, std::vector<Value*>, RingAt> loop(Value* count, std::vector<Value*> acc,
                                                                   std::vector<Value*> extra, RingAt r,
                                                                   const Body& body) {
    std::vector<Value*> forOps = {b_.i32(0), count, b_.i32(1)};
    forOps.insert(forOps.end(), acc.begin(), acc.end());
    forOps.insert(forOps.end(), extra.begin(), extra.end());
    forOps.insert(forOps.end(), {r.s, r.ph, r.prev ? r.prev : b_.i32(0)});
    std::vector<Type> types(acc.size() + extra.size(), types::f32());
    types.insert(types.end(), 3, types::i32());
    Operation* op = b_.create("scf.for", forOps, types, {}, 1);
    Block* blk = op->region(0).addBlock();
    Value* kt = blk->addArgument(types::i32(), "kt");
    std::vector<Value*> a = acc, e = extra;
    for (Value*& v : a) v = blk->addArgument(types::f32(), "acc");
    for (Value*& v : e) v = blk->addArgument(types::f32(), "pend");
    RingAt ra{blk->addArgument(types::i32(), "s"), blk->addArgument(types::i32(), "ph"),
              blk->addArgument(types::i32(), "prev")};
    {
      InsertionGuard guard(b_);
      b_.setInsertionPointToEnd(blk);
      body(kt, a, e, ra);
      std::vector<Value*> yields = a;
      yields.insert(yields.end(), e.begin(), e.end());
      yields.insert(yields.end(), {ra.s, ra.ph, ra.prev});
      b_.create("scf.yield", yields, {});
    }
    unsigned i = 0;
    for (Value*& v : acc) v = b_.named(op->result(i++), "acc");
    for (Value*& v : extra) v = op->result(i++);
    return {acc, extra, RingAt{op->result(i), op->result(i + 1), op->result(i + 2)}};
  }

  // One step, drained: issue, wait for it, add, give its stage back.
  void drainedStep(std::vector<Value*>& acc, RingAt& r) {
    std::vector<Value*> sums = issue(r);
    retire(0, acc, sums);
    release(r.prev);
  }

 private:
  // scale_d of a step's first wgmma: false, the sums start from zero.
  std::function<Value*(Value*)> off() {
    return [this](Value*) { return b_.i1(false); };
  }
  void advance(RingAt& r) {
    r.prev = r.s;
    std::tie(r.s, r.ph) = nextStage(b_, r.s, r.ph, p_.cfg.stages);
  }

  Plan& p_;
  KernBuilder& b_;
  const StepOperands& at_;
  Value* isLane0_;
  size_t n_;
};

}  // namespace

std::vector<Value*> buildPromotedKLoop(Plan& p, const StepOperands& at, Value* isLane0, const std::vector<Value*>& acc0) {
  KernBuilder& b = p.b;
  PromotedSteps steps(p, at, isLane0, acc0.size());
  // A loop of `count` iterations of `unroll` K steps each.
  auto stepsLoop = [&](Value* count, int unroll, std::vector<Value*>& acc, RingAt& ring) {
    auto body = [&](Value*, std::vector<Value*>& acc, std::vector<Value*>&, RingAt& r) {
      if (unroll == 1) return steps.drainedStep(acc, r);
      std::vector<std::vector<Value*>> sums = {steps.issue(r), {}};
      std::vector<Value*> stages = {r.prev};
      sums[1] = steps.issue(r);
      stages.push_back(r.prev);
      for (int j = 2; j < unroll; ++j) {
        std::vector<Value*>& set = sums[size_t(j % 2)];
        steps.retire(1, acc, set);
        steps.release(stages[size_t(j - 2)]);
        steps.issueInto(r, set);
        stages.push_back(r.prev);
      }
      steps.retire(1, acc, sums[size_t(unroll % 2)]);
      steps.release(stages[size_t(unroll - 2)]);
      steps.retire(0, acc, sums[size_t((unroll - 1) % 2)]);
      steps.release(stages[size_t(unroll - 1)]);
    };
    std::tie(acc, std::ignore, ring) = steps.loop(count, acc, {}, ring, body);
  };
  std::vector<Value*> acc = acc0;
  RingAt ring{p.stage0, p.phase0, nullptr};
  if (p.cfg.fp8Accum != Fp8Accum::PromotePairs) {
    stepsLoop(p.ksteps, 1, acc, ring);
    return acc;
  }
  const int unroll = getenv("KILN_EXP_UNROLL") ? atoi(getenv("KILN_EXP_UNROLL")) : 2;
  // ksteps / unroll iterations, then the rest in pairs, then a single step.
  stepsLoop(b.div(p.ksteps, b.i32(unroll)), unroll, acc, ring);
  if (unroll > 2) stepsLoop(b.div(b.rem(p.ksteps, b.i32(unroll)), b.i32(2)), 2, acc, ring);
  stepsLoop(b.rem(p.ksteps, b.i32(2)), 1, acc, ring);
  return acc;
}

}  // namespace kiln::sm90
