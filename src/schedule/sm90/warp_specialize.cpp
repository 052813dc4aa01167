// sm90-warp-specialize: the copies of the K loop go to a producer role of their own, whose one
// elected thread runs its own copy of the loop control; the consumer warpgroups keep the wgmmas and
// the epilogue (docs/sm90-passes.md).
//
//   Before (the unit's one role, as the lowering writes it, consumer.cpp and k_loop.cpp, and
//   sm90-multistage-ring widens it; in a ring of one the step's releases come before its copies):
//     kern.role {name = "consumer", warpgroups = [1, n]} {
//       ... %copier = (cwarp == 0) && (lane == 0) ...
//       scf.for %kt = 0 to %ksteps step 1 iter_args(..., %s = %stage0, %ph = %phase0, ...) {
//         scf.if %copier { INVARIANT  COPIES(%kt, %s, %ph) }
//         ... the wait for the stage, the wgmmas, the release ...
//         NEXT: %s1, %ph1 = the ring position after %s, %ph
//         scf.yield ..., %s1, %ph1, ...
//       }
//       ...
//     }
//   After:
//     kern.role {name = "producer", warpgroups = [0, 1]} {
//       %leader = (kern.warp_id == 0) && (kern.lane_id == 0)
//       scf.if %leader {
//         INVARIANT                                  (the L2 stream predicates, the tile's group)
//         scf.for %kt = 0 to %ksteps step 1 iter_args(%s = %stage0, %ph = %phase0) {
//           COPIES(%kt, %s, %ph)  NEXT  scf.yield %s1, %ph1
//         }
//       }
//     }
//     kern.role {name = "consumer", ...} { the same, without the copies and %copier }
//
// Why it is the same program: the copies of step kt still wait for the stage to be free (empty[s])
// and complete on full[s], which the consumers wait for before they read it; who issues them does
// not matter to the ring's protocol, only that one thread issues each step's copies once, in step
// order, which the producer's elected thread does. Its loop walks the same (s, ph) from the same
// start (both derive it from the unit), so the two roles meet only through the barriers. The
// invariant copies' inputs (INVARIANT: the ops of the copy block before the first that reads the
// step, the stage or the phase) are computed once before the loop.
//
// Legal only when the role is named "consumer", lies in a kern.tile_loop's body beside no producer
// role, and holds exactly one scf.for whose body holds an scf.if (no results, an empty else) with
// the TMA copies (the first such); that block reads of the loop only its induction variable and carried
// values whose next values the body computes with pure ops from those carried values alone (the
// ring position), reads nothing else the role defines but constants, and defines nothing used
// outside it. Any other role is left as it is.
//
// The ops are written where the producer's builder wrote them before this was a pass: each moved
// op that uses a constant the consumer made (not visible in the producer) gets one made right before
// it, as that builder made its constants at their first use, and the others are shared as it
// shared them (KernBuilder::adoptVisibleConstants). So the PTX is byte-identical.
#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>

#include "dialects/kern/kern_builder.h"
#include "kiln/ir/op_registry.h"
#include "schedule/sm90/passes.h"

namespace kiln::sm90 {
namespace {

using ir::Block;
using ir::Operation;
using ir::Value;

// The consumer's K loop taken apart.
struct CopyLoop {
  Operation* role = nullptr;
  Operation* loop = nullptr;
  Operation* copies = nullptr;            // scf.if %copier { ... }
  std::vector<unsigned> ring;             // the carried values the copies read (body argument numbers)
  std::vector<Operation*> invariant;      // the copy block's ops before the first that reads the loop
  std::vector<Operation*> perStep;        // the rest of it
  std::vector<Operation*> next;           // the ring position's arithmetic, in body order
};

bool isPure(const Operation& op) { return op.info() && op.info()->has(ir::kPure) && op.numRegions() == 0; }

// Whether `op` (or an op nested in it) reads one of `vs`.
bool reads(const Operation& op, const std::set<const Value*>& vs) {
  bool hit = false;
  op.walk([&](const Operation& inner) {
    for (const Value* v : inner.operands()) hit |= vs.count(v) > 0;
  });
  return hit;
}

// Whether the producer can read `v`, which an op moved or copied out of `role` reads: a value from
// outside the role, or a constant (made again where needed).
bool producerCanRead(const Value* v, const Operation& role) {
  const Operation* d = v->definingOp();
  if (d) return d->is("arith.constant") || !role.isAncestorOf(d);
  const Operation* owner = v->ownerBlock()->parentOp();
  return owner && !role.isAncestorOf(owner);
}

// The ops of `body` that compute `roots` (a backward slice), in body order; false unless they are
// pure and read of the body's arguments only `allowed`, and of values outside the body only what
// the producer can read.
bool sliceOf(const Operation& role, const Block& body, const std::vector<Value*>& roots,
             const std::set<const Value*>& allowed, std::vector<Operation*>& out) {
  std::set<const Operation*> in;
  std::vector<const Value*> work(roots.begin(), roots.end());
  while (!work.empty()) {
    const Value* v = work.back();
    work.pop_back();
    Operation* d = v->definingOp();
    if (!d) {
      if (v->ownerBlock() == &body ? !allowed.count(v) : !producerCanRead(v, role)) return false;
      continue;
    }
    if (d->parentBlock() != &body) {
      if (!producerCanRead(v, role)) return false;
      continue;
    }
    if (in.count(d)) continue;
    if (!isPure(*d)) return false;
    in.insert(d);
    for (const Value* o : d->operands()) work.push_back(o);
  }
  for (const auto& op : body.operations())
    if (in.count(op.get())) out.push_back(op.get());
  return true;
}

// The copy block of a K loop: its body's first scf.if (no results, an empty else) that holds TMA
// copies, or nullptr.
Operation* copyBlockOf(const Operation& loop) {
  for (const auto& op : loop.body().operations()) {
    if (!op->is("scf.if") || op->numResults() != 0 || op->body(1).operations().size() != 1) continue;
    bool copies = false;
    op->walk([&](const Operation& inner) { copies |= inner.is("kern.tma_load"); });
    if (copies) return op.get();
  }
  return nullptr;
}

// Splits the copy block into the ops before the first that reads the loop (invariant) and the rest.
bool splitCopies(CopyLoop& c) {
  const Block& body = c.loop->body();
  std::set<const Value*> loopValues;
  for (const auto& a : body.arguments()) loopValues.insert(a.get());
  std::set<const Value*> defined;  // values the copy block defines
  bool perStep = false;
  for (const auto& op : c.copies->body(0).operations()) {
    if (op->is("scf.yield")) continue;
    perStep = perStep || reads(*op, loopValues);
    (perStep ? c.perStep : c.invariant).push_back(op.get());
    op->walk([&](const Operation& inner) {
      for (const auto& r : inner.results()) defined.insert(r.get());
    });
    if (perStep)
      for (const auto& r : op->results()) loopValues.insert(r.get());
  }
  // Nothing the block defines is used outside it, and it reads of the role only the loop's
  // induction variable and ring position.
  for (const Value* v : defined)
    for (const ir::Use& u : v->uses())
      if (!c.copies->isAncestorOf(u.user)) return false;
  std::set<const Value*> loopArgs = {body.argument(0)};
  for (unsigned i : c.ring) loopArgs.insert(body.argument(i));
  bool readable = true;
  c.copies->walk([&](const Operation& op) {
    if (&op == c.copies) return;
    for (const Value* v : op.operands())
      readable &= defined.count(v) || loopArgs.count(v) || producerCanRead(v, *c.role);
  });
  return readable && !c.perStep.empty();
}

std::optional<CopyLoop> match(Operation& role) {
  if (!role.is("kern.role") || role.stringAttr("name") != "consumer") return std::nullopt;
  const Operation* tiles = role.parentOp();
  if (!tiles || !tiles->is("kern.tile_loop")) return std::nullopt;
  for (const auto& op : role.parentBlock()->operations())
    if (op->is("kern.role") && op->stringAttr("name") == "producer") return std::nullopt;
  CopyLoop c;
  c.role = &role;
  int loops = 0;
  role.walk([&](Operation& op) {
    if (op.is("scf.for") && copyBlockOf(op)) c.loop = &op, ++loops;
  });
  if (loops != 1) return std::nullopt;
  c.copies = copyBlockOf(*c.loop);
  Block& body = c.loop->body();
  // The carried values the copies read: the ring position, whose next values the body computes
  // from it alone.
  std::set<const Value*> ring;
  for (unsigned i = 1; i < body.numArguments(); ++i)
    if (reads(*c.copies, {body.argument(i)})) c.ring.push_back(i), ring.insert(body.argument(i));
  if (c.ring.empty()) return std::nullopt;
  const Operation& yield = *body.back();
  std::vector<Value*> nextValues;
  for (unsigned i : c.ring) nextValues.push_back(yield.operand(i - 1));
  if (!sliceOf(role, body, nextValues, ring, c.next) || !splitCopies(c)) return std::nullopt;
  return c;
}

// Whether the value `v` defined by an op is visible at `user`: defined before it in its block or
// in a block around it, before the op that holds it.
bool visibleAt(const Value* v, const Operation* user) {
  const Operation* def = v->definingOp();
  for (const Operation* at = user; at && at->parentBlock(); at = at->parentOp()) {
    const Block* blk = at->parentBlock();
    if (def->parentBlock() != blk) continue;
    for (const auto& op : blk->operations()) {
      if (op.get() == at) return false;
      if (op.get() == def) return true;
    }
  }
  return false;
}

// Every constant `op` reads that is not visible where it now stands is made again right before it
// (shared with a visible one as the builder would have shared it).
void rematerializeConstants(Operation& op) {
  op.walk([&](Operation& inner) {
    for (unsigned i = 0; i < inner.numOperands(); ++i) {
      Value* v = inner.operand(i);
      const Operation* d = v->definingOp();
      if (!d || !d->is("arith.constant") || visibleAt(v, &inner)) continue;
      KernBuilder b;
      b.setInsertionPoint(&inner);
      b.setLoc(d->loc());
      b.adoptVisibleConstants();
      inner.setOperand(i, b.constant(v->type(), *d->attr("value")));
    }
  });
}

// Moves `ops` to the end of `to`, in order, reading `map`'s values in place of its keys.
void moveOps(const std::vector<Operation*>& ops, Block& to, const std::unordered_map<const Value*, Value*>& map) {
  for (Operation* op : ops) {
    Operation* moved = to.push_back(op->parentBlock()->take(op));
    moved->walk([&](Operation& inner) {
      for (unsigned i = 0; i < inner.numOperands(); ++i)
        if (auto it = map.find(inner.operand(i)); it != map.end()) inner.setOperand(i, it->second);
    });
    rematerializeConstants(*moved);
  }
}

// The producer role, before the consumer's: its elected thread's invariants and its K loop of the
// copies and the ring arithmetic.
void buildProducer(const CopyLoop& c) {
  Block& tiles = *c.role->parentBlock();
  KernBuilder b(&tiles);
  b.setInsertionPoint(c.role);
  b.setLoc(c.copies->loc());
  Operation* role = b.create("kern.role", {}, {}, {{"name", "producer"}, {"warpgroups", ir::Attribute::ints({0, 1})}}, 1);
  b.setInsertionPointToEnd(role->region(0).addBlock());
  b.adoptVisibleConstants();
  Value* warp = b.named(b.op1("kern.warp_id", {}, ir::types::i32()), "warp");
  Value* lane = b.named(b.op1("kern.lane_id", {}, ir::types::i32()), "lane");
  // In the order the lowering's builder made them (the PTX numbers registers in emission order).
  Value* laneIs0 = b.cmp("eq", lane, b.i32(0));
  Value* warpIs0 = b.cmp("eq", warp, b.i32(0));
  Value* leader = b.andi(warpIs0, laneIs0);
  Operation* ifOp = b.create("scf.if", {leader}, {}, {}, 2);
  Block* then = ifOp->region(0).addBlock();
  b.setInsertionPointToEnd(ifOp->region(1).addBlock());
  b.create("scf.yield", {}, {});
  moveOps(c.invariant, *then, {});
  // The loop, with the constants the builder would have shared or made here.
  KernBuilder lb(then);
  lb.setLoc(c.loop->loc());
  lb.adoptVisibleConstants();
  std::vector<Value*> operands = {lb.i32(0), c.loop->operand(1), lb.i32(1)};
  std::vector<ir::Type> types;
  for (unsigned i : c.ring) {
    operands.push_back(c.loop->operand(2 + i));
    types.push_back(c.loop->body().argument(i)->type());
  }
  Operation* loop = lb.create("scf.for", operands, types, {}, 1);
  Block* body = loop->region(0).addBlock();
  const Block& old = c.loop->body();
  std::unordered_map<const Value*, Value*> map = {
      {old.argument(0), body->addArgument(old.argument(0)->type(), old.argument(0)->nameHint())}};
  for (unsigned i : c.ring) map[old.argument(i)] = body->addArgument(old.argument(i)->type(), old.argument(i)->nameHint());
  moveOps(c.perStep, *body, map);
  // The ring arithmetic: the consumer keeps its own, the producer gets a copy.
  for (Operation* op : c.next) {
    Operation* copy = body->push_back(ir::cloneOp(*op, map));
    rematerializeConstants(*copy);
  }
  std::vector<Value*> yields;
  for (unsigned i : c.ring) yields.push_back(map.at(old.back()->operand(i - 1)));
  lb.setInsertionPointToEnd(body);
  lb.create("scf.yield", yields, {});
  lb.setInsertionPointToEnd(then);
  lb.create("scf.yield", {}, {});
}

// The consumer's copy block goes, with the test of its thread when nothing else reads it (the ops
// that compute only that test, in the role; constants stay).
void dropCopies(const CopyLoop& c) {
  Operation* test = c.copies->operand(0)->definingOp();
  c.copies->erase();
  std::set<const Operation*> dead;
  std::vector<Operation*> order;
  std::vector<Operation*> work;
  if (test) work.push_back(test);
  while (!work.empty()) {
    Operation* d = work.back();
    work.pop_back();
    if (dead.count(d) || !isPure(*d) || d->is("arith.constant") || !c.role->isAncestorOf(d)) continue;
    bool unused = true;
    for (const auto& r : d->results())
      for (const ir::Use& u : r->uses()) unused &= dead.count(u.user) > 0;
    if (!unused) continue;
    dead.insert(d);
    order.push_back(d);
    for (Value* o : d->operands())
      if (Operation* od = o->definingOp()) work.push_back(od);
  }
  for (Operation* d : order) d->erase();  // users before the values they use
}

}  // namespace

bool warpSpecializePass(ir::Module& m, ir::DiagnosticEngine&) {
  std::vector<CopyLoop> found;
  m.op().walk([&](Operation& op) {
    if (auto c = match(op)) found.push_back(*c);
  });
  for (const CopyLoop& c : found) {
    buildProducer(c);
    dropCopies(c);
  }
  return true;
}

}  // namespace kiln::sm90
