// Emitter for TMA loads (semantics in dialects/kern/kern_ops.h):
//   cp.async.bulk.tensor.{2d|3d}.shared::cluster.global.tile.mbarrier::complete_tx::bytes
//       [dst], [tmap, {c0, c1(, c2)}], [bar]
// (PTX ISA, "cp.async.bulk.tensor": tmap is the generic address of the CUtensorMap, here the
// kernel parameter's; coordinates are signed 32-bit element indices, fastest dim first; elements
// outside the tensor are filled with zeros and still count toward the transaction bytes). A CTA
// launched without a cluster is a cluster of one, so its own shared::cta addresses are valid
// shared::cluster addresses.
#include <fmt/format.h>

#include "codegen/ptx/emitter.h"
#include "dialects/kern/kern_ops.h"

namespace kiln::ptx {
using namespace ir;

bool emitTmaLoad(KernelEmitter& e, const Operation& op) {
  PtxBuilder& b = e.b();
  auto l = *kern::smemLayout(op.operand(1)->type());
  Reg dst = b.reg(RegClass::B32);
  b.inst(fmt::format("mad.lo.s32 {}, {}, {}, {}", dst.str(), e.use(op.operand(2)).str(), l.stageBytes(),
                     e.use(op.operand(1)).str()));
  Reg bar = b.reg(RegClass::B32);
  b.inst(fmt::format("mad.lo.s32 {}, {}, 8, {}", bar.str(), e.use(op.operand(4)).str(), e.use(op.operand(3)).str()));
  std::string coords;
  for (unsigned i = 5; i < op.numOperands(); ++i) coords += (i > 5 ? ", " : "") + e.use(op.operand(i)).str();
  int64_t rowOff = op.intAttr("row", 0) * l.rowBytes();
  SharedAddress addr{dst, rowOff};
  b.inst(fmt::format("cp.async.bulk.tensor.{}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes {}, [{}, {{{}}}], [{}]",
                     op.numOperands() - 5, addr.operand(), e.use(op.operand(0)).str(), coords, bar.str()));
  return true;
}

}  // namespace kiln::ptx
