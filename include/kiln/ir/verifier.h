#pragma once
// The verifier: generic structure (registered op, counts, terminators, SSA dominance, isolation)
// and then each op's own verify hook. Returns true when no error was reported.
#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"

namespace kiln::ir {

bool verify(const Operation& op, DiagnosticEngine& diag);
inline bool verify(const Module& m, DiagnosticEngine& diag) { return verify(m.op(), diag); }

}  // namespace kiln::ir
