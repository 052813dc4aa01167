// Emitters for mbarriers and the fences around them (semantics in dialects/kern/kern_ops.h).
//   mbarrier.init.shared::cta.b64 [bar], count                 (PTX ISA, "mbarrier.init")
//   mbarrier.arrive.expect_tx.shared::cta.b64 state, [bar], tx (PTX ISA, "mbarrier.arrive";
//                                                               .expect_tx needs sm_90)
//   mbarrier.arrive.shared::cta.b64 state, [bar]               (release semantics by default)
//   loop: mbarrier.try_wait.parity{.acquire.cluster}.shared::cta.b64 p, [bar], parity; @!p bra loop
//                                                               (PTX ISA, "mbarrier.test_wait /
//                                                               try_wait": acquire at CTA scope by
//                                                               default; {scope = "cluster"} widens it)
//   fence.mbarrier_init.release.cluster                         (PTX ISA, "membar/fence": makes
//                                                               the inits visible to the async proxy
//                                                               and other threads' barrier ops)
//   fence.proxy.async.shared::cta                               (generic-proxy smem writes become
//                                                               visible to TMA / wgmma)
// Barrier i of a ring lives at ring + 8 i (a 64-bit mbarrier object, 8-byte aligned).
#include <fmt/format.h>

#include "codegen/ptx/emitter.h"

namespace kiln::ptx {
using namespace ir;

namespace {

Reg barrierAddress(KernelEmitter& e, const Operation& op) {
  Reg a = e.b().reg(RegClass::B32);
  e.b().inst(fmt::format("mad.lo.s32 {}, {}, 8, {}", a.str(), e.use(op.operand(1)).str(), e.use(op.operand(0)).str()));
  return a;
}

}  // namespace

bool emitMbarrierAlloc(KernelEmitter& e, const Operation& op) {
  Reg r = e.def(op.result());
  Reg t = e.b().reg(RegClass::B32);
  e.b().inst(fmt::format("mov.u32 {}, {}", t.str(), kSmemSymbol));
  e.b().inst(fmt::format("add.s32 {}, {}, {}", r.str(), t.str(), op.intAttr("offset", 0)));
  return true;
}

bool emitMbarrierInit(KernelEmitter& e, const Operation& op) {
  Reg a = barrierAddress(e, op);
  e.b().inst(fmt::format("mbarrier.init.shared::cta.b64 [{}], {}", a.str(), op.intAttr("count", 1)));
  return true;
}

bool emitMbarrierArriveExpectTx(KernelEmitter& e, const Operation& op) {
  Reg a = barrierAddress(e, op);
  Reg state = e.b().reg(RegClass::B64);
  e.b().inst(fmt::format("mbarrier.arrive.expect_tx.shared::cta.b64 {}, [{}], {}", state.str(), a.str(),
                         op.intAttr("bytes", 0)));
  return true;
}

bool emitMbarrierArrive(KernelEmitter& e, const Operation& op) {
  Reg a = barrierAddress(e, op);
  Reg state = e.b().reg(RegClass::B64);
  e.b().inst(fmt::format("mbarrier.arrive.shared::cta.b64 {}, [{}]", state.str(), a.str()));
  return true;
}

bool emitMbarrierWait(KernelEmitter& e, const Operation& op) {
  PtxBuilder& b = e.b();
  Reg a = barrierAddress(e, op);
  Reg p = b.reg(RegClass::Pred);
  std::string loop = b.label();
  b.placeLabel(loop);
  // {scope = "cluster"}: acquire at cluster scope, to synchronize with arrivals and TMA
  // complete-tx from other blocks of the cluster (PTX ISA 8.0).
  bool cluster = op.stringAttr("scope") == "cluster";
  if (cluster) e.requirePtxIsa(8, 0);
  b.inst(fmt::format("mbarrier.try_wait.parity{}.shared::cta.b64 {}, [{}], {}", cluster ? ".acquire.cluster" : "",
                     p.str(), a.str(), e.use(op.operand(2)).str()));
  b.instIf(p, "bra " + loop, /*negate=*/true);
  return true;
}

bool emitFence(KernelEmitter& e, const Operation& op) {
  if (op.stringAttr("kind") == "mbarrier_init") e.b().inst("fence.mbarrier_init.release.cluster");
  else e.b().inst("fence.proxy.async.shared::cta");
  return true;
}

}  // namespace kiln::ptx
