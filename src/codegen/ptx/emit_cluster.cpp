// Emitters for thread-block clusters (semantics in dialects/kern/kern_ops.h, "Thread-block clusters
// and TMA multicast"):
//   kern.cluster_rank          ->  mov.u32 r, %cluster_ctarank            (PTX ISA, "Special
//                                                                         Registers: %cluster_ctarank")
//   kern.cluster_id, kern.cluster_count -> mov.u32 r, %clusterid.x / %nclusterid.x
//   kern.cluster_barrier       ->  barrier.cluster.arrive.release.aligned;
//                                  barrier.cluster.wait.acquire.aligned   (PTX ISA, "barrier.cluster":
//                                  every non-exited thread of every block of the cluster arrives; the
//                                  release/acquire pair orders each thread's earlier memory accesses,
//                                  barrier initializations included, before any access after the wait)
//   kern.mbarrier_arrive_remote ->  mapa.shared::cluster.u32 a, bar, rank;
//                                  mbarrier.arrive.shared::cluster.b64 _, [a]
//                                  (PTX ISA, "mapa": the address of the same shared variable in block
//                                  `rank`; "mbarrier.arrive": with .shared::cluster the state result
//                                  must be the sink _; the default semantics, release at CTA scope. A
//                                  .release.cluster arrive costs MEMBAR.ALL.GPU + CGAERRBAR in front of
//                                  every arrive, which the H200 showed as 35% of the consumers' stall
//                                  cycles; what the arrive publishes needs no more, see kern_ops.h).
//                                  {scope = "cluster"}: mbarrier.arrive.release.cluster.shared::cluster,
//                                  for an arrive that publishes data (the split-K hand-over's sums)
//   kern.ld_shared_remote_v4     ->  mapa.shared::cluster.u32 a, addr, rank;
//                                  ld.shared::cluster.v4.b32 {..}, [a]   (PTX ISA, "ld": the
//                                  .shared::cluster window holds every block of the cluster's shared
//                                  memory; mapa gives the peer's address of the same variable)
// All need PTX ISA 8.0 (sm_90). And programmatic dependent launch's grid dependency control (PTX
// ISA 7.8, sm_90; "griddepcontrol"):
//   kern.griddep_wait              ->  griddepcontrol.wait
//   kern.griddep_launch_dependents ->  griddepcontrol.launch_dependents
#include <fmt/format.h>

#include "codegen/ptx/emitter.h"

namespace kiln::ptx {
using namespace ir;

bool emitClusterIndex(KernelEmitter& e, const Operation& op) {
  e.requirePtxIsa(8, 0);
  const char* reg = op.is("kern.cluster_rank") ? "%cluster_ctarank" : op.is("kern.cluster_id") ? "%clusterid.x" : "%nclusterid.x";
  e.b().inst(fmt::format("mov.u32 {}, {}", e.def(op.result()).str(), reg));
  return true;
}

bool emitGridDep(KernelEmitter& e, const Operation& op) {
  e.requirePtxIsa(7, 8);
  e.b().inst(op.is("kern.griddep_wait") ? "griddepcontrol.wait" : "griddepcontrol.launch_dependents");
  return true;
}

bool emitClusterBarrier(KernelEmitter& e, const Operation&) {
  e.requirePtxIsa(8, 0);
  e.b().inst("barrier.cluster.arrive.release.aligned");
  e.b().inst("barrier.cluster.wait.acquire.aligned");
  return true;
}

bool emitMbarrierArriveRemote(KernelEmitter& e, const Operation& op) {
  e.requirePtxIsa(8, 0);
  PtxBuilder& b = e.b();
  Reg local = b.reg(RegClass::B32);
  b.inst(fmt::format("mad.lo.s32 {}, {}, 8, {}", local.str(), e.use(op.operand(1)).str(), e.use(op.operand(0)).str()));
  Reg remote = b.reg(RegClass::B32);
  b.inst(fmt::format("mapa.shared::cluster.u32 {}, {}, {}", remote.str(), local.str(), e.use(op.operand(2)).str()));
  bool cluster = op.attr("scope") && op.stringAttr("scope") == "cluster";
  b.inst(fmt::format("mbarrier.arrive{}.shared::cluster.b64 _, [{}]", cluster ? ".release.cluster" : "", remote.str()));
  return true;
}

bool emitLdSharedRemoteV4(KernelEmitter& e, const Operation& op) {
  e.requirePtxIsa(8, 0);
  PtxBuilder& b = e.b();
  SharedAddress local = stageAddress(e, op);
  Reg at = local.reg;
  if (local.imm != 0) {
    at = b.reg(RegClass::B32);
    b.inst(fmt::format("add.s32 {}, {}, {}", at.str(), local.reg.str(), local.imm));
  }
  Reg remote = b.reg(RegClass::B32);
  b.inst(fmt::format("mapa.shared::cluster.u32 {}, {}, {}", remote.str(), at.str(), e.use(op.operand(3)).str()));
  b.inst(fmt::format("ld.shared::cluster.v4.b32 {{{}, {}, {}, {}}}, [{}]", e.def(op.result(0)).str(),
                     e.def(op.result(1)).str(), e.def(op.result(2)).str(), e.def(op.result(3)).str(), remote.str()));
  return true;
}

}  // namespace kiln::ptx
