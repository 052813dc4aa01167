#pragma once
// Running a helper program (the SASS disassembler, python3 to find NVIDIA's wheels) and capturing
// what it prints. No shell is involved, so paths need no quoting.
#include <optional>
#include <string>
#include <vector>

namespace kiln::backend {

struct ProcessResult {
  int exitCode = -1;  // the exit status, or -1 when the program was killed by a signal
  std::string out;
  std::string err;
};

// Runs argv[0] (looked up in PATH when it has no '/'). nullopt when it could not be started.
std::optional<ProcessResult> runProcess(const std::vector<std::string>& argv);

}  // namespace kiln::backend
