// The ordered pipeline (contract in pipeline.h).
#include "transforms/pipeline.h"

#include <cstdlib>
#include <iostream>

#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"
#include "transforms/pass_registry.h"

namespace kiln::transforms {

std::vector<std::string> pipelineSteps(std::string_view strategy) {
  if (strategy == "sm80_multistage")
    return {
        "verify",                 // the tile program as the user wrote it
        "lower-sm80-multistage",  // tile -> kern: cp.async ring, ldmatrix, mma.sync, fused epilogue
        "pair-ldmatrix",          // B fragments: two .x2 -> one .x4
        "dce",                    // drop what the rewrites left unused
    };
  if (strategy == "sm90_ws_persistent")
    return {
        "verify",                    // the tile program as the user wrote it
        "lower-sm90-ws-persistent",  // tile -> kern: TMA ring, mbarriers, wgmma, one CTA-wide persistent
                                     // tile loop with role-tagged regions, fused epilogue
        "partition-roles",           // one persistent tile loop per role
        "set-role-registers",        // setmaxnreg at the start of each role
        "dce",                       // drop what the rewrites left unused
    };
  return {};
}

static bool envPrintAll() {
  const char* v = std::getenv("KILN_PRINT_IR_AFTER_ALL");
  return v && std::string_view(v) != "0" && *v;
}

bool runSteps(const std::vector<std::string>& steps, ir::Module& m, ir::DiagnosticEngine& diag,
              const PipelineOptions& opts) {
  std::ostream& dump = opts.dump ? *opts.dump : std::cerr;
  bool print = opts.printIrAfterAll || envPrintAll();
  for (const auto& step : steps) {
    if (!runPass(step, m, diag)) return false;
#if defined(KILN_VERIFY_BETWEEN_PASSES)
    if (opts.verifyEach && step != "verify" && !ir::verify(m, diag)) {
      diag.error({}) << "pass '" << step << "' produced IR that does not verify; this is a bug in Kiln";
      return false;
    }
#endif
    if (print) dump << "// ----- IR after " << step << " -----\n" << ir::toString(m) << std::flush;
  }
  return true;
}

}  // namespace kiln::transforms
