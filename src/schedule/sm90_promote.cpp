// fp8_accum=promote and promote_pairs (docs/sm90-strategy.md, "FP8"): the consumer's K loop in
// which each K step's FP8 wgmmas sum from zero (scale_d = false) into fresh registers, and those
// sums are added to f32 accumulators once their group is waited for. The tensor cores then never
// sum more than one step's 128 products in their narrow accumulator.
//
// promote, one step at a time (the tensor cores idle while the sums are added):
//   for ksteps:      sums = wgmma(step); wait(0); acc += sums; release(its stage)
// promote_pairs, two steps in flight (the second step's wgmmas run while the first's sums are
// added; a third set of registers):
//   for ksteps / 2:  s0 = wgmma(step); s1 = wgmma(step); wait(1); acc += s0; release;
//                    wait(0); acc += s1; release
//   then ksteps % 2 single steps.
// Every read of a step's sums waits for its group inside the same iteration. ptxas does not follow
// wgmma.wait_group across a loop's back edge: a pipeline that carries a step in flight into the
// next iteration (wait(1) there, then add) gets every wgmma of the kernel serialized (C7514, or
// C7518 when the carried sums are copied), and issuing deeper within an iteration (4 or 8 steps,
// the sums' registers reused once added) measured 1-5% slower than pairs (docs/history/2026-11-30.md,
// 4a6edc0).
#include <tuple>

#include "schedule/sm90_context.h"

namespace kiln::sm90 {
using namespace ir;

std::vector<Value*> buildPromotedKLoop(Plan& p, const StepOperands& at, Value* isLane0, const std::vector<Value*>& acc0) {
  KernBuilder& b = p.b;
  const Config& c = p.cfg;
  const GemmProgram& g = p.g;
  Value* zero = b.i32(0);
  // A loop of `count` iterations of `steps` K steps each, from ring position (s0, ph0).
  auto loopOf = [&](Value* count, int steps, const std::vector<Value*>& accIn, Value* s0, Value* ph0) {
    std::vector<Value*> forOps = {zero, count, b.i32(1)};
    forOps.insert(forOps.end(), accIn.begin(), accIn.end());
    forOps.push_back(s0);
    forOps.push_back(ph0);
    std::vector<Type> resultTypes(accIn.size(), types::f32());
    resultTypes.push_back(types::i32());
    resultTypes.push_back(types::i32());
    Operation* loop = b.create("scf.for", forOps, resultTypes, {}, 1);
    Block* body = loop->region(0).addBlock();
    body->addArgument(types::i32(), "kt");  // the induction variable, unused: the ring position is carried
    std::vector<Value*> acc;
    for (size_t i = 0; i < accIn.size(); ++i) acc.push_back(body->addArgument(types::f32(), "acc"));
    Value* s = body->addArgument(types::i32(), "s");
    Value* ph = body->addArgument(types::i32(), "ph");
    {
      InsertionGuard guard(b);
      b.setInsertionPointToEnd(body);
      std::vector<std::vector<Value*>> sums;
      std::vector<Value*> stages;
      for (int k = 0; k < steps; ++k) {
        sums.emplace_back(accIn.size());
        issueKStep(p, at, s, ph, [&](Value*) { return b.i1(false); }, /*fresh=*/true, sums.back());
        stages.push_back(s);
        std::tie(s, ph) = nextStage(b, s, ph, c.stages);
      }
      for (int k = 0; k < steps; ++k) {
        b.create("kern.wgmma_wait", {}, {}, {{"pending", int64_t(steps - 1 - k)}});
        for (size_t i = 0; i < acc.size(); ++i) acc[i] = b.named(b.fbin("arith.addf", acc[i], sums[size_t(k)][i]), "acc");
        b.setLoc(g.reduce->loc());
        b.ifThen(isLane0, [&] { releaseStage(p, stages[size_t(k)]); });
      }
      std::vector<Value*> yields = acc;
      yields.push_back(s);
      yields.push_back(ph);
      b.create("scf.yield", yields, {});
    }
    std::vector<Value*> out;
    for (unsigned i = 0; i < loop->numResults(); ++i) out.push_back(loop->result(i));
    return out;
  };
  const size_t n = acc0.size();
  std::vector<Value*> r;
  if (c.fp8Accum == Fp8Accum::PromotePairs) {
    r = loopOf(b.div(p.ksteps, b.i32(2)), 2, acc0, p.stage0, p.phase0);
    r = loopOf(b.rem(p.ksteps, b.i32(2)), 1, std::vector<Value*>(r.begin(), r.begin() + long(n)), r[n], r[n + 1]);
  } else {
    r = loopOf(p.ksteps, 1, acc0, p.stage0, p.phase0);
  }
  r.resize(n);
  return r;
}

}  // namespace kiln::sm90
