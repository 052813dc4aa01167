// The kiln command-line tool. Verbs live in their own files (tools/*_verb.cpp) and register here.
#include <CLI/CLI.hpp>

#include "tools/verbs.h"

int main(int argc, char** argv) {
  CLI::App app{"kiln: a compiler for tensor-core GPU kernels"};
  app.require_subcommand(1);
  auto opt = kiln::tools::addOptVerb(app);
  auto compile = kiln::tools::addCompileVerb(app);
  CLI11_PARSE(app, argc, argv);
  if (opt->parsed()) return kiln::tools::runOptVerb();
  if (compile->parsed()) return kiln::tools::runCompileVerb();
  return 1;
}
