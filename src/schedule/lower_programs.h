#pragma once
// The shared driver of the strategy lowering passes: every tile.program of the module becomes the
// kern.kernel its strategy builds. The program's optional {target = "sm_..", config = "..."}
// attributes choose the target and the schedule; a config of another strategy is an error. A
// typed config given by the caller (kiln::compile) is the schedule instead of the attribute, so
// the config is not printed into a string and parsed again on its way to the lowering.
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"
#include "kiln/target.h"
#include "schedule/config.h"

namespace kiln {

using LowerFn = std::unique_ptr<ir::Operation> (*)(const ir::Operation& program, const Target&, const Config&,
                                                   ir::DiagnosticEngine&);

struct StrategyLowering {
  std::string_view pass;           // "lower-sm80-multistage", for messages
  std::string_view strategy;       // the Config strategy it lowers
  std::string_view defaultTarget;  // when the program names none
  std::string_view defaultConfig;  // when the program names none
  LowerFn lower;
};

bool lowerPrograms(ir::Module& m, const StrategyLowering& s, ir::DiagnosticEngine& diag,
                   const Config* given = nullptr);

// The strategies' lowerings (sm80_multistage.cpp, sm90/lower.cpp, rowwise/rowwise.cpp),
// by pass name; nullptr for any other pass.
const StrategyLowering* findLowering(std::string_view pass);

// A kernel attribute listing (name, value) pairs, as [["K", 8], ["N", 8]] ({requires}, {align},
// {role_regs}).
ir::Attribute pairList(const std::vector<std::pair<std::string, int64_t>>& v);

}  // namespace kiln
