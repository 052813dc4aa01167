#include "schedule/lower_programs.h"

#include "schedule/gemv/gemv.h"
#include "schedule/rowwise/rowwise.h"
#include "schedule/sm80_multistage.h"
#include "schedule/sm90/lower.h"

namespace kiln {

using ir::Operation;

bool lowerPrograms(ir::Module& m, const StrategyLowering& s, ir::DiagnosticEngine& diag, const Config* given) {
  bool ok = true;
  for (auto it = m.body().operations().begin(); it != m.body().operations().end(); ++it) {
    Operation& op = **it;
    if (!op.is("tile.program")) continue;
    std::string tname = op.stringAttr("target", std::string(s.defaultTarget));
    auto target = Target::byName(tname);
    if (!target) {
      diag.error(op.loc()) << "unknown target '" << tname << "'; known targets: " << Target::knownNames();
      ok = false;
      continue;
    }
    auto config = given ? std::optional<Config>(*given)
                        : Config::parse(op.stringAttr("config", std::string(s.defaultConfig)), diag, op.loc());
    if (!config) {
      ok = false;
      continue;
    }
    if (config->strategy != s.strategy) {
      diag.error(op.loc()) << s.pass << " got a config for strategy '" << config->strategy << "'";
      ok = false;
      continue;
    }
    auto kernel = s.lower(op, *target, *config, diag);
    if (!kernel) {
      ok = false;
      continue;
    }
    // The kernel replaces the program in place.
    Operation* k = m.body().insert(it, std::move(kernel));
    it = m.body().find(k);
    std::next(it)->get()->walk([](Operation& inner) { inner.dropAllOperands(); });
    m.body().operations().erase(std::next(it));
  }
  return ok;
}

const StrategyLowering* findLowering(std::string_view pass) {
  // Defaults when the program names none: sm_80 (sm_90a for the Hopper strategy) and the
  // strategy's default config.
  static const StrategyLowering lowerings[] = {
      {"lower-sm80-multistage", "sm80_multistage", "sm_80", "", lowerSm80Multistage},
      {"lower-sm90-ws-persistent", "sm90_ws_persistent", "sm_90a", "strategy=sm90_ws_persistent", lowerSm90WsPersistent},
      {"lower-rowwise", "rowwise", "sm_80", "strategy=rowwise", lowerRowwise},
      {"lower-gemv", "gemv", "sm_80", "strategy=gemv", lowerGemv},
  };
  for (const StrategyLowering& s : lowerings)
    if (s.pass == pass) return &s;
  return nullptr;
}

ir::Attribute pairList(const std::vector<std::pair<std::string, int64_t>>& v) {
  ir::Attribute::Array a;
  for (const auto& [name, n] : v) a.push_back(ir::Attribute::Array{ir::Attribute(name), ir::Attribute(n)});
  return ir::Attribute(a);
}

}  // namespace kiln
