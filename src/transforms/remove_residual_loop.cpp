// remove-residual-loop: deletes the CTA-wide tile loop that partition-roles leaves behind once
// every role runs its own copy of it, when that loop provably does no observable work.
//
//   Before (after partition-roles):
//     kern.role {name = "producer", warpgroups = [0, 1]} { kern.tile_loop(%M, %N, %one) {...} { P } }
//     kern.role {name = "consumer", warpgroups = [1, 2]} { kern.tile_loop(%M, %N, %one) {...} { C } }
//     kern.tile_loop(%M, %N, %one) {...} {                          (the residual shared loop)
//     ^bb0(%iter, %m0, %n0, %b):
//       %ksteps = arith.muli(%iter, %ktiles)  %stage0 = arith.remsi(...)  ...   (pure, unused)
//     }
//   After:
//     the two role loops, unchanged; the residual loop is gone.
//   Kept (fail-closed), with the reason recorded:
//     kern.tile_loop(%M, %N, %one) {..., kiln.kept = "'kern.ld_global' reads global memory, ..."} { ... }
//   and a remark at the loop: "remove-residual-loop kept this loop: <the same reason>".
//
// Why removing it is the same program. Every thread runs the residual loop after its own role
// loop. kern.tile_loop's walk over the tiles is a pure function of its operands, attributes and the
// block index (kern_ops.h: no stores, no atomics; {ragged} reads the bounds), it always terminates, and it defines no results;
// so when each statement of its body is free of effects and nothing outside the loop sees a value
// it defines or storage it updates, running it changes nothing but time and registers.
//
// Legal only when all of these hold (otherwise the loop is kept and the first failing rule is
// recorded as the reason):
//   1. The loop is a residual: a kern.tile_loop directly in a kern.kernel body, holding no
//      kern.role, in a kernel with at least one top-level kern.role holding a kern.tile_loop. (Any
//      other loop is not this pass's business and is left untouched, with no reason recorded.)
//   2. Its attributes are the static scheduler's ({tile, raster, group_m, cluster, splits, stream_k}:
//      cluster tiles by cluster id, and stream-K's runs of K steps by block id, are as static as
//      tiles by block id) or {ragged}, whose walk also reads the groups' bounds (loads whose values
//      only the walk sees: no effect but time); an attribute this pass does not know
//      could mean another way of claiming tiles (a dynamic scheduler's atomics).
//   3. Every role-local loop the kernel's roles call for exists: a kern.tile_loop with the same
//      operands and attributes directly in a top-level kern.role, for each of the roles "producer"
//      and "consumer" (the MMA role) and for every other role the kernel declares, by a kern.role
//      anywhere in it or by an entry of its {role_regs}. A three-role kernel therefore needs
//      producer, consumer and epilogue loops; the sm90_ws_persistent kernel, whose consumer also
//      runs the epilogue, declares two roles and needs two.
//   4. No value the loop defines is used outside it, and no storage it updates in place (the
//      mbarriers, shared-memory rings, global memory or wgmma accumulators named by an operand) is
//      named by any op outside it: an in-place update is a definition, so a later use of the
//      updated storage is a use of a value the loop defined. (Tile loops have no results, and the
//      verifier keeps loop-defined values from being named after the loop, so in verified IR
//      values leave the loop only through storage; the direct check stays as a guard.)
//   5. Every statement, nested ones included, is one of:
//        * side-effect-free setup: scalar arithmetic (arith.*, math.*), thread/lane/warp/block
//          indices and address arithmetic (kern.ptr_add, kern.smem_offset, kern.ldsm_offset,
//          kern.wgmma_desc, kern.cvt_pack): registers in, registers out, no memory touched;
//        * structure: scf.if (its regions are checked by the same rules; it always terminates) and
//          scf.yield;
//        * a placeholder: none. Kiln has no op that exists only to keep a value alive, and this
//          pass introduces none; if one is added, it belongs in this list;
//        * a barrier that the role split made obsolete: a kern.barrier directly in the loop body
//          (reached by every thread), when no role region executes a kern.barrier, or a
//          kern.named_barrier whose id is not a constant from 1 to 15 (bar.sync 0 counts arrivals
//          from every barrier-0 instruction of the CTA, so a role's barrier may be matched by this
//          one), and every op after the loop is setup or structure (this barrier is the
//          last point where all roles have finished their loops, so anything after it that may
//          touch memory, shared or global, may rely on it). Rules 4 and 5 already leave no memory
//          access in the loop itself.
//      Anything else keeps the loop: a load (kern.ld_global, kern.ldmatrix: a read can fault and
//      its value can steer control, e.g. a grouped GEMM comparing a loaded group index), a store,
//      an asynchronous copy, an mbarrier update or wait (the mbarriers are Kiln's atomics), a named
//      barrier, a fence, wgmma work, a loop (scf.for may not terminate), and any op this pass does not
//      recognise (kern.setmaxnreg cannot appear: the verifier keeps it inside a kern.role).
#include <deque>
#include <set>
#include <string>
#include <unordered_set>

#include "kiln/ir/op_registry.h"
#include "transforms/pass_registry.h"

namespace kiln::transforms {
namespace {

using ir::Operation;
using ir::Value;

constexpr const char* kPass = "remove-residual-loop";
constexpr const char* kKeptAttr = "kiln.kept";

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string valueName(const Value* v) {
  if (!v->nameHint().empty()) return "%" + v->nameHint();
  if (!v->definingOp()) return "block argument #" + std::to_string(v->index());
  return "result #" + std::to_string(v->index()) + " of " + quoted(v->definingOp()->name());
}

// Registers in, registers out: no memory, no blocking, no fault.
bool isSetup(const Operation& op) {
  if (!op.info() || !op.info()->has(ir::kPure) || op.numRegions() != 0) return false;
  if (op.dialect() == "arith" || op.dialect() == "math") return true;
  static const std::set<std::string, std::less<>> kern = {
      "kern.thread_id",  "kern.block_id",   "kern.lane_id",     "kern.warp_id",  "kern.ptr_add",
      "kern.smem_offset", "kern.ldsm_offset", "kern.wgmma_desc", "kern.cvt_pack", "kern.undef"};
  return kern.count(op.name()) != 0;
}

// The ops this pass knows to be observable, and why.
const char* effectOf(const Operation& op) {
  static const std::pair<const char*, const char*> table[] = {
      {"kern.ld_global", "reads global memory"},
      {"kern.prefetch_global", "brings global memory into a cache"},
      {"kern.ldmatrix", "reads shared memory"},
      {"kern.st_global", "stores to global memory"},
      {"kern.st_shared", "stores to shared memory"},
      {"kern.stmatrix", "stores to shared memory"},
      {"kern.tma_store", "starts an asynchronous copy to global memory"},
      {"kern.bulk_commit", "orders asynchronous copies"},
      {"kern.bulk_wait", "orders asynchronous copies"},
      {"kern.named_barrier", "synchronizes threads on a named barrier"},
      {"kern.cp_async", "starts an asynchronous copy into shared memory"},
      {"kern.tma_load", "starts an asynchronous copy into shared memory"},
      {"kern.cp_async_commit", "orders asynchronous copies"},
      {"kern.cp_async_wait", "orders asynchronous copies"},
      {"kern.mbarrier_init", "updates an mbarrier"},
      {"kern.mbarrier_arrive", "updates an mbarrier"},
      {"kern.mbarrier_arrive_expect_tx", "updates an mbarrier"},
      {"kern.mbarrier_wait", "waits on an mbarrier"},
      {"kern.fence", "is a memory fence"},
      {"kern.wgmma", "issues asynchronous tensor-core work"},
      {"kern.wgmma_fence", "orders asynchronous tensor-core work"},
      {"kern.wgmma_commit", "orders asynchronous tensor-core work"},
      {"kern.wgmma_wait", "orders asynchronous tensor-core work"},
  };
  for (const auto& [name, why] : table)
    if (op.is(name)) return why;
  return nullptr;
}

// The operands whose storage `op` updates in place (kern_ops.h).
std::vector<unsigned> updatedInPlace(const Operation& op) {
  if (op.is("kern.mbarrier_init") || op.is("kern.mbarrier_arrive") || op.is("kern.mbarrier_arrive_expect_tx") ||
      op.is("kern.cp_async") || op.is("kern.st_global") || op.is("kern.st_shared") ||
      op.is("kern.stmatrix"))
    return {0};
  if (op.is("kern.tma_load")) return {1, 3};  // the stage it fills, the mbarrier it completes on
  std::vector<unsigned> r;
  if (op.is("kern.wgmma"))  // the accumulators
    for (unsigned i = 3; i < op.numOperands(); ++i) r.push_back(i);
  return r;
}

// The first op that a decision depends on through `v`, inside `loop`: a compare, a select's
// condition, an scf.if condition or an scf.for bound. nullptr when none.
const Operation* decisionFedBy(const Value* v, const Operation& loop) {
  std::deque<const Value*> work = {v};
  std::unordered_set<const Value*> seen = {v};
  while (!work.empty()) {
    const Value* x = work.front();
    work.pop_front();
    for (const auto& use : x->uses()) {
      const Operation* user = use.user;
      if (!loop.isAncestorOf(user)) continue;
      if (user->is("arith.cmpi") || user->is("scf.for") || (user->is("arith.select") && use.operandIndex == 0) ||
          (user->is("scf.if") && use.operandIndex == 0))
        return user;
      for (const auto& r : user->results())
        if (seen.insert(r.get()).second) work.push_back(r.get());
    }
  }
  return nullptr;
}

// A kern.named_barrier whose id is a constant from 1 to 15 never meets kern.barrier (bar.sync 0).
bool provablyNotBarrierZero(const Operation& namedBarrier) {
  const Operation* def = namedBarrier.operand(0)->definingOp();
  int64_t id = def && def->is("arith.constant") ? def->intAttr("value", 0) : 0;
  return id >= 1 && id <= 15;
}

class ResidualLoop {
 public:
  ResidualLoop(Operation& kernel, Operation& loop) : kernel_(kernel), loop_(loop) {}

  // Why the loop must stay, or "" when it may go.
  std::string whyKeep() {
    for (const auto& a : loop_.attrs())
      if (a.name != "tile" && a.name != "raster" && a.name != "group_m" && a.name != "cluster" &&
          a.name != "splits" && a.name != "stream_k" && a.name != "ragged" && a.name != kKeptAttr)
        return "the loop has attribute " + quoted(a.name) + ", which this pass does not know";
    for (const std::string& role : rolesCalledFor())
      if (!hasRoleLocalCopy(role)) return "no role-local copy of this loop for role " + quoted(role);
    std::vector<const Operation*> barriers;
    std::string why;
    loop_.walk([&](const Operation& op) {
      if (why.empty() && &op != &loop_) why = statement(op, barriers);
    });
    if (!why.empty()) return why;
    for (const Operation* b : barriers)
      if (std::string r = barrierStillNeeded(*b); !r.empty()) return r;
    return {};
  }

 private:
  // "producer", "consumer", and every role the kernel declares.
  std::set<std::string> rolesCalledFor() const {
    std::set<std::string> names = {"producer", "consumer"};
    kernel_.walk([&](const Operation& op) {
      if (op.is("kern.role")) names.insert(op.stringAttr("name"));
    });
    if (const ir::Attribute* rr = kernel_.attr("role_regs"); rr && rr->isArray())
      for (const auto& e : rr->asArray())
        if (e.isArray() && !e.asArray().empty() && e.asArray()[0].isString()) names.insert(e.asArray()[0].asString());
    return names;
  }

  bool sameLoop(const Operation& other) const {
    if (!other.is("kern.tile_loop") || other.operands() != loop_.operands()) return false;
    auto attrs = [](const Operation& op) {
      std::vector<ir::NamedAttr> r;
      for (const auto& a : op.attrs())
        if (a.name != kKeptAttr) r.push_back(a);
      return r;
    };
    return attrs(other) == attrs(loop_);
  }

  bool hasRoleLocalCopy(const std::string& role) const {
    for (const auto& op : kernel_.body().operations()) {
      if (!op->is("kern.role") || op->stringAttr("name") != role) continue;
      for (const auto& inner : op->body().operations())
        if (sameLoop(*inner)) return true;
    }
    return false;
  }

  // Rules 4 and 5 for one statement; barriers are collected for the last check.
  std::string statement(const Operation& op, std::vector<const Operation*>& barriers) const {
    for (const auto& r : op.results())
      for (const auto& use : r->uses())
        if (!loop_.isAncestorOf(use.user))
          return quoted(op.name()) + " defines " + valueName(r.get()) + ", which " + quoted(use.user->name()) +
                 " uses after the loop";
    for (unsigned i : updatedInPlace(op)) {
      const Value* v = op.operand(i);
      for (const auto& use : v->uses())
        if (!loop_.isAncestorOf(use.user))
          return quoted(op.name()) + " updates " + valueName(v) + " in place, and " + quoted(use.user->name()) +
                 " uses it outside the loop";
    }
    if (isSetup(op) || op.is("scf.if") || op.is("scf.yield")) return {};
    if (op.is("kern.barrier")) {
      if (op.parentOp() != &loop_)
        return "'kern.barrier' under " + quoted(op.parentOp()->name()) + " may be reached by only some threads";
      barriers.push_back(&op);
      return {};
    }
    if (const char* effect = effectOf(op)) {
      std::string why = quoted(op.name()) + " " + effect;
      if (op.is("kern.ld_global"))
        if (const Operation* d = decisionFedBy(op.result(), loop_))
          why += ", and its value feeds a decision (" + quoted(d->name()) + ")";
      return why;
    }
    return quoted(op.name()) + " is not an op this pass recognises";
  }

  std::string barrierStillNeeded(const Operation& barrier) const {
    std::string why;
    kernel_.walk([&](const Operation& op) {
      if (!why.empty() || loop_.isAncestorOf(&op)) return;
      const Operation* role = op.enclosing("kern.role");
      if (!role) return;
      std::string what;
      if (op.is("kern.barrier")) what = "'kern.barrier'";
      else if (op.is("kern.named_barrier") && !provablyNotBarrierZero(op))
        what = "'kern.named_barrier' with an id that may be 0";
      if (!what.empty())
        why = quoted(barrier.name()) + " may still order shared-memory reuse: role " +
              quoted(role->stringAttr("name")) + " also executes " + what +
              " (bar.sync 0 counts its arrivals together with this one's)";
    });
    if (!why.empty()) return why;
    // Anything after the loop but setup may touch memory (shared, or global through a pointer or a
    // wgmma descriptor) that the roles used.
    auto& ops = kernel_.body().operations();
    for (auto it = std::next(kernel_.body().find(&loop_)); it != ops.end() && why.empty(); ++it)
      (*it)->walk([&](const Operation& op) {
        if (why.empty() && !isSetup(op) && !op.is("scf.if") && !op.is("scf.yield"))
          why = quoted(barrier.name()) + " may still order memory reuse: " + quoted(op.name()) +
                " after the loop may touch memory the roles used";
      });
    return why;
  }

  Operation& kernel_;
  Operation& loop_;
};

bool holdsRole(const Operation& op) {
  bool found = false;
  op.walk([&](const Operation& inner) { found |= inner.is("kern.role"); });
  return found;
}

// Rule 1: the candidates of one kernel.
std::vector<Operation*> residualLoops(Operation& kernel) {
  bool partitioned = false;
  for (const auto& op : kernel.body().operations())
    if (op->is("kern.role"))
      for (const auto& inner : op->body().operations()) partitioned |= inner->is("kern.tile_loop");
  std::vector<Operation*> loops;
  if (!partitioned) return loops;
  for (const auto& op : kernel.body().operations())
    if (op->is("kern.tile_loop") && !holdsRole(*op)) loops.push_back(op.get());
  return loops;
}

}  // namespace

bool removeResidualLoopPass(ir::Module& m, ir::DiagnosticEngine& diag) {
  for (const auto& kernel : m.body().operations()) {
    if (!kernel->is("kern.kernel")) continue;
    for (Operation* loop : residualLoops(*kernel)) {
      std::string why = ResidualLoop(*kernel, *loop).whyKeep();
      if (why.empty()) {
        loop->erase();
        continue;
      }
      loop->setAttr(kKeptAttr, ir::Attribute(why));
      diag.remark(loop->loc()) << kPass << " kept this loop: " << why;
    }
  }
  return true;
}

}  // namespace kiln::transforms
