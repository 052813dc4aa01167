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
#include "schedule/config.h"
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
  std::string verify = "auto";
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

// --config with --interpret: the interpreter runs the tile program itself, so a schedule changes
// nothing there; it is still parsed, so a mistyped one is refused rather than ignored.
bool checkInterpretConfig(const std::string& config) {
  ir::DiagnosticEngine diag;
  if (!Config::parse(config, diag, {"--config", 1, 1}, true)) {
    std::fprintf(stderr, "%s", diag.str().c_str());
    return false;
  }
  std::fprintf(stderr, "kiln run: note: --interpret runs the tile program itself; --config \"%s\" is valid but "
                       "changes nothing on the CPU\n", config.c_str());
  return true;
}

int runRun(const RunArgs& a) {
  std::string text;
  if (!a.example.empty() && !a.file.empty()) {
    std::fprintf(stderr, "kiln run: give either a program file or --example NAME, not both ('%s' and --example %s)\n",
                 a.file.c_str(), a.example.c_str());
    return kUsage;
  }
  if (a.interpret && !a.config.empty() && !checkInterpretConfig(a.config)) return kUsage;
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
    return runOnGpu(text, dims, a.seed, a.config, a.verify);
  }
  auto maxMemory = interpreterMemoryLimit(a.maxMemory);
  if (!maxMemory) return kUsage;
  ir::DiagnosticEngine diag;
  std::string source = a.example.empty() ? a.file : "example " + a.example;
  std::string report = interp::runInterpretCommand(text, dims, a.seed, diag, *maxMemory, source);
  std::printf("%s", report.c_str());
  std::fprintf(stderr, "%s", diag.str().c_str());
  // An error with a report (an output NaN where the reference is not) is still a failed run.
  return report.empty() || diag.hadError() ? kFailed : kOk;
}
}  // namespace

void registerRunCommand(CLI::App& app) {
  static RunArgs args;
  auto* cmd = app.add_subcommand("run", "Run a program on seeded random inputs and check its result "
                                        "(on the GPU, or on the CPU with --interpret).");
  cmd->add_option("file", args.file, "Program in text IR");
  cmd->add_option("--example", args.example, "Run a built-in example instead of a file (see `kiln examples`)");
  cmd->add_option("--dims", args.dims, "Dim values, e.g. M=64,N=32,K=16 (default: 128 for every dim)");
  // CLI11 would wrap "-1" to 2^64 - 1: a seed is a non-negative integer.
  cmd->add_option("--seed", args.seed, "Seed of the random inputs, a non-negative integer")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            bool digits = !v.empty() && v.find_first_not_of("0123456789") == std::string::npos;
            return digits ? "" : "the seed must be a non-negative integer (0 to 18446744073709551615), not '" + v + "'";
          },
          "UINT64"));
  cmd->add_flag("--interpret", args.interpret, "Run on the CPU through the tile-IR interpreter");
  cmd->add_option("--max-memory", args.maxMemory,
                  "Memory limit of the interpreter, e.g. 8G or 512M (default: $KILN_INTERP_MAX_MEMORY, else 4G)");
  cmd->add_option("--config", args.config,
                  "Schedule for the GPU run, e.g. \"bm=128 bn=128 bk=32 stages=3\" (default: a GEMM runs its family's pick "
                  "for the dims, a program without a matrix product the rowwise family's)");
  cmd->add_option("--verify", args.verify,
                  "How the GPU result is checked: full (every element against the interpreter), sample (a few hundred "
                  "output tiles against an fp64 reference), or auto (full below about 2.7e8 multiply-adds, else sample)")
      ->check(CLI::IsMember({"auto", "full", "sample"}))
      ->capture_default_str();
  cmd->callback([] { setExitCode(runRun(args)); });
}

}  // namespace kiln::tools
