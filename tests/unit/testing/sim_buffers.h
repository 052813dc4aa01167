#pragma once
// One program, compiled, run in the kern simulator (kern_sim.h) on tensors the test fills itself:
// for edge cases the seeded inputs of sim_run.h do not reach (special values, chosen labels).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kiln/ir/operation.h"
#include "schedule/config.h"
#include "kiln/target.h"

namespace kiln::testing {

struct BufferRun {
  std::string error;                                     // "" when it compiled and ran
  std::string kernIr;                                    // the kernel, for checks of its form
  std::map<std::string, std::vector<uint8_t>> tensors;  // every tensor's bytes after the run
};

// `tensors` holds the bytes of every tensor argument by name (outputs too: poison them); `scalars`
// the raw 32 bits of every scalar argument.
BufferRun simulateOnBuffers(const ir::Module& program, const Config& config, const Target& target,
                            const std::map<std::string, int64_t>& dims,
                            std::map<std::string, std::vector<uint8_t>> tensors,
                            const std::map<std::string, uint32_t>& scalars = {});

}  // namespace kiln::testing
