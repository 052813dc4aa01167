// `kiln examples`: list the built-in example programs, or print them as text IR.
#include <cstdio>

#include "examples/examples.h"
#include "kiln/ir/printer.h"
#include "tools/commands.h"

namespace kiln::tools {

void registerExamplesCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("examples", "List the built-in example programs, or print them as text IR.");
  static std::vector<std::string> names;
  static bool print = false, locations = false;
  cmd->add_option("names", names, "Examples to print (default: all)");
  cmd->add_flag("--print,-p", print, "Print the programs as text IR instead of listing them");
  cmd->add_flag("--locations", locations, "With --print, add each op's C++ source location");
  cmd->callback([] {
    if (!print && names.empty()) {
      for (const auto& e : examples::all()) std::printf("%-18s %s\n", e.name.c_str(), e.summary.c_str());
      return;
    }
    std::vector<const examples::Example*> chosen;
    if (names.empty())
      for (const auto& e : examples::all()) chosen.push_back(&e);
    for (const auto& n : names) {
      const examples::Example* e = examples::find(n);
      if (!e) {
        std::fprintf(stderr, "kiln examples: no example named '%s'; run `kiln examples` for the list\n", n.c_str());
        setExitCode(kUsage);
        return;
      }
      chosen.push_back(e);
    }
    bool first = true;
    for (const auto* e : chosen) {
      std::printf("%s// %s: %s\n%s", first ? "" : "\n", e->name.c_str(), e->summary.c_str(),
                  ir::toString(*e->build(), {.locations = locations}).c_str());
      first = false;
    }
  });
}

}  // namespace kiln::tools
