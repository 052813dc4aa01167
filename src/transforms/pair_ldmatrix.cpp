// pair-ldmatrix: two .x2 ldmatrix of neighbouring fragments become one .x4.
//
//   Before:
//     %o = kern.ldsm_offset(%B, %wr, %wc) {quads = [0, 0, 8, 0, 0, 8, 8, 8], stride = [0, 32], base = [0, 0]}
//     %b0, %b1 = kern.ldmatrix(%B, %s, %o) {num = 2, trans = true, row = 16, col = 0}
//     ...pure ops...
//     %b2, %b3 = kern.ldmatrix(%B, %s, %o) {num = 2, trans = true, row = 16, col = 8}
//   After:
//     %b0, %b1, %b2, %b3 = kern.ldmatrix(%B, %s, %o) {num = 4, trans = true, row = 16, col = 0}
//
// Why it is the same load. An .x2 uses the addresses of lanes 0..15 (matrices 0 and 1); an .x4 also
// those of lanes 16..31 (matrices 2 and 3). kern.ldsm_offset gives lane l the element position
// P(wr, wc) + base + quads[l / 8] + (l % 8, 0), and a load adds its displacement {row, col}
// (kern_ops.h). Write eff(load) = base + {row, col}. The .x4's matrices 2 and 3 sit at quads[2]
// and quads[3] = quads[1] + quads[2] from the first load's eff: exactly the second load's matrices
// 0 and 1 when eff(second) = eff(first) + quads[2]. The two loads may use different offset ops
// (e.g. the second with base + [8, 0], when an 8-row displacement alone would not compose with the
// swizzle) as long as those agree on everything but base. Results keep their order: the .x4's
// registers 0, 1 are the first load's and 2, 3 the second's (PTX ISA, ldmatrix: the destination
// vector holds one fragment per matrix, in matrix order).
//
// Legal only when all of these hold (otherwise the code is kept as it is):
//   * both ops are kern.ldmatrix {num = 2} in the same block, with the same buffer and slot and
//     the same {trans};
//   * both offsets are defined by kern.ldsm_offset ops with the same operands, quads and stride,
//     and eff(second) = eff(first) + quads[2];
//   * the first load's displacement composes with the swizzle for all four lane groups (the
//     verifier re-checks the fused op; if it would fail, the pair is kept);
//   * every op between them is pure and has no regions (nothing can write shared memory or
//     synchronize between the two reads, so reading both at the first one's place is the same);
//   * the fused op verifies (its displacement is the first's, which already does).
#include "dialects/kern/kern_ops.h"
#include "kiln/ir/op_registry.h"
#include "target/swizzle.h"
#include "transforms/pass_registry.h"

namespace kiln::transforms {
namespace {

using ir::Operation;

bool isX2(const Operation& op) { return op.is("kern.ldmatrix") && op.intAttr("num", 0) == 2 && op.numResults() == 2; }

// eff(load) (see above); nullopt when the offset is not a kern.ldsm_offset.
std::optional<std::pair<int64_t, int64_t>> eff(const Operation& load) {
  const Operation* off = load.operand(2)->definingOp();
  auto info = off ? kern::ldsmOffsetInfo(*off) : std::nullopt;
  if (!info) return std::nullopt;
  return std::make_pair(info->base[0] + load.intAttr("row", 0), info->base[1] + load.intAttr("col", 0));
}

bool sameOffsetFamily(const Operation& a, const Operation& b) {
  return a.operands() == b.operands() && *a.attr("quads") == *b.attr("quads") && *a.attr("stride") == *b.attr("stride");
}

// The fused load's displacement (the first's) must compose with all four lane groups.
bool x4Composes(const Operation& first) {
  auto layout = kern::smemLayout(first.operand(0)->type());
  const Operation* off = first.operand(2)->definingOp();
  if (!layout || !off) return false;
  return displace(layout->swizzle, layout->rowBytes(), layout->elemBytes(), first.intAttr("row", 0),
                  first.intAttr("col", 0), kern::runtimeChunks(*off, 4, layout->elemBytes()))
      .has_value();
}

// The second load of a pair, searching forward from `first`; nullptr when there is none.
Operation* findPartner(ir::Block& b, ir::Block::iterator first) {
  const Operation& p = **first;
  auto pe = eff(p);
  if (!pe || !x4Composes(p)) return nullptr;
  const Operation* poff = p.operand(2)->definingOp();
  auto info = kern::ldsmOffsetInfo(*poff);
  const ir::Attribute* trans = p.attr("trans");
  for (auto it = std::next(first); it != b.operations().end(); ++it) {
    Operation& c = **it;
    if (isX2(c) && c.operand(0) == p.operand(0) && c.operand(1) == p.operand(1) && c.attr("trans") && trans &&
        *c.attr("trans") == *trans) {
      auto ce = eff(c);
      if (ce && sameOffsetFamily(*poff, *c.operand(2)->definingOp()) && ce->first == pe->first + info->quads[2][0] &&
          ce->second == pe->second + info->quads[2][1])
        return &c;
    }
    // Anything that may write memory, synchronize or hide such an effect in a region ends the search.
    if (!c.info() || !c.info()->has(ir::kPure) || c.numRegions() != 0) return nullptr;
  }
  return nullptr;
}

bool pairBlock(ir::Block& b) {
  bool changed = false;
  for (auto it = b.operations().begin(); it != b.operations().end(); ++it) {
    Operation& op = **it;
    for (unsigned r = 0; r < op.numRegions(); ++r)
      for (auto& blk : op.region(r).blocks()) changed |= pairBlock(*blk);
    if (!isX2(op)) continue;
    Operation* second = findPartner(b, it);
    if (!second) continue;
    std::vector<ir::Type> types(4, op.result(0)->type());
    auto fused = Operation::create(op.loc(), "kern.ldmatrix", op.operands(), types, op.attrs());
    fused->setAttr("num", int64_t{4});
    Operation* x4 = b.insert(it, std::move(fused));
    for (unsigned i = 0; i < 2; ++i) {
      x4->result(i)->setNameHint(op.result(i)->nameHint());
      x4->result(2 + i)->setNameHint(second->result(i)->nameHint());
      op.result(i)->replaceAllUsesWith(x4->result(i));
      second->result(i)->replaceAllUsesWith(x4->result(2 + i));
    }
    second->erase();
    it = b.find(x4);  // the old first load sits right after x4; erase it and continue from x4
    std::next(it)->get()->erase();
    changed = true;
  }
  return changed;
}

}  // namespace

bool pairLdmatrixPass(ir::Module& m, ir::DiagnosticEngine&) {
  for (auto& op : m.body().operations())
    if (op->is("kern.kernel")) pairBlock(op->body());
  return true;
}

}  // namespace kiln::transforms
