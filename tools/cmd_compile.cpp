// `kiln compile FILE [--target sm_80] [--config "bm=..."] [--emit ptx|kern|launch]`: compiles the
// file's tile.program and prints the PTX (default), the final kern IR, or the launch contract.
#include <cstdio>

#include "kiln/compile.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/verifier.h"
#include "schedule/config.h"
#include "target/target.h"
#include "tools/commands.h"

namespace kiln::tools {

namespace {
struct CompileArgs {
  std::string file, target = "sm_80", config, emit = "ptx";
};

void printLaunch(const LaunchInfo& l) {
  std::printf("kernel %s\nthreads %d\ndynamic_smem %lld\n", l.kernelName.c_str(), l.threads,
              static_cast<long long>(l.dynamicSmemBytes));
  for (const auto& p : l.params) {
    const char* kind = p.kind == KernelParam::Kind::Pointer     ? "ptr"
                       : p.kind == KernelParam::Kind::TensorMap ? "tensor_map"
                       : p.kind == KernelParam::Kind::Dim       ? "dim"
                       : p.kind == KernelParam::Kind::Workspace ? "workspace"
                                                                : "scalar";
    std::printf("param %s %s %s", p.name.c_str(), kind, std::string(ir::scalarName(p.elem)).c_str());
    if (p.alignment) std::printf(" align=%lld", static_cast<long long>(p.alignment));
    if (p.kind == KernelParam::Kind::TensorMap) {
      std::printf(" tensor=%s box=", p.tensor.c_str());
      for (size_t i = 0; i < p.box.size(); ++i) std::printf("%s%lld", i ? "x" : "", static_cast<long long>(p.box[i]));
      std::printf(" swizzle=%d", p.swizzleBytes);
      if (p.stream)
        std::printf(" streams_when=%s<=%lld,%s%%%lld==0 fill=%d", p.stream->boundDim.c_str(),
                    static_cast<long long>(p.stream->bound), p.stream->rowDim.c_str(),
                    static_cast<long long>(p.stream->rowMultiple), p.stream->fillBytes);
    }
    std::printf("\n");
  }
  const char* axes = "xyz";
  for (size_t i = 0; i < l.grid.size(); ++i) {
    std::printf("grid.%c %lld", axes[i], static_cast<long long>(l.grid[i].constant));
    for (const auto& [d, t] : l.grid[i].tiles) std::printf(" * ceil(%s/%lld)", d.c_str(), static_cast<long long>(t));
    std::printf("\n");
  }
  if (l.cluster[0] * l.cluster[1] * l.cluster[2] > 1)
    std::printf("cluster %dx%dx%d (grid.x counts clusters: %d blocks each)\n", l.cluster[0], l.cluster[1], l.cluster[2],
                l.cluster[0] * l.cluster[1] * l.cluster[2]);
  if (l.persistent) std::printf("grid.x capped by the SM count (persistent)\n");
  if (l.workspaceUnitBytes[0] || l.workspaceUnitBytes[1])
    std::printf("workspace per %s: %lld bytes of flags, %lld bytes of partial sums (allocated by the runtime)\n",
                l.workspacePerBlock ? "block" : "tile", static_cast<long long>(l.workspaceUnitBytes[0]),
                static_cast<long long>(l.workspaceUnitBytes[1]));
  for (const auto& [d, v] : l.divisibility) std::printf("requires %s %% %lld == 0\n", d.c_str(), static_cast<long long>(v));
}

int runCompile(const CompileArgs& a) {
  std::string text;
  if (!readFile(a.file, text)) return kFailed;
  auto target = Target::byName(a.target);
  if (!target) {
    std::fprintf(stderr, "kiln compile: unknown target '%s'; known targets: %s\n", a.target.c_str(),
                 Target::knownNames().c_str());
    return kUsage;
  }
  ir::DiagnosticEngine diag;
  std::optional<CompileResult> r;
  auto m = ir::parseModule(text, diag, {a.file, false});
  if (m && ir::verify(*m, diag)) {
    // Without --config, a program without a matrix product gets the rowwise default.
    bool dot = false;
    m->op().walk([&](const ir::Operation& op) { dot = dot || op.is("tile.dot"); });
    std::string configText = a.config.empty() && !dot ? "strategy=rowwise" : a.config;
    auto config = Config::parse(configText, diag, {"--config", 1, 1}, true);
    if (config && configText != a.config)
      std::fprintf(stderr,
                   "note: no --config: a program without a matrix product compiles with the rowwise defaults (%s); "
                   "`kiln run --dims ...` runs the rowwise family's pick for its dims\n",
                   config->str().c_str());
    if (config) r = compile(*m, *target, *config, diag);
  }
  std::fprintf(stderr, "%s", diag.str().c_str());
  if (!r) return kFailed;
  if (a.emit == "ptx") std::printf("%s", r->ptx.c_str());
  else if (a.emit == "kern") std::printf("%s", r->kernIr.c_str());
  else printLaunch(r->launch);
  return kOk;
}
}  // namespace

void registerCompileCommand(CLI::App& app) {
  static CompileArgs args;
  auto* cmd = app.add_subcommand("compile", "Compile a tile program to PTX (or show its kern IR or launch contract).");
  cmd->add_option("file", args.file, "Input file of text IR holding one tile.program")->required();
  cmd->add_option("--target", args.target, "Target architecture: " + Target::knownNames());
  cmd->add_option("--config", args.config,
                  "Schedule, e.g. \"bm=128 bn=128 bk=32 stages=3 warps_m=2 warps_n=4\" (default: the sm80_multistage "
                  "defaults for a GEMM, strategy=rowwise for a program without a matrix product)");
  cmd->add_option("--emit", args.emit, "What to print: ptx, kern or launch")->check(CLI::IsMember({"ptx", "kern", "launch"}));
  cmd->callback([] { setExitCode(runCompile(args)); });
}

}  // namespace kiln::tools
