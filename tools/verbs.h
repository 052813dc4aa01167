#pragma once
// The verbs of the kiln tool: each adds its subcommand and runs it once parsed.
#include <CLI/CLI.hpp>

namespace kiln::tools {
CLI::App* addOptVerb(CLI::App& app);
int runOptVerb();
CLI::App* addCompileVerb(CLI::App& app);
int runCompileVerb();
}  // namespace kiln::tools
