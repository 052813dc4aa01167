// kern-dce: removes pure ops whose results are unused.
//
//   Before:  %a = arith.addi(%x, %y) : i32        (no uses of %a)
//            %f0, %f1 = kern.ldmatrix(...)         (no uses of either result)
//   After:   (both gone)
//
// Legal for an op that the registry marks kPure, that has at least one result, no regions, and
// no result with a use. Everything else is kept (stores, copies, barriers, loops, terminators).
// Iterates to a fixed point so chains of dead ops disappear.
#include "kiln/ir/op_registry.h"
#include "transforms/pass_registry.h"

namespace kiln::transforms {
namespace {

bool dead(const ir::Operation& op) {
  if (!op.info() || !op.info()->has(ir::kPure) || op.info()->has(ir::kTerminator)) return false;
  if (op.numResults() == 0 || op.numRegions() != 0) return false;
  for (const auto& r : op.results())
    if (r->hasUses()) return false;
  return true;
}

bool sweepBlock(ir::Block& b) {
  bool changed = false;
  // Back to front: a dead user goes before its operands are looked at.
  for (auto it = b.operations().end(); it != b.operations().begin();) {
    --it;
    ir::Operation* op = it->get();
    for (unsigned r = 0; r < op->numRegions(); ++r)
      for (auto& blk : op->region(r).blocks()) changed |= sweepBlock(*blk);
    if (dead(*op)) {
      auto victim = it;
      ++it;  // stay valid: erase the element, then continue from the one after it
      op->dropAllOperands();
      b.operations().erase(victim);
      changed = true;
    }
  }
  return changed;
}

}  // namespace

bool kernDcePass(ir::Module& m, ir::DiagnosticEngine&) {
  for (auto& op : m.body().operations()) {
    if (!op->is("kern.kernel")) continue;
    while (sweepBlock(op->body())) {
    }
  }
  return true;
}

}  // namespace kiln::transforms
