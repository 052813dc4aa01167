// `kiln opt FILE [--pass NAME]... [--pipeline STRATEGY]`: parse text IR, verify it, run passes in
// order (verifying after each), print the result. Errors go to stderr and exit 1.
#include <fstream>
#include <iostream>
#include <sstream>

#include "kiln/ir/op_registry.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"
#include "tools/verbs.h"
#include "transforms/pass_registry.h"
#include "transforms/pipeline.h"

namespace kiln::tools {
namespace {

struct OptArgs {
  std::string file;
  std::vector<std::string> passes;
  std::string pipeline;
  bool printAfterAll = false;
  bool listPasses = false;
  bool listOps = false;
  bool locations = false;
} args;

}  // namespace

CLI::App* addOptVerb(CLI::App& app) {
  CLI::App* c = app.add_subcommand("opt", "run passes on text IR and print the result");
  c->add_option("file", args.file, "input .kiln file ('-' for stdin)");
  c->add_option("--pass", args.passes, "a pass to run (repeatable; runs in order)");
  c->add_option("--pipeline", args.pipeline, "run the whole pipeline of a strategy (e.g. sm80_multistage)");
  c->add_flag("--print-ir-after-all", args.printAfterAll, "print the IR after every pass to stderr");
  c->add_flag("--list-passes", args.listPasses, "list the passes and exit");
  c->add_flag("--list-ops", args.listOps, "list the registered ops and exit");
  c->add_flag("--print-locations", args.locations, "print op locations");
  return c;
}

int runOptVerb() {
  if (args.listPasses) {
    for (const auto& p : transforms::allPasses()) std::cout << p.name << "  " << p.summary << "\n";
    return 0;
  }
  if (args.listOps) {
    for (const auto& o : ir::OpRegistry::get().all()) std::cout << o.name << "  " << o.summary << "\n";
    return 0;
  }
  if (args.file.empty()) {
    std::cerr << "kiln opt: no input file\n";
    return 1;
  }
  std::stringstream text;
  if (args.file == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(args.file);
    if (!in) {
      std::cerr << "kiln opt: cannot read '" << args.file << "'\n";
      return 1;
    }
    text << in.rdbuf();
  }
  ir::DiagnosticEngine diag;
  diag.setHandler([](const ir::Diagnostic& d) { std::cerr << d.str() << "\n"; });
  auto m = ir::parseModule(text.str(), diag, {.filename = args.file});
  if (!m || !ir::verify(*m, diag)) return 1;
  std::vector<std::string> steps = args.passes;
  if (!args.pipeline.empty()) {
    auto p = transforms::pipelineSteps(args.pipeline);
    if (p.empty()) {
      std::cerr << "kiln opt: unknown pipeline '" << args.pipeline << "'\n";
      return 1;
    }
    steps.insert(steps.begin(), p.begin(), p.end());
  }
  transforms::PipelineOptions opts;
  opts.printIrAfterAll = args.printAfterAll;
  if (!transforms::runSteps(steps, *m, diag, opts)) return 1;
  std::cout << ir::toString(*m, {.locations = args.locations});
  return diag.hadError() ? 1 : 0;
}

}  // namespace kiln::tools
