#pragma once
// Parses the generic text form (printer.h) into a Module. Every syntax error, undefined value,
// redefinition or unknown op is reported as a diagnostic with line and column; the parser never
// crashes on any input (it is fuzzed).
#include <memory>
#include <string>
#include <string_view>

#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"

namespace kiln::ir {

struct ParseOptions {
  std::string filename;            // used in locations
  bool allowUnregistered = false;  // accept ops that no dialect declares
};

// Returns nullptr after reporting at least one error to `diag`.
std::unique_ptr<Module> parseModule(std::string_view text, DiagnosticEngine& diag,
                                    const ParseOptions& opts = {});

}  // namespace kiln::ir
