// The GPU half of `kiln run` (see gpu_run.h).
#include "tools/gpu_run.h"

#include <cstdio>

#include "tools/commands.h"

namespace kiln::tools {
int runOnGpu(const std::string&, const std::string&, uint64_t, const std::string&) {
  std::fprintf(stderr, "kiln run: compiling for the GPU needs a strategy for this program; none is registered yet.\n"
                       "Add --interpret to run it on the CPU.\n");
  return kFailed;
}
}  // namespace kiln::tools
