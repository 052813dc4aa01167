// Emitters for TMA loads and stores (semantics in dialects/kern/kern_ops.h):
//   cp.async.bulk.tensor.{2d|3d}.shared::cluster.global.tile.mbarrier::complete_tx::bytes
//       [dst], [tmap, {c0, c1(, c2)}], [bar]
// (PTX ISA, "cp.async.bulk.tensor": tmap is the generic address of the CUtensorMap, here the
// kernel parameter's; coordinates are signed 32-bit element indices, fastest dim first; elements
// outside the tensor are filled with zeros and still count toward the transaction bytes).
//   ... .mbarrier::complete_tx::bytes.multicast::cluster [dst], [tmap, {...}], [bar], ctaMask
// (with {multicast}: the box is written at dst's CTA-relative offset into every block of the cluster
// whose bit is set in the 16-bit ctaMask, and each destination block's mbarrier at bar's offset
// receives the complete-tx of the bytes written there).
//   cp.async.bulk.tensor.{2d|3d}.global.shared::cta.bulk_group [tmap, {c0, c1(, c2)}], [src]
//   cp.async.bulk.commit_group / cp.async.bulk.wait_group{.read} N
//   prefetch.tensormap [tmap]  (kern.prefetch_tensormap)
// (PTX ISA, "cp.async.bulk.tensor", "cp.async.bulk.commit_group", "cp.async.bulk.wait_group": a
// store writes only the elements inside the tensor; .read waits until the source shared memory
// has been read, after which it may be overwritten). A CTA
// launched without a cluster is a cluster of one, so its own shared::cta addresses are valid
// shared::cluster addresses.
//   {stream}: createpolicy.fractional.L2::evict_first.b64 policy, 1.0;
//             @flag  cp.async.bulk.tensor... .L2::cache_hint [dst], [tmap, {...}], [bar](, mask), policy
//             @!flag cp.async.bulk.tensor... [dst], [tmap, {...}], [bar](, mask)
// (PTX ISA, "createpolicy": an opaque policy applied by the loads that name it; evict_first lines
// are the first candidates for replacement, so data read once does not displace what L2 holds).
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
  int64_t rowOff = op.intAttr("row", 0) * l.rowBytes();
  SharedAddress addr{dst, rowOff};
  // {stream}: the last operand is the i1 that picks the evict_first copy; the coordinates stop
  // before it.
  const bool stream = op.attr("stream") && op.attr("stream")->asBool();
  const unsigned nCoords = op.numOperands() - 5 - (stream ? 1 : 0);
  std::string coords;
  for (unsigned i = 5; i < 5 + nCoords; ++i) coords += (i > 5 ? ", " : "") + e.use(op.operand(i)).str();
  std::string head = fmt::format("cp.async.bulk.tensor.{}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
                                 nCoords);
  std::string mask;
  if (op.attr("multicast")) {
    // {multicast = mask}: the 16-bit ctaMask operand; dst and bar are this block's offsets, used in
    // every destination block (PTX ISA 8.0, sm_90a).
    e.requirePtxIsa(8, 0);
    Reg m = b.reg(RegClass::B16);
    b.inst(fmt::format("mov.b16 {}, {}", m.str(), op.intAttr("multicast", 0)));
    head += ".multicast::cluster";
    mask = ", " + m.str();
  }
  std::string operands = fmt::format("{}, [{}, {{{}}}], [{}]{}", addr.operand(), e.use(op.operand(0)).str(), coords,
                                     bar.str(), mask);
  if (!stream) {
    b.inst(head + " " + operands);
    return true;
  }
  // Both forms, predicated on the flag: the plain copy stays exactly what it is without {stream}
  // (an explicit evict_normal policy is not the same as none: it measured slower on the H200).
  Reg policy = b.reg(RegClass::B64);
  b.inst(fmt::format("createpolicy.fractional.L2::evict_first.b64 {}, 1.0", policy.str()));
  Reg flag = e.use(op.operand(op.numOperands() - 1));
  b.instIf(flag, head + ".L2::cache_hint " + operands + ", " + policy.str());
  b.instIf(flag, head + " " + operands, /*negate=*/true);
  return true;
}

bool emitPrefetchTensormap(KernelEmitter& e, const Operation& op) {
  e.requirePtxIsa(8, 0);
  e.b().inst(fmt::format("prefetch.tensormap [{}]", e.use(op.operand(0)).str()));
  return true;
}

bool emitTmaStore(KernelEmitter& e, const Operation& op) {
  PtxBuilder& b = e.b();
  auto l = *kern::smemLayout(op.operand(1)->type());
  Reg src = b.reg(RegClass::B32);
  b.inst(fmt::format("mad.lo.s32 {}, {}, {}, {}", src.str(), e.use(op.operand(2)).str(), l.stageBytes(),
                     e.use(op.operand(1)).str()));
  std::string coords;
  for (unsigned i = 3; i < op.numOperands(); ++i) coords += (i > 3 ? ", " : "") + e.use(op.operand(i)).str();
  SharedAddress addr{src, op.intAttr("row", 0) * l.rowBytes()};
  std::string store = fmt::format("cp.async.bulk.tensor.{}d.global.shared::cta.bulk_group", op.numOperands() - 3);
  std::string operands = fmt::format("[{}, {{{}}}], {}", e.use(op.operand(0)).str(), coords, addr.operand());
  b.inst(fmt::format("{} {}", store, operands));
  return true;
}

bool emitBulkCommit(KernelEmitter& e, const Operation&) {
  e.b().inst("cp.async.bulk.commit_group");
  return true;
}

bool emitBulkWait(KernelEmitter& e, const Operation& op) {
  e.b().inst(fmt::format("cp.async.bulk.wait_group{} {}", op.attr("read")->asBool() ? ".read" : "",
                         op.intAttr("pending", 0)));
  return true;
}

}  // namespace kiln::ptx
