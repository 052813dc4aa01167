// The gemv strategy's config rules (config.h, validateGemv). What depends on the program (B's
// layout decides whether bn is split over threads along N or over groups of row_threads) is
// checked by the lowering (gemv.cpp).
#include "schedule/config.h"

namespace kiln {

bool validateGemv(const Config& c, const Target& t, const OperandInfo&, ir::DiagnosticEngine& diag,
                  const ir::Location& loc) {
  size_t errors = diag.errorCount();
  auto pow2 = [](int v) { return v > 0 && (v & (v - 1)) == 0; };
  if (c.bm > 16)
    diag.error(loc) << "bm=" << c.bm << " is over 16: gemv keeps bm rows of sums per thread in registers and is "
                    << "meant for M up to 16; use a GEMM strategy for larger M";
  if (c.bn % 8 != 0)
    diag.error(loc) << "bn=" << c.bn << " must be a multiple of 8 (the epilogue stores 8-column slices)";
  if (c.blockThreads % 32 != 0)
    diag.error(loc) << "block_threads=" << c.blockThreads << " must be a multiple of 32 (whole warps)";
  else if (c.bn % 8 == 0 && c.bn / 8 > c.blockThreads / 32 && (c.bn / 8) % (c.blockThreads / 32) != 0)
    diag.error(loc) << "bn=" << c.bn << " has " << c.bn / 8 << " slices of 8 columns, which the "
                    << c.blockThreads / 32 << " warps of block_threads=" << c.blockThreads
                    << " cannot share evenly in the epilogue; make bn / 8 a multiple of the warps or at most them";
  if (c.blockThreads > t.maxThreadsPerBlock)
    diag.error(loc) << "block_threads=" << c.blockThreads << " is over the " << t.maxThreadsPerBlock
                    << "-thread block limit of " << t.name;
  if (!pow2(c.rowThreads) || c.rowThreads > 32)
    diag.error(loc) << "row_threads=" << c.rowThreads
                    << " must be a power of two up to 32 (the lanes along K reduce by butterfly shuffles)";
  else if (c.blockThreads % c.rowThreads != 0)
    diag.error(loc) << "block_threads=" << c.blockThreads << " must be a multiple of row_threads=" << c.rowThreads;
  return diag.errorCount() == errors;
}

}  // namespace kiln
