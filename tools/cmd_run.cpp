// `kiln run`: run a program on seeded random inputs and check the result.
//   --interpret   on the CPU, through the exact tile-IR interpreter, against an fp64 reference
//   (default)     on the GPU: compile for the device, launch, and check against the interpreter
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "examples/examples.h"
#include "interp/interpret_command.h"
#include "interp/size_limits.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/runtime/driver.h"
#include "tools/commands.h"
#include "tools/gpu_run.h"

namespace kiln::tools {

namespace {
struct RunArgs {
  std::string file;
  std::string example;
  std::string dims;  // empty: 128 for every dim of the program
  uint64_t seed = 1;
  bool interpret = false;
  std::string config;
  std::string maxMemory;  // empty: $KILN_INTERP_MAX_MEMORY, else the interpreter's default
};

// The interpreter's memory limit from --max-memory or $KILN_INTERP_MAX_MEMORY; nullopt after
// printing why the setting is malformed.
std::optional<int64_t> interpreterMemoryLimit(const std::string& option) {
  const char* env = std::getenv("KILN_INTERP_MAX_MEMORY");
  std::string text = !option.empty() ? option : env && *env ? env : "";
  if (text.empty()) return interp::kDefaultMaxMemoryBytes;
  auto bytes = interp::parseMemorySize(text);
  if (!bytes)
    std::fprintf(stderr, "kiln run: bad memory limit '%s' (from %s): give a size such as 8G, 512M or 1073741824\n",
                 text.c_str(), option.empty() ? "KILN_INTERP_MAX_MEMORY" : "--max-memory");
  return bytes;
}

// "M=128,N=128": every dim of the text's first tile.program (none when it does not parse: the run
// reports that).
std::string defaultDims(const std::string& text) {
  ir::DiagnosticEngine quiet;
  auto m = ir::parseModule(text, quiet);
  std::string dims;
  if (m && !m->body().empty())
    for (const auto& d : m->body().front()->stringsAttr("dims")) dims += (dims.empty() ? "" : ",") + d + "=128";
  return dims;
}

int runRun(const RunArgs& a) {
  std::string text;
  if (!a.example.empty()) {
    const examples::Example* e = examples::find(a.example);
    if (!e) {
      std::fprintf(stderr, "kiln run: no example named '%s'; run `kiln examples` for the list\n", a.example.c_str());
      return kUsage;
    }
    text = ir::toString(*e->build());
  } else if (a.file.empty()) {
    std::fprintf(stderr, "kiln run: give a program file (text IR) or --example NAME\n");
    return kUsage;
  } else if (!readFile(a.file, text)) {
    return kFailed;
  }
  std::string dims = a.dims.empty() ? defaultDims(text) : a.dims;
  if (!a.interpret) {
    std::string why;
    if (!runtime::Driver::get(&why)) {
      std::fprintf(stderr,
                   "kiln run: no GPU is available here: %s\n"
                   "To run the program on the CPU instead, add --interpret: the interpreter computes exactly what\n"
                   "the GPU kernel must, and reports its error against an fp64 reference.\n",
                   why.c_str());
      return kNoGpu;
    }
    return runOnGpu(text, dims, a.seed, a.config);
  }
  auto maxMemory = interpreterMemoryLimit(a.maxMemory);
  if (!maxMemory) return kUsage;
  ir::DiagnosticEngine diag;
  std::string report = interp::runInterpretCommand(text, dims, a.seed, diag, *maxMemory);
  std::fprintf(stderr, "%s", diag.str().c_str());
  if (report.empty()) return kFailed;
  std::printf("%s", report.c_str());
  return kOk;
}
}  // namespace

void registerRunCommand(CLI::App& app) {
  static RunArgs args;
  auto* cmd = app.add_subcommand("run", "Run a program on seeded random inputs and check its result "
                                        "(on the GPU, or on the CPU with --interpret).");
  cmd->add_option("file", args.file, "Program in text IR");
  cmd->add_option("--example", args.example, "Run a built-in example instead of a file (see `kiln examples`)");
  cmd->add_option("--dims", args.dims, "Dim values, e.g. M=64,N=32,K=16 (default: 128 for every dim)");
  cmd->add_option("--seed", args.seed, "Seed of the random inputs")->capture_default_str();
  cmd->add_flag("--interpret", args.interpret, "Run on the CPU through the tile-IR interpreter");
  cmd->add_option("--max-memory", args.maxMemory,
                  "Memory limit of the interpreter, e.g. 8G or 512M (default: $KILN_INTERP_MAX_MEMORY, else 4G)");
  cmd->add_option("--config", args.config,
                  "Schedule for the GPU run, e.g. \"bm=128 bn=128 bk=32 stages=3\" (default: a GEMM runs its family's pick "
                  "for the dims, a program without a matrix product the rowwise family's)");
  cmd->callback([] { setExitCode(runRun(args)); });
}

}  // namespace kiln::tools
