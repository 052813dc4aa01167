// `kiln opt FILE [--pass NAME]...`: parse text IR, verify it, run passes, print the result.
// With --verify-diagnostics, check the diagnostics against `expected-error {{...}}` comments in the
// input instead (see src/driver/expected_diagnostics.h).
#include <cstdio>

#include "driver/expected_diagnostics.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"
#include "tools/commands.h"
#include "schedule/pipeline.h"

namespace kiln::tools {

namespace {
struct OptArgs {
  std::string file;
  std::vector<std::string> passes;
  bool verifyDiagnostics = false;
  bool printAfterAll = false;
  bool locations = false;
  bool listPasses = false;
};

int runOpt(const OptArgs& a) {
  if (a.listPasses) {
    for (const auto& p : pipeline::allPasses()) std::printf("%-24s %s\n", p.name.c_str(), p.summary.c_str());
    return kOk;
  }
  if (a.file.empty()) {
    std::fprintf(stderr, "kiln opt: give an input file (text IR), or - for standard input\n");
    return kUsage;
  }
  std::string text;
  if (a.file == "-") {
    if (!readStdin(text)) return kFailed;
  } else if (!readFile(a.file, text)) {
    return kFailed;
  }
  ir::DiagnosticEngine diag;
  ir::ParseOptions popts{a.file == "-" ? "<stdin>" : a.file, false};
  for (const auto& p : a.passes)
    if (!pipeline::findPass(p)) {
      pipeline::runPass(p, *std::make_unique<ir::Module>(), diag);  // reports the unknown name
      std::fprintf(stderr, "%s", diag.str().c_str());
      return kUsage;
    }
  bool ok = false;
  auto module = ir::parseModule(text, diag, popts);
  if (module) {
    ok = ir::verify(*module, diag);
    for (size_t i = 0; ok && i < a.passes.size(); ++i) {
      ok = pipeline::runPass(a.passes[i], *module, diag) && ir::verify(*module, diag);
      if (ok && a.printAfterAll)
        std::printf("// -----// IR after %s //----- //\n%s", a.passes[i].c_str(),
                    ir::toString(*module, {.locations = a.locations}).c_str());
    }
  }
  if (a.verifyDiagnostics) {
    ir::DiagnosticEngine expDiag;
    auto expected = driver::parseExpectations(text, expDiag);
    auto problems = driver::matchExpectations(expected, diag.diagnostics());
    for (const auto& d : expDiag.diagnostics()) problems.push_back(d.str());
    for (const auto& p : problems) std::fprintf(stderr, "%s: %s\n", a.file.c_str(), p.c_str());
    return problems.empty() ? kOk : kFailed;
  }
  std::fprintf(stderr, "%s", diag.str().c_str());
  if (!ok) return kFailed;
  if (!a.printAfterAll) std::printf("%s", ir::toString(*module, {.locations = a.locations}).c_str());
  return kOk;
}
}  // namespace

void registerOptCommand(CLI::App& app) {
  static OptArgs args;
  auto* cmd = app.add_subcommand("opt", "Parse and verify text IR, run passes on it, and print the result.");
  cmd->add_option("file", args.file, "Input file of text IR (- for standard input)");
  // One name per --pass, so `--pass NAME FILE` reads FILE as the input, not as a second pass.
  cmd->add_option("--pass", args.passes, "A pass to run, in order; repeat for several (see --list-passes)")
      ->allow_extra_args(false);
  cmd->add_flag("--verify-diagnostics", args.verifyDiagnostics,
                "Check diagnostics against `// expected-error {{...}}` comments in the input");
  cmd->add_flag("--print-ir-after-all", args.printAfterAll, "Print the IR after every pass");
  cmd->add_flag("--locations", args.locations, "Print each op's source location");
  cmd->add_flag("--list-passes", args.listPasses, "List the passes and exit");
  cmd->callback([] { setExitCode(runOpt(args)); });
}

}  // namespace kiln::tools
