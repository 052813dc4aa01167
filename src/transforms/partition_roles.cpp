// partition-roles: a persistent tile loop whose body holds role-tagged regions becomes one
// role-local tile loop per role, each walking the same tile sequence.
//
//   Before:
//     kern.tile_loop(%M, %N, %Bt) {tile = [128, 128], raster = "grouped", group_m = 8} {
//     ^bb0(%iter, %m0, %n0, %b):
//       %x = arith.muli(%iter, %kt)                               (shared, pure)
//       kern.role {name = "producer", warpgroups = [0, 1]} { P(%x, %m0) }
//       kern.role {name = "consumer", warpgroups = [1, 2]} { C(%x, %n0) }
//     }
//   After:
//     kern.role {name = "producer", warpgroups = [0, 1]} {
//       kern.tile_loop(%M, %N, %Bt) {...} { ^bb0(...): %x = arith.muli(...)  P(%x, %m0) }
//     }
//     kern.role {name = "consumer", warpgroups = [1, 2]} {
//       kern.tile_loop(%M, %N, %Bt) {...} { ^bb0(...): %x = arith.muli(...)  C(%x, %n0) }
//     }
//     kern.tile_loop(%M, %N, %Bt) {...} { ^bb0(...): %x = arith.muli(...) }   (residual shared loop)
//
// Why it is the same program. kern.tile_loop's tile sequence depends only on its operands,
// attributes and the block index (kern_ops.h), so every copy walks the same tiles in the same order
// with the same body arguments. A role region runs only on its warpgroups; after the split each
// warpgroup runs its own role's statements for every tile, in tile order, exactly as before; the
// roles' relative timing was never fixed (they only meet through mbarriers, which order by
// themselves). The shared statements are pure, so copying them into each role (and leaving them in
// the residual loop) changes nothing observable. The residual loop keeps the shared statements for
// whoever else might read them; a later pass removes it when it does no observable work.
//
// Legal only when all of these hold (otherwise the loop is kept as it is):
//   * the loop is not itself inside a kern.role, and its body holds at least one kern.role;
//   * every other op of the body is registered, pure and has no regions;
//   * the roles have distinct names and disjoint warpgroups;
//   * no role region holds a kern.tile_loop (a nested persistent loop would change meaning).
#include <set>

#include "kiln/ir/op_registry.h"
#include "transforms/pass_registry.h"

namespace kiln::transforms {
namespace {

using ir::Operation;

bool partitionable(const Operation& loop) {
  if (loop.enclosing("kern.role")) return false;
  std::set<std::string> names;
  std::vector<std::pair<int64_t, int64_t>> groups;
  int roles = 0;
  for (const auto& op : loop.body().operations()) {
    if (op->is("kern.role")) {
      ++roles;
      auto wg = op->intsAttr("warpgroups");
      if (wg.size() != 2 || !names.insert(op->stringAttr("name")).second) return false;
      for (auto [f, c] : groups)
        if (wg[0] < f + c && f < wg[0] + wg[1]) return false;
      groups.push_back({wg[0], wg[1]});
      bool nested = false;
      op->walk([&](const Operation& inner) { nested |= inner.is("kern.tile_loop"); });
      if (nested) return false;
      continue;
    }
    if (!op->info() || !op->info()->has(ir::kPure) || op->numRegions() != 0) return false;
  }
  return roles > 0;
}

// A copy of `loop` (same operands and attributes) holding the shared ops and `role`'s statements.
std::unique_ptr<Operation> roleLoop(const Operation& loop, const Operation& role) {
  auto copy = Operation::create(loop.loc(), loop.name(), loop.operands(), {}, loop.attrs(), 1);
  ir::Block* body = copy->region(0).addBlock();
  std::unordered_map<const ir::Value*, ir::Value*> map;
  for (const auto& a : loop.body().arguments()) map[a.get()] = body->addArgument(a->type(), a->nameHint());
  for (const auto& op : loop.body().operations()) {
    if (op.get() == &role) {
      for (const auto& inner : role.body().operations()) body->push_back(ir::cloneOp(*inner, map));
    } else if (!op->is("kern.role")) {
      body->push_back(ir::cloneOp(*op, map));
    }
  }
  auto wrapper = Operation::create(role.loc(), role.name(), {}, {}, role.attrs(), 1);
  wrapper->region(0).addBlock()->push_back(std::move(copy));
  return wrapper;
}

void partition(Operation& loop) {
  ir::Block* parent = loop.parentBlock();
  std::vector<Operation*> roles;
  for (const auto& op : loop.body().operations())
    if (op->is("kern.role")) roles.push_back(op.get());
  auto pos = parent->find(&loop);
  for (Operation* role : roles) parent->insert(pos, roleLoop(loop, *role));
  // The residual shared loop: the original, without its roles (their values are local to them).
  for (Operation* role : roles) {
    role->walk([](Operation& inner) { inner.dropAllOperands(); });
    loop.body().take(role);
  }
}

}  // namespace

bool partitionRolesPass(ir::Module& m, ir::DiagnosticEngine&) {
  std::vector<Operation*> loops;
  m.op().walk([&](Operation& op) {
    if (op.is("kern.tile_loop") && partitionable(op)) loops.push_back(&op);
  });
  for (Operation* loop : loops) partition(*loop);
  return true;
}

}  // namespace kiln::transforms
