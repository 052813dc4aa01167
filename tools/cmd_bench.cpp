// `kiln bench`: Kiln's BF16 GEMM family against cuBLAS on the GPU. The benchmark links cuBLAS and
// lives in its own program (bench/gemm_bench.cpp, built as kiln_gemm_bench next to this tool's build
// folder); this verb finds it and runs it with the same arguments, so the tool itself needs no cuBLAS.
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "kiln/runtime/driver.h"
#include "tools/commands.h"

namespace kiln::tools {

namespace {
std::filesystem::path benchProgram() {
  if (const char* env = std::getenv("KILN_GEMM_BENCH")) return env;
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  for (auto p : {self.parent_path() / "kiln_gemm_bench", self.parent_path().parent_path() / "bench" / "kiln_gemm_bench"})
    if (std::filesystem::exists(p)) return p;
  return {};
}
}  // namespace

void registerBenchCommand(CLI::App& app) {
  static std::vector<std::string> passThrough;
  auto* cmd = app.add_subcommand("bench", "Benchmark the gemm_bf16 family against cuBLAS on the GPU "
                                          "(options: --shapes MxNxK;..., --reps N, --warmup N, --json FILE).");
  cmd->allow_extras();
  cmd->callback([cmd] {
    std::string why;
    if (!runtime::Driver::get(&why)) {
      std::fprintf(stderr, "kiln bench: needs a GPU: %s\nOn a machine without one, `kiln inspect --family gemm_bf16` "
                           "reports what the kernels cost.\n", why.c_str());
      setExitCode(kNoGpu);
      return;
    }
    auto prog = benchProgram();
    if (prog.empty()) {
      std::fprintf(stderr, "kiln bench: kiln_gemm_bench was not found next to the kiln tool; build it "
                           "(cmake --build build --target kiln_gemm_bench) or set KILN_GEMM_BENCH\n");
      setExitCode(kFailed);
      return;
    }
    std::vector<std::string> args{prog.string()};
    for (const auto& e : cmd->remaining()) args.push_back(e);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::fflush(stdout);
    execv(argv[0], argv.data());
    std::fprintf(stderr, "kiln bench: could not run %s\n", argv[0]);
    setExitCode(kFailed);
  });
}

}  // namespace kiln::tools
