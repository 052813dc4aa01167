// The kern dialect: the explicit GPU level (ops declared in kern_ops.def).
#include "kiln/ir/op_registry.h"

namespace kiln::ir {
void registerKernDialect(OpRegistry&) {}
}  // namespace kiln::ir
