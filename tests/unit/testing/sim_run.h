#pragma once
// One program, compiled, run in the kern simulator (kern_sim.h) on the interpreter's seeded inputs
// with its outputs poisoned, and judged against the tile-IR interpreter with the GPU tests'
// tolerance (example_runs.h): the CPU check that a strategy's kernel computes the program. A kernel
// with a split-K workspace gets its flags zeroed and its partials poisoned, and must leave every
// flag zero; reverseBlocks runs kern_sim's blocks along x from the last (another finishing order).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kiln/ir/operation.h"
#include "schedule/config.h"
#include "kiln/target.h"
#include "tests/unit/testing/kern_sim.h"

namespace kiln::testing {

struct SimRun {
  std::string error;   // "" when the kernel ran and every output matched
  std::string config;  // the config the kernel was compiled with (Config::str)
  std::map<std::string, std::vector<uint8_t>> outputs{};  // each output's bytes as the kernel left them
};

SimRun simulateAgainstInterpreter(const ir::Module& program, const Config& config, const Target& target,
                                  const std::map<std::string, int64_t>& dims, uint64_t seed,
                                  CopyTiming timing = CopyTiming::Early, bool reverseBlocks = false);

}  // namespace kiln::testing
