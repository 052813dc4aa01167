// sm90-multistage-ring: the consumer's K loop over a ring of one stage becomes a loop over the
// whole ring of `stages`, keeping one wgmma group in flight (docs/sm90-passes.md).
//
// The lowering allocates the rings (sA, sB and the full / empty mbarriers, `stages` deep: the
// shared-memory plan and the launch contract are its) but writes the K loop over a ring of one:
// every step uses stage 0 and flips its phase. With one stage the previous step's stage must go
// back before this step's copies can take it again, so the releases open the step and no wgmma
// group is left in flight. With S >= 2 stages the copies of step kt take another stage, so the
// releases can wait until the step's wgmmas are issued, and the group of step kt - 1 stays in
// flight while they are (the tensor cores always have the next step queued).
//
//   Before (k_loop.cpp, lower.cpp):                  After (S = the full barriers' count):
//     %phase0 = %done % 2                              %stage0 = %done % S
//                                                      %phase0 = (%done / S) % 2
//     (reuse_stage: %prevlast = 0 is the constant)     %prevlast = (%stage0 + S - 1) % S
//     scf.for %kt iter_args(%acc.., %s = 0,            scf.for %kt iter_args(%acc.., %s = %stage0,
//                 %ph = %phase0, %prev = 0) {                      %ph = %phase0, %prev = 0) {
//       RELEASES: (%kt > 0 && %lane0): release(%prev)    COPIES  STEP
//         (reuse_stage: %kt == 0 && %iter > 0: the     kern.wgmma_wait {pending = 1}
//          stores' wait, release(0))                   RELEASES (reuse_stage: release(%prevlast))
//       COPIES(%kt, %s, %ph)  STEP(%s, %ph)            NEXT: the wrap at S
//       kern.wgmma_wait {pending = 0}                  scf.yield ...
//       NEXT: %s1 = %s + 1 == 1 ? 0 : %s + 1, ...    }
//       scf.yield %acc.., %s1, %ph1, %s
//     }
//
// Why it is the same program: the (stage, phase) of each K step is the ring's count of the K steps
// the block ran before it (derived per unit, so both roles agree without talking); a release
// issued later than before is never a race, and it cannot deadlock with S >= 2: the copies of step
// kt take stage s_kt, released by step kt - S + 1 <= kt - 1, and reuse_stage's deferred release of
// the previous tile's last stage, made in this tile's first step, is needed first by its step S - 1.
// The wait of 1 before the releases retires step kt - 1's group, the one that read %prev. The
// release after the loop (the last stage, or with reuse_stage none) is the same in both forms.
//
// Legal only when the loop has exactly that shape: a full-barrier wait at carried (%s, %ph) on a
// ring of S >= 2 barriers, every buffer and barrier the loop indexes by %s of the same depth S; a
// carried %prev yielded %s; %s starting at the constant 0 and %ph at a value % 2; the wrap of a
// ring of one; before the first op that reads %s or %ph, releases that read of the loop only %kt
// and %prev, arrive on a ring of S empty barriers at %prev or the start stage, define nothing used
// after them and hold only pure ops, conditionals, arrivals, store waits and named barriers; and
// after the step's commit a kern.wgmma_wait {pending = 0}. Any other loop is left as it is (a ring
// of one is a correct kernel, only a slower one).
//
// The ops are written where the lowering's builder wrote them when it built the ring itself, so
// the PTX is byte-identical: the ring position before the unit's phase (the 2 made for it comes
// after the stage), the previous tile's last stage right after the last value its release reads,
// and every constant where that builder made it (KernBuilder::adoptVisibleConstants), one that the
// one-stage kernel made later in the same scope merged into it.
#include <map>
#include <optional>
#include <set>

#include "dialects/kern/kern_builder.h"
#include "kiln/ir/op_registry.h"
#include "schedule/sm90/passes.h"

namespace kiln::sm90 {
namespace {

using ir::Block;
using ir::Operation;
using ir::Value;

// The K loop over a ring of one, taken apart.
struct OneStageLoop {
  Operation* loop = nullptr;
  int64_t stages = 0;                    // the ring's depth: its full barriers' count
  unsigned s = 0, ph = 0, prev = 0;      // body argument numbers
  Operation* phaseInit = nullptr;        // %done % 2
  Operation* wrap = nullptr;             // arith.cmpi eq (%s + 1, 1)
  Operation* wait = nullptr;             // kern.wgmma_wait {pending = 0}
  std::vector<Operation*> releases;      // the ops before the step's first read of %s or %ph
};

bool isConstant(const Value* v, int64_t want) {
  auto c = KernBuilder::intConstant(v);
  return c && *c == want;
}

// The barriers in the ring `v` (a kern.mbarrier_alloc); 0 for any other value.
int64_t ringOf(const Value* v) {
  const Operation* d = v->definingOp();
  return d && d->is("kern.mbarrier_alloc") ? kern::mbarrierCount(v->type()) : 0;
}

bool reads(const Operation& op, const std::set<const Value*>& vs) {
  bool hit = false;
  op.walk([&](const Operation& inner) {
    for (const Value* v : inner.operands()) hit |= vs.count(v) > 0;
  });
  return hit;
}

// Every buffer and barrier ring the loop indexes by the carried stage has S stages, and no kern op
// but those reads it (pure arithmetic may: the next position).
bool ringsAgree(const Operation& loop, const Value* s, int64_t stages) {
  bool ok = true;
  loop.walk([&](const Operation& op) {
    for (unsigned i = 0; i < op.numOperands(); ++i) {
      if (op.operand(i) != s) continue;
      // (buf, stage, ...) and (bar, stage, ...); a TMA copy's (map, buf, stage, bar, stage, ...).
      const Value* ring = nullptr;
      if (op.is("kern.tma_load") && (i == 2 || i == 4)) ring = op.operand(i - 1);
      else if (i == 1 && (op.is("kern.wgmma_desc") || op.is("kern.st_shared") || op.is("kern.ld_shared") ||
                          op.name().rfind("kern.mbarrier_", 0) == 0))
        ring = op.operand(0);  // st_shared: groups along K zero a stage's token tail (ragged_walk.cpp);
                               // ld_shared: per-column scale_b copied with the stage (slice_scales.cpp)
      else if (op.name().rfind("kern.", 0) == 0) ok = false;
      if (!ring) continue;
      if (auto layout = kern::smemLayout(ring->type())) ok &= layout->stages == stages;
      else ok &= ringOf(ring) == stages;
    }
  });
  return ok;
}

// The next position: %s1 = select(%s + 1 == 1, 0, %s + 1), %ph1 = select(that, %ph ^ 1, %ph).
bool matchNext(OneStageLoop& l) {
  Block& body = l.loop->body();
  const Operation& yield = *body.back();
  const Operation* sel = yield.operand(l.s - 1)->definingOp();
  const Operation* phSel = yield.operand(l.ph - 1)->definingOp();
  if (!sel || !sel->is("arith.select") || !isConstant(sel->operand(1), 0)) return false;
  const Operation* next = sel->operand(2)->definingOp();
  Operation* wrap = sel->operand(0)->definingOp();
  if (!next || !next->is("arith.addi") || next->operand(0) != body.argument(l.s) || !isConstant(next->operand(1), 1) ||
      !wrap || !wrap->is("arith.cmpi") || wrap->stringAttr("pred") != "eq" || wrap->operand(0) != sel->operand(2) ||
      !isConstant(wrap->operand(1), 1))
    return false;
  if (!phSel || !phSel->is("arith.select") || phSel->operand(0) != wrap->result() ||
      phSel->operand(2) != body.argument(l.ph))
    return false;
  l.wrap = wrap;
  return true;
}

// Whether the releases can move: allowed ops only, reading of the loop only %kt and %prev, arriving
// on the empty ring at %prev or the start stage, their values used among themselves.
bool matchReleases(OneStageLoop& l, const Value* full) {
  Block& body = l.loop->body();
  const Value* prev = body.argument(l.prev);
  const Value* start = l.loop->operand(2 + l.s);
  std::set<const Value*> carried;
  for (unsigned i = 1; i < body.numArguments(); ++i)
    if (i != l.prev) carried.insert(body.argument(i));
  bool ok = !l.releases.empty(), releasesPrev = false;
  for (Operation* op : l.releases) {
    ok &= !reads(*op, carried);
    op->walk([&](const Operation& in) {
      if (in.is("kern.mbarrier_arrive") || in.is("kern.mbarrier_arrive_remote")) {
        ok &= in.operand(0) != full && ringOf(in.operand(0)) == l.stages &&
              (in.operand(1) == prev || in.operand(1) == start);
        releasesPrev |= in.operand(1) == prev;
      } else if (!in.is("scf.if") && !in.is("scf.yield") && !in.is("kern.bulk_wait") &&
                 !in.is("kern.named_barrier")) {
        ok &= in.info() && in.info()->has(ir::kPure) && in.numRegions() == 0;
      }
      for (const auto& r : in.results())
        for (const ir::Use& u : r->uses()) {
          bool inside = false;
          for (const Operation* other : l.releases) inside |= other->isAncestorOf(u.user);
          ok &= inside;
        }
    });
  }
  return ok && releasesPrev;
}

// The body taken apart: the full wait at (%s, %ph), the releases before the first op that reads
// either, the step's wait of 0 after its commit.
bool matchBody(OneStageLoop& l) {
  Block& body = l.loop->body();
  Operation* fullWait = nullptr;
  for (const auto& op : body.operations())
    if (op->is("kern.mbarrier_wait") && op->numOperands() == 3 && op->operand(1)->ownerBlock() == &body &&
        op->operand(2)->ownerBlock() == &body && op->operand(1) != body.argument(0)) {
      fullWait = op.get();
      break;
    }
  if (!fullWait) return false;
  const Value *s = fullWait->operand(1), *ph = fullWait->operand(2);
  for (unsigned i = 1; i < body.numArguments(); ++i) {
    if (body.argument(i) == s) l.s = i;
    if (body.argument(i) == ph) l.ph = i;
  }
  const Operation& yield = *body.back();
  for (unsigned i = 1; i < body.numArguments(); ++i)
    if (yield.operand(i - 1) == s && i != l.s) l.prev = i;
  l.stages = ringOf(fullWait->operand(0));
  if (l.s == 0 || l.ph == 0 || l.prev == 0 || l.s == l.ph || l.stages < 2) return false;
  bool committed = false;
  for (auto it = std::next(body.find(fullWait)); it != body.operations().end() && !l.wait; ++it) {
    committed |= (*it)->is("kern.wgmma_commit");
    if ((*it)->is("kern.wgmma_wait")) l.wait = it->get();
  }
  if (!committed || !l.wait || l.wait->intAttr("pending", -1) != 0) return false;
  for (const auto& op : body.operations()) {
    if (reads(*op, {s, ph})) break;
    l.releases.push_back(op.get());
  }
  return matchReleases(l, fullWait->operand(0)) && ringsAgree(*l.loop, s, l.stages);
}

std::optional<OneStageLoop> match(Operation& loop) {
  if (!loop.is("scf.for") || loop.numRegions() != 1 || !loop.enclosing("kern.tile_loop")) return std::nullopt;
  OneStageLoop l;
  l.loop = &loop;
  if (loop.body().numArguments() < 4 || !matchBody(l) || !matchNext(l)) return std::nullopt;
  // The unit starts at stage 0 and phase %done % 2.
  Operation* phase = loop.operand(2 + l.ph)->definingOp();
  if (!isConstant(loop.operand(2 + l.s), 0) || !phase || !phase->is("arith.remsi") || !isConstant(phase->operand(1), 2))
    return std::nullopt;
  l.phaseInit = phase;
  return l;
}

// A constant the builder would have reused: every equal one made after `c` where `c` is visible
// (later in its block, and in the blocks of the ops that follow it there) is merged into it.
void shareConstant(Value* c) {
  Operation* def = c->definingOp();
  Block& blk = *def->parentBlock();
  const std::string type = c->type().str(), value = def->attr("value")->str();
  std::vector<Operation*> same;
  for (auto it = std::next(blk.find(def)); it != blk.operations().end(); ++it)
    (*it)->walk([&](Operation& op) {
      if (op.is("arith.constant") && op.result()->type().str() == type && op.attr("value")->str() == value)
        same.push_back(&op);
    });
  for (Operation* op : same) {
    op->result()->replaceAllUsesWith(c);
    op->erase();
  }
}

// The unit's ring position, where the lowering's builder made it: the stage before the 2 made for
// the phase (when that 2 was made right there), the divide right before the phase.
Value* ringPosition(Operation& phase, int64_t stages) {
  Block& blk = *phase.parentBlock();
  Value* done = phase.operand(0);
  auto at = blk.find(&phase);
  Operation* two = phase.operand(1)->definingOp();
  const bool twoMadeHere = at != blk.operations().begin() && std::prev(at)->get() == two;
  KernBuilder b(&blk);
  b.setInsertionPoint(twoMadeHere ? two : &phase);
  b.setLoc(phase.loc());
  b.adoptVisibleConstants();
  Value* n = b.i32(stages);
  Value* stage0 = b.named(b.rem(done, n), "stage0");
  b.setInsertionPoint(&phase);
  phase.setOperand(0, b.div(done, n));
  shareConstant(n);
  return stage0;
}

// The previous unit's last stage, (stage0 + S - 1) % S, right after the last op of the loop's block
// that makes a value the releases read (not a constant), or stage0 when that comes later.
Value* previousStage(const OneStageLoop& l, Value* stage0) {
  Block& blk = *l.loop->parentBlock();
  std::set<const Operation*> read = {stage0->definingOp()};
  for (Operation* op : l.releases)
    op->walk([&](const Operation& in) {
      for (const Value* v : in.operands())
        if (const Operation* d = v->definingOp(); d && !d->is("arith.constant")) read.insert(d);
    });
  Operation* after = nullptr;
  for (const auto& op : blk.operations()) {
    if (op.get() == l.loop) break;
    if (read.count(op.get())) after = op.get();
  }
  KernBuilder b(&blk);
  b.setInsertionPoint(after ? std::next(blk.find(after))->get() : l.loop);
  b.setLoc(l.loop->loc());
  b.adoptVisibleConstants();
  Value* back = b.addConst(stage0, l.stages - 1);
  shareConstant(back->definingOp()->operand(1));
  Value* n = b.i32(l.stages);
  Value* last = b.named(b.rem(back, n), "prevlast");
  shareConstant(n);
  return last;
}

void widen(const OneStageLoop& l, std::map<const Operation*, Value*>& positions) {
  Value*& stage0 = positions[l.phaseInit];
  if (!stage0) stage0 = ringPosition(*l.phaseInit, l.stages);
  Value* start = l.loop->operand(2 + l.s);
  l.loop->setOperand(2 + l.s, stage0);
  // reuse_stage: the release of the previous tile's last stage, in a ring of one the start stage.
  std::vector<Operation*> deferred;
  for (Operation* op : l.releases)
    op->walk([&](Operation& in) {
      if ((in.is("kern.mbarrier_arrive") || in.is("kern.mbarrier_arrive_remote")) && in.operand(1) == start)
        deferred.push_back(&in);
    });
  if (!deferred.empty()) {
    Value* last = previousStage(l, stage0);
    for (Operation* op : deferred) op->setOperand(1, last);
  }
  KernBuilder b(&l.loop->body());
  b.setInsertionPoint(l.wrap);
  b.adoptVisibleConstants();
  Value* n = b.i32(l.stages);
  l.wrap->setOperand(1, n);
  shareConstant(n);
  // The releases follow the step's wgmmas, one group of which stays in flight.
  Block& body = l.loop->body();
  auto to = std::next(body.find(l.wait));
  for (Operation* op : l.releases) body.insert(to, body.take(op));
  l.wait->setAttr("pending", int64_t{1});
}

}  // namespace

bool multistageRingPass(ir::Module& m, ir::DiagnosticEngine&) {
  std::vector<OneStageLoop> found;
  m.op().walk([&](Operation& op) {
    if (auto l = match(op)) found.push_back(*l);
  });
  std::map<const Operation*, Value*> positions;  // the unit's stage0, by its phase op
  for (const OneStageLoop& l : found) widen(l, positions);
  return true;
}

}  // namespace kiln::sm90
