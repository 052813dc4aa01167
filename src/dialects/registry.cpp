// registerAllDialects (contract in kiln/dialects.h): every dialect's op table, in one registry.
#include "kiln/dialects.h"

#include "kiln/ir/op_registry.h"

namespace kiln {
namespace ir {
// Each dialect's table (src/dialects/*/).
void registerBuiltinDialect(OpRegistry&);
void registerArithDialect(OpRegistry&);
void registerTileDialect(OpRegistry&);
void registerKernDialect(OpRegistry&);
}  // namespace ir

void registerAllDialects() {
  ir::OpRegistry::install([](ir::OpRegistry& r) {
    ir::registerBuiltinDialect(r);
    ir::registerArithDialect(r);
    ir::registerTileDialect(r);
    ir::registerKernDialect(r);
  });
}

}  // namespace kiln
