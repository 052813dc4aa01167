// The `kiln` command-line tool: one verb per file (cmd_*.cpp), wired together here.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <new>
#include <stdexcept>

#include "kiln/dialects.h"
#include "tools/commands.h"

int main(int argc, char** argv) {
  kiln::registerAllDialects();
  CLI::App app{"kiln: a compiler for tensor-core GPU kernels.\n"
               "Write a kernel at the level of tiles, compile it through Kiln's IR to PTX and a cubin,\n"
               "inspect what came out, and run it on a GPU or in the CPU interpreter."};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("kiln ") + KILN_VERSION + " (CUDA " + KILN_CUDA_VERSION + ")");
  kiln::tools::registerExamplesCommand(app);
  kiln::tools::registerOptCommand(app);
  kiln::tools::registerCompileCommand(app);
  kiln::tools::registerConfigCommand(app);
  kiln::tools::registerExtraCommands(app);
  try {
    app.parse(argc, argv);
  } catch (const std::bad_alloc&) {
    // The last line of defence: every size is checked before it is allocated, but a host that is
    // short of memory (or a limit set too high for it) must still end in a sentence, not an abort.
    std::fprintf(stderr, "kiln: out of memory; use smaller dims or inputs (kiln run --interpret: lower --max-memory)\n");
    return kiln::tools::kFailed;
  } catch (const std::length_error& e) {
    std::fprintf(stderr, "kiln: a size is too large (%s); use smaller dims or inputs\n", e.what());
    return kiln::tools::kFailed;
  } catch (const CLI::ParseError& e) {
    bool knownVerb = false;
    for (const auto* sub : app.get_subcommands([](CLI::App*) { return true; }))
      knownVerb = knownVerb || (argc > 1 && sub->check_name(argv[1]));
    if (argc > 1 && argv[1][0] != '-' && !knownVerb) {
      std::fprintf(stderr, "kiln: unknown verb '%s'; run `kiln --help` for the list of verbs\n", argv[1]);
      return kiln::tools::kUsage;
    }
    int code = app.exit(e);  // prints the help, or the usage error and a hint
    return code == 0 ? 0 : kiln::tools::kUsage;
  }
  return kiln::tools::exitCode();
}
