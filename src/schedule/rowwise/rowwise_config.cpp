// The rowwise strategy's config rules (config.h, validateRowwise). What depends on the program
// (registers for the row's vectors, the row length's divisibility) is checked by the lowering.
#include "schedule/config.h"

namespace kiln {

bool validateRowwise(const Config& c, const Target& t, const OperandInfo&, ir::DiagnosticEngine& diag,
                     const ir::Location& loc) {
  size_t errors = diag.errorCount();
  auto pow2 = [](int v) { return v > 0 && (v & (v - 1)) == 0; };
  if (!pow2(c.rowThreads))
    diag.error(loc) << "row_threads=" << c.rowThreads
                    << " must be a power of two (a row's threads reduce by butterfly shuffles)";
  if (c.blockThreads % 32 != 0)
    diag.error(loc) << "block_threads=" << c.blockThreads << " must be a multiple of 32 (whole warps)";
  if (c.blockThreads > t.maxThreadsPerBlock)
    diag.error(loc) << "block_threads=" << c.blockThreads << " is over the " << t.maxThreadsPerBlock
                    << "-thread block limit of " << t.name;
  if (c.blockThreads % c.rowThreads != 0)
    diag.error(loc) << "block_threads=" << c.blockThreads << " must be a multiple of row_threads=" << c.rowThreads
                    << " (each block holds whole rows)";
  return diag.errorCount() == errors;
}

}  // namespace kiln
