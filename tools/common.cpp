#include <unistd.h>

#include <cstdio>

#include "support/input_file.h"
#include "tools/commands.h"

namespace kiln::tools {

static int gExitCode = kOk;
void setExitCode(int code) { gExitCode = code; }
int exitCode() { return gExitCode; }

bool readFile(const std::string& path, std::string& out) {
  std::string error;
  if (support::readInputFile(path, support::maxInputBytes(), out, error)) return true;
  std::fprintf(stderr, "kiln: %s\n", error.c_str());
  return false;
}

bool readStdin(std::string& out) {
  std::string error;
  if (support::readInputStream(STDIN_FILENO, "standard input", support::maxInputBytes(), out, error)) return true;
  std::fprintf(stderr, "kiln: %s\n", error.c_str());
  return false;
}

void registerExtraCommands(CLI::App& app) {
  registerRunCommand(app);
  registerInspectCommand(app);
  registerBenchCommand(app);
  registerCacheCommand(app);
  registerTuneCommand(app);
}

}  // namespace kiln::tools
