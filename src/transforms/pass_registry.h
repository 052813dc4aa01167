#pragma once
// The pass registry: every pass that `kiln opt --pass NAME` and the pipeline can run, by name.
//
// A pass is one function, Module& in, diagnostics out; it returns false after reporting at least
// one error. A transforming pass that finds nothing to do returns true and leaves the module as it
// was (DESIGN.md, "Kern passes: small, ordered, fail-closed").
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"

namespace kiln::transforms {

using PassFn = bool (*)(ir::Module&, ir::DiagnosticEngine&);

struct PassInfo {
  std::string name;
  PassFn run;
  std::string summary;  // one line, for `kiln opt --list-passes`
};

// Every registered pass, sorted by name.
const std::vector<PassInfo>& allPasses();
const PassInfo* findPass(std::string_view name);

// The interface the CLI uses. runPass reports an error for an unknown name.
bool runPass(std::string_view name, ir::Module& m, ir::DiagnosticEngine& diag);
std::vector<std::string> passNames();

// The passes themselves (one file each under src/transforms/ or src/schedule/).
bool verifyPass(ir::Module& m, ir::DiagnosticEngine& diag);
bool lowerSm80MultistagePass(ir::Module& m, ir::DiagnosticEngine& diag);
bool pairLdmatrixPass(ir::Module& m, ir::DiagnosticEngine& diag);
bool kernDcePass(ir::Module& m, ir::DiagnosticEngine& diag);

}  // namespace kiln::transforms
