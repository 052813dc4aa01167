#pragma once
// The pipeline: the ordered list of steps from a verified tile program to kern IR ready for the
// PTX emitter (DESIGN.md, "The pipeline"; house style 3). One list, in pipeline.cpp, read top to
// bottom. It lives with the strategies because its steps are theirs (a lowering, then the
// strategy's passes and the generic passes of src/transforms/, which is the layer below). After every step the IR is verified (when KILN_VERIFY_BETWEEN_PASSES is on, the default)
// and, with KILN_PRINT_IR_AFTER_ALL=1 in the environment or `kiln opt --print-ir-after-all`,
// printed to the dump stream.
//
// Optional steps (optionalSteps(): sm90-multistage-ring and remove-residual-loop) can be skipped, to
// measure what a pass buys: list them in PipelineOptions::disabled or, comma-separated, in the
// environment variable KILN_DISABLE_PASSES (e.g. KILN_DISABLE_PASSES=remove-residual-loop). Naming any other
// pass there is an error. A skipped step prints "// ----- NAME skipped (KILN_DISABLE_PASSES) -----"
// in the dump. `kiln opt --pass NAME` runs what it is told and ignores the variable.
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"
#include "schedule/config.h"
#include "transforms/pass_registry.h"

namespace kiln::pipeline {

struct PipelineOptions {
  bool printIrAfterAll = false;  // also switched on by KILN_PRINT_IR_AFTER_ALL=1
  bool verifyEach = true;
  std::ostream* dump = nullptr;  // default: std::cerr
  std::vector<std::string> disabled;  // optional steps to skip (with KILN_DISABLE_PASSES)
  // kiln::compile's typed schedule: the strategy's lowering step takes it instead of parsing the
  // program's config attribute (lower_programs.h).
  const Config* config = nullptr;
};

// Every pass, by name: the generic ones (src/transforms/) and the strategies' (src/schedule/).
const std::vector<transforms::PassInfo>& allPasses();
const transforms::PassInfo* findPass(std::string_view name);
std::vector<std::string> passNames();
// Runs one pass by name; an unknown name is a user error listing the known ones.
bool runPass(std::string_view name, ir::Module& m, ir::DiagnosticEngine& diag);

// The steps that may be skipped: a kernel is still correct without them.
const std::vector<std::string>& optionalSteps();

// The pass names of the pipeline for a strategy, in order; empty for an unknown strategy.
std::vector<std::string> pipelineSteps(std::string_view strategy);

// Runs `steps` in order on `m`. Stops at the first failing step and returns false.
bool runSteps(const std::vector<std::string>& steps, ir::Module& m, ir::DiagnosticEngine& diag,
              const PipelineOptions& opts = {});

}  // namespace kiln::pipeline
