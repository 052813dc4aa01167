// `kiln compile FILE --target sm_80 --config "..."`: placeholder until the PTX path lands.
#include <iostream>

#include "tools/verbs.h"

namespace kiln::tools {
CLI::App* addCompileVerb(CLI::App& app) { return app.add_subcommand("compile", "compile a tile program to PTX"); }
int runCompileVerb() {
  std::cerr << "kiln compile: not implemented yet\n";
  return 1;
}
}  // namespace kiln::tools
