#pragma once
// How a GPU result is checked (`kiln run`, `kiln tune`). Below kFullVerifyWork (the product of the dim values, a
// GEMM's multiply-adds) or with --verify full, every output element is compared with the exact
// interpreter; above it (or with --verify sample) only a few hundred output tiles are, against an
// fp64 reference of just those tiles (interp/tile_sampler.h), so an 8192^3 GEMM checks in seconds.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "interp/random_inputs.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"

namespace kiln::interp {

inline constexpr double kFullVerifyWork = double(1 << 28);
inline constexpr size_t kSampledTiles = 256;

struct ExpectedOutputs {
  std::map<std::string, std::vector<double>> values;  // NaN where not sampled
  std::string how;                                    // a line for the report
};

// `mode`: "auto", "full" or "sample". Prints progress on stderr before long work; nullopt after
// reporting to `diag`. `maxMemoryBytes`: the interpreter's limit (kiln run's --max-memory);
// `sampledTiles`: how many tiles a sampled check computes.
std::optional<ExpectedOutputs> expectedOutputs(const ir::Operation& program, const GeneratedArguments& args,
                                               const std::map<std::string, int64_t>& dims, const std::string& mode,
                                               uint64_t seed, ir::DiagnosticEngine& diag,
                                               int64_t maxMemoryBytes = kDefaultMaxMemoryBytes,
                                               size_t sampledTiles = kSampledTiles);

// Whether the output passes (its rel. Frobenius error and every checked element within bounds);
// `line` is the report ("output C: rel_fro_err 1.2e-03 over 65536 elements, 0 beyond the
// per-element bound", and the first bad element when there is one).
bool outputMatches(const std::string& name, const std::vector<double>& got, const std::vector<double>& expected,
                   std::string& line);
// outputMatches, with its line printed.
bool checkOutput(const std::string& name, const std::vector<double>& got, const std::vector<double>& expected);

}  // namespace kiln::interp
