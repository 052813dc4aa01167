// The builtin dialect: the module that holds programs and kernels.
#include "kiln/ir/op_registry.h"

namespace kiln::ir {

void registerBuiltinDialect(OpRegistry& r) {
  r.add({"builtin.module", 0, 0, 1, kIsolated, nullptr, "a list of programs and kernels"});
}

}  // namespace kiln::ir
