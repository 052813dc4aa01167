// The ordered pipeline (contract in pipeline.h).
#include "transforms/pipeline.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <set>

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
        "strength-reduce",        // index math: x / 2^k, x % 2^k -> shift, mask where x >= 0
        "dce",                    // drop what the rewrites left unused
    };
  if (strategy == "sm90_ws_persistent")
    return {
        "verify",                    // the tile program as the user wrote it
        "lower-sm90-ws-persistent",  // tile -> kern: TMA ring, mbarriers, wgmma, one CTA-wide persistent
                                     // tile loop with role-tagged regions, fused epilogue
        "partition-roles",           // one persistent tile loop per role
        "remove-residual-loop",      // drop the residual shared loop when it does no observable work
        "set-role-registers",        // setmaxnreg at the start of each role
        "strength-reduce",           // index math: x / 2^k, x % 2^k -> shift, mask where x >= 0
        "dce",                       // drop what the rewrites left unused
    };
  if (strategy == "rowwise")
    return {
        "verify",           // the tile program as the user wrote it
        "lower-rowwise",    // tile -> kern: rows of threads, 16-byte vectors, passes over each row (on chip
                            // when it fits, streaming when not), butterfly and shared-memory reductions
        "strength-reduce",  // index math: x / 2^k, x % 2^k -> shift, mask where x >= 0
        "dce",              // drop what the rewrites left unused
    };
  return {};
}

static bool envPrintAll() {
  const char* v = std::getenv("KILN_PRINT_IR_AFTER_ALL");
  return v && std::string_view(v) != "0" && *v;
}

const std::vector<std::string>& optionalSteps() {
  // Steps whose absence still gives a correct kernel; each was tested both ways.
  static const std::vector<std::string> steps = {"remove-residual-loop"};
  return steps;
}

// The steps to skip: opts.disabled plus KILN_DISABLE_PASSES (comma-separated). A name that is not an
// optional step is a user error, so a typo cannot silently benchmark the same kernel twice.
static bool disabledSteps(const PipelineOptions& opts, std::set<std::string>& out, ir::DiagnosticEngine& diag) {
  std::vector<std::string> names = opts.disabled;
  if (const char* env = std::getenv("KILN_DISABLE_PASSES")) {
    std::string_view rest(env);
    while (!rest.empty()) {
      size_t comma = rest.find(',');
      std::string_view name = rest.substr(0, comma);
      if (!name.empty()) names.emplace_back(name);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  const auto& allowed = optionalSteps();
  for (const auto& n : names) {
    if (std::find(allowed.begin(), allowed.end(), n) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return diag.error({}) << "KILN_DISABLE_PASSES names '" << n
                            << "', which is not a pass that can be turned off; those that can: " << list;
    }
    out.insert(n);
  }
  return true;
}

bool runSteps(const std::vector<std::string>& steps, ir::Module& m, ir::DiagnosticEngine& diag,
              const PipelineOptions& opts) {
  std::ostream& dump = opts.dump ? *opts.dump : std::cerr;
  bool print = opts.printIrAfterAll || envPrintAll();
  std::set<std::string> disabled;
  if (!disabledSteps(opts, disabled, diag)) return false;
  for (const auto& step : steps) {
    if (disabled.count(step)) {
      if (print) dump << "// ----- " << step << " skipped (KILN_DISABLE_PASSES) -----\n" << std::flush;
      continue;
    }
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
