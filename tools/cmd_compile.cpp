// `kiln compile FILE [--target T] [--config "bm=..." | --dims M=..,N=..] [--emit ptx|cubin|kern|launch]
// [--json] [-o FILE]`: compiles the file's tile.program and prints (or writes to FILE) the PTX
// (default), the assembled cubin, the final kern IR, or the launch contract (as text or JSON). The
// target and schedule come from the flags or the program's own attributes (tools/schedule_choice.h).
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backend/assembler.h"
#include "backend/compile_cache.h"
#include "kiln/compile.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/verifier.h"
#include "tools/commands.h"
#include "tools/schedule_choice.h"

namespace kiln::tools {

namespace {

struct CompileArgs {
  std::string file, emit, output;
  ScheduleFlags schedule;
  bool json = false;
};

// What to emit: --emit, else by the output file's extension (.cubin, .kern, .json: the launch
// contract), else PTX.
std::string emitOf(const CompileArgs& a) {
  if (!a.emit.empty()) return a.emit;
  auto ends = [&](const char* ext) {
    std::string e(ext);
    return a.output.size() > e.size() && a.output.compare(a.output.size() - e.size(), e.size(), e) == 0;
  };
  if (ends(".cubin")) return "cubin";
  if (ends(".kern")) return "kern";
  if (ends(".json")) return "launch";
  return "ptx";
}

bool writeOutput(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  if (!(out << bytes) || !out.flush()) {
    std::fprintf(stderr, "kiln compile: cannot write '%s'\n", path.c_str());
    return false;
  }
  return true;
}

// The launch contract as lines of text (--emit launch).
std::string launchText(const LaunchInfo& l) {
  std::string s = fmt::format("kernel {}\nthreads {}\ndynamic_smem {}\n", l.kernelName, l.threads, l.dynamicSmemBytes);
  for (const auto& p : l.params) {
    const char* kind = p.kind == KernelParam::Kind::Pointer     ? "ptr"
                       : p.kind == KernelParam::Kind::TensorMap ? "tensor_map"
                       : p.kind == KernelParam::Kind::Dim       ? "dim"
                       : p.kind == KernelParam::Kind::Workspace ? "workspace"
                                                                : "scalar";
    s += fmt::format("param {} {} {}", p.name, kind, ir::scalarName(p.elem));
    if (p.alignment) s += fmt::format(" align={}", p.alignment);
    if (!p.order.empty()) s += fmt::format(" order=[{}]", fmt::join(p.order, ", "));
    if (!p.strides.empty()) s += " strides=" + ir::shapeStr(p.strides);
    if (p.kind == KernelParam::Kind::TensorMap) {
      s += fmt::format(" tensor={} box={} swizzle={}", p.tensor, fmt::join(p.box, "x"), p.swizzleBytes);
      if (p.stream)
        s += fmt::format(" streams_when={}<={},{}%{}==0 fill={}", p.stream->boundDim, p.stream->bound, p.stream->rowDim,
                         p.stream->rowMultiple, p.stream->fillBytes);
    }
    s += "\n";
  }
  const char* axes = "xyz";
  for (size_t i = 0; i < l.grid.size(); ++i) {
    s += fmt::format("grid.{} {}", axes[i], l.grid[i].constant);
    for (const auto& [d, t] : l.grid[i].tiles) s += fmt::format(" * ceil({}/{})", d, t);
    s += "\n";
  }
  if (l.cluster[0] * l.cluster[1] * l.cluster[2] > 1)
    s += fmt::format("cluster {}x{}x{} (grid.x counts clusters: {} blocks each)\n", l.cluster[0], l.cluster[1],
                     l.cluster[2], l.cluster[0] * l.cluster[1] * l.cluster[2]);
  if (l.persistent) s += "grid.x capped by the SM count (persistent)\n";
  if (l.workspaceUnitBytes[0] || l.workspaceUnitBytes[1])
    s += fmt::format("workspace per {}: {} bytes of flags, {} bytes of partial sums (allocated by the runtime)\n",
                     l.workspacePerBlock ? "block" : "tile", l.workspaceUnitBytes[0], l.workspaceUnitBytes[1]);
  for (const auto& [d, v] : l.divisibility) s += fmt::format("requires {} % {} == 0\n", d, v);
  return s;
}

int runCompile(const CompileArgs& a) {
  const std::string emit = emitOf(a);
  if (emit == "cubin" && a.output.empty()) {
    std::fprintf(stderr, "kiln compile: a cubin is binary; give -o FILE to write it\n");
    return kUsage;
  }
  if (a.json && emit != "launch") {
    std::fprintf(stderr, "kiln compile: --json prints the launch contract; add --emit launch\n");
    return kUsage;
  }
  if (!a.schedule.target.empty() && !Target::byName(a.schedule.target)) {
    std::fprintf(stderr, "kiln compile: unknown target '%s'; known targets: %s\n", a.schedule.target.c_str(),
                 Target::knownNames().c_str());
    return kUsage;
  }
  std::error_code ec;
  if (std::filesystem::is_directory(a.file, ec)) {
    std::fprintf(stderr, "kiln compile: '%s' is a directory; give a file of text IR holding one tile.program\n",
                 a.file.c_str());
    return kUsage;
  }
  std::string text;
  if (!readFile(a.file, text)) return kFailed;
  ir::DiagnosticEngine diag;
  std::optional<CompileResult> r;
  std::optional<ScheduleChoice> choice;
  auto m = ir::parseModule(text, diag, {a.file, false});
  if (m && ir::verify(*m, diag)) choice = chooseSchedule(*m, a.schedule, diag);
  if (choice) {
    if (choice->rowwiseDefault) std::fprintf(stderr, "%s\n", choice->why.c_str());
    else if (!a.schedule.dims.empty()) std::fprintf(stderr, "kiln compile: %s\n", choice->why.c_str());
    r = compile(*m, choice->target, choice->config, diag);
  }
  std::optional<backend::AssembledKernel> cubin;
  // PTX is assembled too: PTX the assembler rejects is a failed compile, not a result.
  if (r && (emit == "cubin" || emit == "ptx")) {
    backend::CompileCache cache(backend::CompileCache::defaultDir());
    cubin = backend::assembleCached(r->ptx, choice->target.name, diag, &cache);
  }
  std::fprintf(stderr, "%s", diag.str().c_str());
  if (!r || ((emit == "cubin" || emit == "ptx") && !cubin)) return kFailed;
  std::string out;
  if (emit == "ptx") out = r->ptx;
  else if (emit == "kern") out = r->kernIr;
  else if (emit == "cubin") out.assign(cubin->cubin.begin(), cubin->cubin.end());
  else if (a.json) out = launchJson(r->launch) + "\n";
  else out = launchText(r->launch);
  if (!a.output.empty()) return writeOutput(a.output, out) ? kOk : kFailed;
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kOk;
}
}  // namespace

void registerCompileCommand(CLI::App& app) {
  static CompileArgs args;
  auto* cmd = app.add_subcommand("compile", "Compile a tile program to PTX (or show its kern IR or launch contract).");
  cmd->add_option("file", args.file, "Input file of text IR holding one tile.program")->required();
  addScheduleOptions(*cmd, args.schedule);
  cmd->add_option("--emit", args.emit, "What to emit: ptx, cubin, kern or launch (default: by -o's extension, else ptx)")
      ->check(CLI::IsMember({"ptx", "cubin", "kern", "launch"}));
  cmd->add_flag("--json", args.json, "With --emit launch: the launch contract as JSON");
  cmd->add_option("-o,--output", args.output, "Write to FILE instead of standard output (FILE.cubin: a cubin)");
  cmd->callback([] { setExitCode(runCompile(args)); });
}

}  // namespace kiln::tools
