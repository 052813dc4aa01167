// `kiln config`: the reference of every strategy's config keys (options.h), as text, JSON or the
// Markdown of docs/config.md.
#include <cstdio>

#include "schedule/options.h"
#include "tools/commands.h"

namespace kiln::tools {

void registerConfigCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("config", "List the config keys of each strategy: type, default, allowed values "
                                           "and meaning, by group.");
  static bool list = false, json = false, markdown = false;
  static std::string strategy;
  cmd->add_flag("--list,-l", list, "List the keys (the default)");
  cmd->add_option("--strategy,-s", strategy, "Only this strategy's keys");
  cmd->add_flag("--json", json, "Print the list as JSON");
  cmd->add_flag("--markdown", markdown, "Print docs/config.md (kiln config --markdown > docs/config.md)");
  cmd->callback([] {
    const options::Strategy* only = nullptr;
    if (!strategy.empty() && !(only = options::findStrategy(strategy))) {
      std::string known;
      for (const auto& s : options::strategies()) known += (known.empty() ? "" : ", ") + s.name;
      std::fprintf(stderr, "kiln config: unknown strategy '%s'; known strategies: %s\n", strategy.c_str(),
                   known.c_str());
      setExitCode(kUsage);
      return;
    }
    if (markdown && (json || only)) {
      std::fprintf(stderr, "kiln config: --markdown prints every strategy as Markdown; drop --json and --strategy\n");
      setExitCode(kUsage);
      return;
    }
    std::string out = markdown ? options::markdown() : json ? options::listJson(only).dump(2) + "\n" : options::listText(only);
    std::fputs(out.c_str(), stdout);
  });
}

}  // namespace kiln::tools
