// Emitters for warp specialization and persistence: kern.role, kern.setmaxnreg (semantics in
// dialects/kern/kern_ops.h). kern.tile_loop has no emitter: expand-tile-loop writes the tile
// scheduler out as kern IR (an scf.for over the block's units) before the PTX is emitted, and a
// loop that reaches this stage is reported; so are the staged box's markers (kern.stage_begin,
// kern.stage_end), which sm90-stage-epilogue replaces by its protocol.
//
//   kern.role {warpgroups = [f, c]}     ->  t = lane 0's tid.x (shfl.sync.idx);
//                                            setp.lt.u32 p, t - 128 f, 128 c;  @!p bra.uni skip;
//                                            bar.warp.sync -1; body;  skip:
//                                            (whole warpgroups: warp-uniform, converged)
//   kern.setmaxnreg {action, regs}      ->  setmaxnreg.{inc|dec}.sync.aligned.u32 regs
//                                            (PTX ISA, "setmaxnreg"; sm_90a)
#include <fmt/format.h>

#include "codegen/ptx/emitter.h"

namespace kiln::ptx {
using namespace ir;

namespace {

Reg special(PtxBuilder& b, const char* name) {
  Reg r = b.reg(RegClass::B32);
  b.inst(fmt::format("mov.u32 {}, {}", r.str(), name));
  return r;
}

Reg binary(PtxBuilder& b, const char* op, const Reg& x, const std::string& y) {
  Reg r = b.reg(RegClass::B32);
  b.inst(fmt::format("{} {}, {}, {}", op, r.str(), x.str(), y));
  return r;
}

}  // namespace

// The role's threads are whole warpgroups, so the branch is warp-uniform; the condition is computed
// from lane 0's tid.x (broadcast by shfl.sync.idx) so that ptxas can prove it. From a raw %tid.x its
// uniformity analysis takes the branch as divergent, and then nothing inside the role (a loop's
// stage index, the wgmma descriptors built from it, a tensor map's address) is given uniform
// registers: every wgmma's descriptors reached it through R2UR. No scf.if encloses a role
// (verifyRole), so every lane of every warp reaches the shuffle.
bool emitRole(KernelEmitter& e, const Operation& op) {
  PtxBuilder& b = e.b();
  auto wg = op.intsAttr("warpgroups");
  Reg tid = special(b, "%tid.x");
  b.inst(fmt::format("shfl.sync.idx.b32 {}, {}, 0, 31, -1", tid.str(), tid.str()));
  Reg rel = wg[0] ? binary(b, "sub.s32", tid, std::to_string(wg[0] * 128)) : tid;
  Reg p = b.reg(RegClass::Pred);
  b.inst(fmt::format("setp.lt.u32 {}, {}, {}", p.str(), rel.str(), wg[1] * 128));
  std::string skip = b.label();
  b.instIf(p, "bra.uni " + skip, /*negate=*/true);
  // A role without setmaxnreg (one consumer warpgroup) needs the warp's convergence said outright:
  // without it ptxas kept the region's descriptors on the vector pipe even with the broadcast
  // condition. setmaxnreg, being .sync.aligned, says it too.
  b.inst("bar.warp.sync -1");
  if (!e.emitBlock(op.body())) return false;
  b.placeLabel(skip);
  return true;
}

bool emitTileLoop(KernelEmitter& e, const Operation& op) {
  return e.fail(op, "the tile scheduler is emitted as the kern IR expand-tile-loop writes; run that pass first (the "
                    "sm90 pipeline does), on a loop kern.tile_loop's verifier accepts");
}

bool emitStageMarker(KernelEmitter& e, const Operation& op) {
  return e.fail(op, "a staged output box is stored by the protocol sm90-stage-epilogue writes around it; run that "
                    "pass first (the sm90 pipeline does)");
}

bool emitSetMaxNReg(KernelEmitter& e, const Operation& op) {
  e.b().inst(fmt::format("setmaxnreg.{}.sync.aligned.u32 {}", op.stringAttr("action"), op.intAttr("regs", 0)));
  return true;
}

}  // namespace kiln::ptx
