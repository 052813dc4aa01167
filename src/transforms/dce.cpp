// Dead code elimination.
//
//   %0 = tile.constant() {value = 1.0} : f32      // unused, pure      -> removed
//   %1 = tile.load(%A, %m, %k) : tile<...>        // unused, pure      -> removed
//   tile.store(%C, %m, %n, %2)                    // side effect       -> kept
//
// Legal for an op when it is registered with the Pure trait, has no regions, and none of its results
// is used. Anything else is kept (unregistered ops, ops with effects, ops with regions). Runs to a
// fixed point, so chains of dead pure ops go in one call.
#include "kiln/ir/op_registry.h"
#include "transforms/pass_registry.h"

namespace kiln::transforms {

namespace {
bool isDead(const ir::Operation& op) {
  if (!op.info() || !op.info()->has(ir::kPure) || op.info()->has(ir::kTerminator) || op.numRegions()) return false;
  for (const auto& r : op.results())
    if (r->hasUses()) return false;
  return true;
}

bool sweep(ir::Block& block) {
  bool changed = false;
  // Back to front, so a dead op's operands are seen after it is gone.
  for (auto it = block.operations().end(); it != block.operations().begin();) {
    --it;
    ir::Operation* op = it->get();
    for (unsigned r = 0; r < op->numRegions(); ++r)
      for (auto& b : op->region(r).blocks()) changed |= sweep(*b);
    if (isDead(*op)) {
      auto dead = it;
      ++it;
      dead->get()->dropAllOperands();
      block.operations().erase(dead);
      changed = true;
    }
  }
  return changed;
}
}  // namespace

bool eliminateDeadCode(ir::Module& m, ir::DiagnosticEngine&) {
  while (sweep(m.body())) {
  }
  return true;
}

}  // namespace kiln::transforms
