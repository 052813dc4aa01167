#pragma once
// `kiln opt --verify-diagnostics`: checks the diagnostics a run produced against expectations
// written in the input, the way MLIR's -verify-diagnostics does:
//
//   %x = tile.dot(%a, %b, %c) : tile<f32, [M, N]>   // expected-error {{inner dims differ}}
//   // expected-error@+1 {{must be bf16}}
//   %y = ...
//
// `expected-<severity>{{text}}` expects a diagnostic of that severity on the same line whose
// message contains `text`; `@+N` / `@-N` shift the line. Every produced error must be expected and
// every expectation met.
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/diagnostics.h"

namespace kiln::driver {

struct ExpectedDiagnostic {
  ir::Severity severity;
  uint32_t line;
  std::string text;
  uint32_t writtenAt;  // the line of the comment itself, for messages
};

// Parses the expectations in `source`; a malformed expectation is reported to `diag`.
std::vector<ExpectedDiagnostic> parseExpectations(std::string_view source, ir::DiagnosticEngine& diag);

// Matches produced diagnostics against expectations. Returns the problems, one sentence each
// (empty: everything matched).
std::vector<std::string> matchExpectations(const std::vector<ExpectedDiagnostic>& expected,
                                           const std::vector<ir::Diagnostic>& produced);

}  // namespace kiln::driver
