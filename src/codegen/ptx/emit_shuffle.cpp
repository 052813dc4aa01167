// Emitter for warp shuffles (kern.shfl_xor): shfl.sync.bfly.b32 d, a, offset, 0x1f, 0xffffffff
// (PTX ISA "shfl.sync"): lane l reads lane l ^ offset of the whole warp (c = 0x1f: the butterfly
// stays within the 32 lanes; membermask: every lane takes part, which the strategies guarantee by
// placing shuffles under warp-uniform control flow only).
#include <fmt/format.h>

#include "codegen/ptx/emitter.h"

namespace kiln::ptx {
using namespace ir;

bool emitShflXor(KernelEmitter& e, const Operation& op) {
  e.b().inst(fmt::format("shfl.sync.bfly.b32 {}, {}, {}, 31, -1", e.def(op.result()).str(), e.use(op.operand(0)).str(),
                         op.intAttr("offset", 1)));
  return true;
}

}  // namespace kiln::ptx
