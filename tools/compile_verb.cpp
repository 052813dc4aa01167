// `kiln compile FILE [--target sm_80] [--config "bm=..."] [--emit ptx|kern|launch]`: compiles the
// file's tile.program and prints the PTX (default), the final kern IR, or the launch contract.
#include <fstream>
#include <iostream>
#include <sstream>

#include "kiln/compile.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/verifier.h"
#include "schedule/config.h"
#include "schedule/target.h"
#include "tools/verbs.h"

namespace kiln::tools {
namespace {
struct {
  std::string file, target = "sm_80", config, emit = "ptx";
} args;
}  // namespace

CLI::App* addCompileVerb(CLI::App& app) {
  CLI::App* c = app.add_subcommand("compile", "compile a tile program to PTX");
  c->add_option("file", args.file, "input .kiln file")->required();
  c->add_option("--target", args.target, "target architecture (" + Target::knownNames() + ")");
  c->add_option("--config", args.config, "schedule, e.g. \"bm=128 bn=128 bk=32 stages=3\"");
  c->add_option("--emit", args.emit, "what to print: ptx, kern or launch")->check(CLI::IsMember({"ptx", "kern", "launch"}));
  return c;
}

int runCompileVerb() {
  std::ifstream in(args.file);
  if (!in) {
    std::cerr << "kiln compile: cannot read '" << args.file << "'\n";
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();
  ir::DiagnosticEngine diag;
  diag.setHandler([](const ir::Diagnostic& d) { std::cerr << d.str() << "\n"; });
  auto m = ir::parseModule(text.str(), diag, {.filename = args.file});
  if (!m || !ir::verify(*m, diag)) return 1;
  auto target = Target::byName(args.target);
  if (!target) {
    std::cerr << "kiln compile: unknown target '" << args.target << "'; known targets: " << Target::knownNames() << "\n";
    return 1;
  }
  auto config = Config::parse(args.config, diag);
  if (!config) return 1;
  auto r = compile(*m, *target, *config, diag);
  if (!r) return 1;
  if (args.emit == "ptx") {
    std::cout << r->ptx;
  } else if (args.emit == "kern") {
    std::cout << r->kernIr;
  } else {
    const LaunchInfo& l = r->launch;
    std::cout << "kernel " << l.kernelName << "\nthreads " << l.threads << "\ndynamic_smem " << l.dynamicSmemBytes
              << "\n";
    for (const auto& p : l.params)
      std::cout << "param " << p.name << " "
                << (p.kind == KernelParam::Kind::Pointer ? "ptr" : p.kind == KernelParam::Kind::Dim ? "dim" : "scalar")
                << " " << ir::scalarName(p.elem) << (p.alignment ? " align=" + std::to_string(p.alignment) : "") << "\n";
    const char* axes = "xyz";
    for (size_t i = 0; i < l.grid.size(); ++i) {
      std::cout << "grid." << axes[i] << " " << l.grid[i].constant;
      for (const auto& [d, t] : l.grid[i].tiles) std::cout << " * ceil(" << d << "/" << t << ")";
      std::cout << "\n";
    }
    for (const auto& [d, v] : l.divisibility) std::cout << "requires " << d << " % " << v << " == 0\n";
  }
  return 0;
}

}  // namespace kiln::tools
