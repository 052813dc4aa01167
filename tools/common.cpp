#include <cstdio>
#include <fstream>
#include <sstream>

#include "tools/commands.h"

namespace kiln::tools {

static int gExitCode = kOk;
void setExitCode(int code) { gExitCode = code; }
int exitCode() { return gExitCode; }

bool readFile(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "kiln: cannot read '%s': no such file, or it is not readable\n", path.c_str());
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

void registerExtraCommands(CLI::App& app) {
  registerRunCommand(app);
  registerInspectCommand(app);
  registerBenchCommand(app);
}

}  // namespace kiln::tools
