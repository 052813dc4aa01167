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

#include "backend/assembler.h"
#include "interp/random_inputs.h"
#include "kiln/ir/operation.h"
#include "ops/default_schedule.h"

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

// The family's default schedule for the program at `dims` (what kiln.ops.grouped_mm and
// kiln_grouped_bench run), compiled for sm_90a and assembled in-process (ptxas's resource report).
struct AssembledPick {
  std::string error;  // "", or why not: no pick of `family`, a compile or assembly diagnostic
  ops::DefaultSchedule pick;
  backend::ResourceReport report;  // registers, stack frame, spills, shared memory
};
AssembledPick assembleFamilyPick(const ir::Module& module, const std::map<std::string, int64_t>& dims,
                                 const std::string& family);

}  // namespace kiln::testing
