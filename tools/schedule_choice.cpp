#include "tools/schedule_choice.h"

#include "interp/interpret_command.h"
#include "kiln/select.h"
#include "ops/default_schedule.h"
#include "schedule/config.h"

namespace kiln::tools {

std::optional<ScheduleChoice> chooseSchedule(const ir::Module& module, const ScheduleFlags& flags,
                                             ir::DiagnosticEngine& diag) {
  const ir::Operation* program = nullptr;
  for (const auto& op : module.body().operations())
    if (op->is("tile.program")) program = op.get();
  if (!program) {
    diag.error({}) << "the file holds no tile.program to compile";
    return std::nullopt;
  }
  std::string targetName = flags.target;
  ir::Location where;
  if (targetName.empty() && program->hasAttr("target")) {
    targetName = program->stringAttr("target", "");
    where = program->loc();
  }
  if (targetName.empty()) targetName = kDefaultTarget;
  auto target = Target::byName(targetName);
  if (!target) {
    diag.error(where) << "unknown target '" << targetName << "'; known targets: " << Target::knownNames();
    return std::nullopt;
  }
  if (!flags.config.empty()) {
    // Checked here, so an error points at its entry's column of the option, not into the program.
    if (!Config::parse(flags.config, diag, {"--config", 1, 1}, true)) return std::nullopt;
    return ScheduleChoice{*target, flags.config, "--config"};
  }
  if (!flags.dims.empty()) {
    auto dims = interp::parseDims(flags.dims, diag);
    if (!dims) return std::nullopt;
    Selection s = select(module, *target, *dims);
    return ScheduleChoice{*target, s.config, s.why};
  }
  if (program->hasAttr("config"))
    return ScheduleChoice{*target, program->stringAttr("config", ""), "the program's config attribute"};
  bool dot = false;
  program->walk([&](const ir::Operation& op) { dot = dot || op.is("tile.dot") || op.is("tile.dot_scaled"); });
  if (!dot)
    return ScheduleChoice{*target, "strategy=rowwise",
                          "note: no --config: a program without a matrix product compiles with the rowwise defaults "
                          "(strategy=rowwise); `kiln run --dims ...` runs the rowwise family's pick for its dims",
                          true};
  return ScheduleChoice{*target, ops::fallbackSchedule(*program).str(), "the default schedule"};
}

void addScheduleOptions(CLI::App& cmd, ScheduleFlags& flags) {
  cmd.add_option("--target", flags.target,
                 "Target architecture: " + Target::knownNames() + " (default: the program's target attribute, else " +
                     kDefaultTarget + ")");
  auto* config = cmd.add_option("--config", flags.config,
                 "Schedule, e.g. \"bm=128 bn=128 bk=32 stages=3 warps_m=2 warps_n=2\" (default: the program's config "
                 "attribute, else \"" + std::string(ops::kFallbackSchedule) + "\" for a GEMM (bm fitted to a grouped GEMM's groups) and strategy=rowwise for a program without a "
                 "matrix product)");
  // The two name a schedule each: a usage error together.
  cmd.add_option("--dims", flags.dims,
                 "Compile the schedule Kiln picks for these dims, e.g. M=4096,N=4096,K=4096 (says which and why)")
      ->excludes(config);
}

}  // namespace kiln::tools
