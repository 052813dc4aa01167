#pragma once
// The verbs of the `kiln` tool. Each registers a CLI11 subcommand whose callback stores its exit
// status with setExitCode. Exit codes that scripts can rely on:
//   0 success, 1 the input or its checks failed (diagnostics printed), 2 usage error,
//   3 no GPU available for a verb that needs one.
#include <CLI/CLI.hpp>
#include <string>

namespace kiln::tools {

enum ExitCode { kOk = 0, kFailed = 1, kUsage = 2, kNoGpu = 3 };

void registerExamplesCommand(CLI::App& app);
void registerOptCommand(CLI::App& app);
void registerRunCommand(CLI::App& app);
void registerInspectCommand(CLI::App& app);
void registerBenchCommand(CLI::App& app);
// `kiln config`: the reference of the strategies' config keys (cmd_config.cpp).
void registerConfigCommand(CLI::App& app);
// `kiln compile`: a tile program to PTX, kern IR or its launch contract (cmd_compile.cpp).
void registerCompileCommand(CLI::App& app);
// `kiln cache stats|clear|verify`: the on-disk compile cache (cmd_cache.cpp).
void registerCacheCommand(CLI::App& app);
// `kiln tune`: measured schedule search on the GPU, and the tuning cache (cmd_tune.cpp).
void registerTuneCommand(CLI::App& app);
// Verbs added as their subsystems land (compile, inspect, run, bench).
void registerExtraCommands(CLI::App& app);

void setExitCode(int code);
int exitCode();
// Reads a whole regular file, or all of standard input, up to the input limit
// (support/input_file.h); on failure prints a sentence and returns false.
bool readFile(const std::string& path, std::string& out);
bool readStdin(std::string& out);

}  // namespace kiln::tools
