#pragma once
// The harness of the grouped (ragged) GEMM functional tests (tests/unit/schedule/
// sm90_ragged_functional_test.cpp, sm90_kgrouped_functional_test.cpp, sm90_kgrouped_fp8_test.cpp):
// a config compiled for sm_90a, its kern IR run by the warp-specialized simulator (ws_sim.h) and
// the program by the tile-IR interpreter on the same seeded inputs, the output C poisoned (all
// bits set) before both; what each test then compares is its own.
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "interp/random_inputs.h"
#include "kiln/ir/operation.h"

namespace kiln::testing {

struct GroupedSimOptions {
  uint32_t blocks = 3;
  // Edits the generated inputs (the bounds, poisoned tokens) before both runs.
  std::function<void(std::map<std::string, interp::HostTensor>& tensors)> prepare;
  // Edits the compiled kernel before it runs (to show a check can fail).
  std::function<void(ir::Operation& kernel)> mutate;
  bool runInterpreter = true;  // false: bounds the interpreter refuses (only the simulator runs)
};

struct GroupedSimRun {
  std::string error;            // "": both ran; else what failed (compile, launch, simulator, interpreter)
  interp::HostTensor want, got;  // C from the interpreter and from the kernel
};

// `seed` seeds interp::generateArguments; `module`'s program has one output, C.
GroupedSimRun runGroupedSim(const ir::Module& module, const std::string& configText,
                            const std::map<std::string, int64_t>& dims, uint64_t seed, const GroupedSimOptions& o);

}  // namespace kiln::testing
