// Emitters for thread and block indices and the grid size. The warp index is threadIdx.x / 32, not %warpid (PTX ISA,
// "%warpid": a physical slot that may change during execution, unfit for program logic), and it is
// broadcast from lane 0 (shfl.sync.idx): the same value, but one ptxas can prove warp-uniform. Its
// uniformity analysis does not see that tid.x / 32 is, so everything computed from the warp index
// (a warpgroup's rows in a stage, hence its wgmma descriptors) stayed on the vector pipe and reached
// the wgmma through R2UR; with the broadcast it runs on the uniform datapath (UIADD3, ULEA), as in
// cuBLASLt's kernels. The shuffle needs every lane of the warp: kern.warp_id's verifier keeps it
// out of divergent regions.
#include <fmt/format.h>

#include "codegen/ptx/emitter.h"

namespace kiln::ptx {
using namespace ir;

bool emitThreadIndex(KernelEmitter& e, const Operation& op) {
  Reg r = e.def(op.result());
  PtxBuilder& b = e.b();
  if (op.is("kern.thread_id")) {
    b.inst(fmt::format("mov.u32 {}, %tid.x", r.str()));
  } else if (op.is("kern.lane_id")) {
    b.inst(fmt::format("mov.u32 {}, %laneid", r.str()));
  } else if (op.is("kern.warp_id")) {
    Reg t = b.reg(RegClass::B32);
    Reg w = b.reg(RegClass::B32);
    b.inst(fmt::format("mov.u32 {}, %tid.x", t.str()));
    b.inst(fmt::format("shr.u32 {}, {}, 5", w.str(), t.str()));
    b.inst(fmt::format("shfl.sync.idx.b32 {}, {}, 0, 31, -1", r.str(), w.str()));
  } else if (op.is("kern.grid_dim")) {
    b.inst(fmt::format("mov.u32 {}, %nctaid.{}", r.str(), op.stringAttr("dim")));
  } else {
    b.inst(fmt::format("mov.u32 {}, %ctaid.{}", r.str(), op.stringAttr("dim")));
  }
  return true;
}

}  // namespace kiln::ptx
