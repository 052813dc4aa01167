#pragma once
// `kiln interpret`: run a program in text form on seeded random inputs and report how far its
// outputs are from an fp64 reference. The CLI verb (tools/) is a thin wrapper around this.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "kiln/interp/interpreter.h"
#include "kiln/ir/diagnostics.h"

namespace kiln::interp {

// Parses `kilnText` (a module holding exactly one tile.program), verifies it, binds the dims of
// `dimsSpec` ("M=64,N=32,K=16"), fills the inputs from `seed` (random_inputs.h), runs it with
// run(), runs it again with runReference() on the same inputs, and returns a report:
//
//   program gemm
//   dims M=64 N=32 K=16
//   seed 7
//   output C bf16 [64, 32]: sum 1.234568e+01 sumsq 2.048000e+03 max_abs_err 3.906250e-03 rel_fro_err 1.2e-03
//
// one `output` line per output, in declaration order; sum and sumsq are the checksums of run()'s
// output, and the errors compare it with the reference: max |out - ref| and ||out - ref|| / ||ref||
// (Frobenius norms). Returns "" after reporting errors to `diag`. An output with an element that
// is NaN or infinite where the reference is finite (or the reverse) is reported to `diag` as an
// error too, with the report still returned: the run failed. `sourceName` names the text in
// diagnostics (the file it came from).
// "M=64,N=32,K=16" -> {M: 64, N: 32, K: 16}; nullopt after reporting a malformed entry.
std::optional<std::map<std::string, int64_t>> parseDims(const std::string& spec, ir::DiagnosticEngine& diag);

// `maxMemoryBytes` is the run's memory limit (RunOptions::maxMemoryBytes): the sizes are checked
// against it before any input is generated.
std::string runInterpretCommand(const std::string& kilnText, const std::string& dimsSpec, uint64_t seed,
                                ir::DiagnosticEngine& diag, int64_t maxMemoryBytes = kDefaultMaxMemoryBytes,
                                const std::string& sourceName = "");

}  // namespace kiln::interp
