// Placeholder; replaced by the strategy.
#include "transforms/pass_registry.h"
namespace kiln::transforms {
bool lowerSm80MultistagePass(ir::Module&, ir::DiagnosticEngine& diag) {
  return diag.error({}) << "lower-sm80-multistage is not implemented yet";
}
}  // namespace kiln::transforms
