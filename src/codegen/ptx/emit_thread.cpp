// Emitters for thread and block indices. The warp index is threadIdx.x / 32, not %warpid (PTX ISA,
// "%warpid": a physical slot that may change during execution, unfit for program logic).
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
    b.inst(fmt::format("mov.u32 {}, %tid.x", t.str()));
    b.inst(fmt::format("shr.u32 {}, {}, 5", r.str(), t.str()));
  } else {
    b.inst(fmt::format("mov.u32 {}, %ctaid.{}", r.str(), op.stringAttr("dim")));
  }
  return true;
}

}  // namespace kiln::ptx
