#pragma once
// What `kiln compile` and `kiln inspect` compile a program for. Each of the target and the schedule
// comes from the first of these that gives one:
//   target:    --target, the program's own `target` attribute, kDefaultTarget (the same for every
//              verb, so `compile` and `inspect` describe the same kernel)
//   schedule:  --config, --dims (the schedule Kiln picks for those dims, kiln::select, as `kiln run`
//              does), the program's own `config` attribute, the sm80 default fitted to the program
//              (ops::fallbackSchedule; for a program without a matrix product: the rowwise
//              defaults, which the verbs note)
// --config and --dims together are a usage error (addScheduleOptions): they name two schedules.
#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"
#include "kiln/target.h"

namespace kiln::tools {

// Hopper, the target Kiln's kernels are tuned for first.
inline constexpr const char* kDefaultTarget = "sm_90a";

struct ScheduleFlags {
  std::string target, config, dims;  // empty: not given
};

struct ScheduleChoice {
  Target target;
  std::string config;  // a config line
  std::string why;     // where the schedule came from: "--config", "the program's config attribute", a pick's why
  bool rowwiseDefault = false;  // the rowwise defaults, for a program without a matrix product: `why` is a note
};

// nullopt after reporting to `diag` (an unknown target, bad dims).
std::optional<ScheduleChoice> chooseSchedule(const ir::Module& program, const ScheduleFlags& flags,
                                             ir::DiagnosticEngine& diag);

// Registers --target, --config and --dims on a verb.
void addScheduleOptions(CLI::App& cmd, ScheduleFlags& flags);

}  // namespace kiln::tools
