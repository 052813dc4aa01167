// `kiln inspect`: compile and assemble without a GPU, then report registers, stack, spills, shared
// memory and the instruction mix — for a program, the built-in examples, or a registered family.
#include <cstdio>
#include <map>

#include "backend/assembler.h"
#include "backend/compile_cache.h"
#include "driver/inspect.h"
#include "examples/examples.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/verifier.h"
#include "kiln/select.h"
#include "kiln/target.h"
#include "ops/gemm_bf16.h"
#include "ops/gemm_fp8.h"
#include "schedule/config.h"
#include "tools/commands.h"
#include "tools/schedule_choice.h"

namespace kiln::tools {

namespace {

struct InspectArgs {
  std::string file;
  std::string family;
  bool examples = false;
  ScheduleFlags schedule;  // a program's or example's target and schedule (tools/schedule_choice.h)
  bool json = false;
  bool kMajor = false;
};

bool namesRowwise(const std::string& config) {
  ir::DiagnosticEngine quiet;
  auto c = Config::parse(config, quiet);
  return c && c->strategy == "rowwise";
}

// Assembles one compiled kernel and fills a row; false after printing why.
bool inspectOne(const std::string& name, const CompileResult& compiled, const Target& target,
                std::vector<driver::InspectRow>& rows, ir::DiagnosticEngine& diag) {
  backend::CompileCache cache(backend::CompileCache::defaultDir());
  auto kernel = backend::assembleCached(compiled.ptx, target.name, diag, &cache);
  if (!kernel) return false;
  driver::InspectRow row;
  row.name = name;
  row.config = compiled.config;
  row.dynamicSmemBytes = compiled.launch.dynamicSmemBytes;
  auto it = kernel->resources.find(compiled.launch.kernelName);
  if (it != kernel->resources.end()) row.resources = it->second;
  ir::DiagnosticEngine sassDiag;
  if (auto sass = backend::sassStats(kernel->cubin, sassDiag)) row.mix = driver::instructionMix(*sass);
  rows.push_back(std::move(row));
  return true;
}

int runInspect(const InspectArgs& a) {
  const std::string targetName = a.schedule.target.empty() ? kDefaultTarget : a.schedule.target;
  auto target = Target::byName(targetName);
  if (!target) {
    std::fprintf(stderr, "kiln inspect: unknown target '%s'; known: %s\n", targetName.c_str(), Target::knownNames().c_str());
    return kUsage;
  }
  ir::DiagnosticEngine diag;
  std::vector<driver::InspectRow> rows;
  bool ok = true;
  if (!a.family.empty()) {
    if (a.family != "gemm_bf16" && a.family != "gemm_fp8") {
      std::fprintf(stderr, "kiln inspect: no family named '%s'; families: gemm_bf16, gemm_fp8\n", a.family.c_str());
      return kUsage;
    }
    // gemm_fp8: one program (B K-major), sm_90a only.
    for (const auto& v : a.family == "gemm_fp8" ? ops::gemmFp8Variants() : std::vector<ops::Fp8GemmVariant>{}) {
      std::string why;
      ops::Fp8GemmProblem problem{4096, 4096, 4096};
      problem.fastAccum = v.config.fp8Accum == Fp8Accum::Fast;  // each variant on the problem it serves
      if (!v.eligible(problem, *target, &why)) {
        std::fprintf(stderr, "%s: not available on %s: %s\n", v.name.c_str(), target->name.c_str(), why.c_str());
        continue;
      }
      auto compiled = v.compile(*target, diag);
      ok = compiled && inspectOne(v.name, *compiled, *target, rows, diag) && ok;
    }
    for (const auto& v : a.family == "gemm_bf16" ? ops::gemmBf16Variants() : std::vector<ops::GemmVariant>{}) {
      std::string why;
      if (!v.eligible(ops::GemmProblem{4096, 4096, 4096, ir::ScalarType::BF16, ir::ScalarType::BF16,
                                       ir::ScalarType::BF16, true, a.kMajor},
                      *target, &why)) {
        std::fprintf(stderr, "%s: not available on %s: %s\n", v.name.c_str(), target->name.c_str(), why.c_str());
        continue;
      }
      auto compiled = v.compile(a.kMajor, *target, diag);
      ok = compiled && inspectOne(v.name, *compiled, *target, rows, diag) && ok;
    }
  } else {
    std::vector<std::pair<std::string, std::unique_ptr<ir::Module>>> programs;
    if (a.examples) {
      for (const auto& e : examples::all()) programs.emplace_back(e.name, e.build());
    } else if (!a.file.empty()) {
      std::string text;
      if (!readFile(a.file, text)) return kFailed;
      auto m = ir::parseModule(text, diag, {a.file, false});
      if (!m || !ir::verify(*m, diag)) {
        std::fprintf(stderr, "%s", diag.str().c_str());
        return kFailed;
      }
      programs.emplace_back(a.file, std::move(m));
    } else {
      std::fprintf(stderr, "kiln inspect: give a program file, --examples, or --family NAME\n");
      return kUsage;
    }
    for (auto& [name, module] : programs) {
      ir::DiagnosticEngine one;
      auto choice = chooseSchedule(*module, a.schedule, one);
      if (choice && !a.schedule.dims.empty()) std::fprintf(stderr, "%s: %s\n", name.c_str(), choice->why.c_str());
      // A memory-bound example under a GEMM schedule or the rowwise defaults: the rowwise family's
      // pick for rows of 4096.
      const examples::Example* e = a.examples ? examples::find(name) : nullptr;
      if (choice && e && !e->gemm && a.schedule.dims.empty() &&
          (choice->rowwiseDefault || !namesRowwise(choice->config))) {
        std::map<std::string, int64_t> dims;
        for (const auto& d : module->body().front()->stringsAttr("dims")) dims[d] = 4096;
        choice->config = select(*module, choice->target, dims).config;
      }
      if (choice) target = choice->target;  // the header names it (the flag's, unless a program names its own)
      std::optional<CompileResult> compiled;
      if (choice) compiled = compile(*module, choice->target, choice->config, one);
      if (!compiled || !inspectOne(name, *compiled, choice->target, rows, one)) {
        // Report and go on: one program the strategy cannot compile does not hide the others.
        std::fprintf(stderr, "%s: %s", name.c_str(), one.str().c_str());
        ok = false;
      } else if (!one.diagnostics().empty()) {
        // A success may still carry warnings (a damaged or read-only cache): never drop them.
        std::fprintf(stderr, "%s: %s", name.c_str(), one.str().c_str());
      }
    }
  }
  std::fprintf(stderr, "%s", diag.str().c_str());
  if (a.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : rows) j.push_back(driver::toJson(r));
    std::printf("%s\n", nlohmann::json{{"target", target->name}, {"kernels", j}}.dump(2).c_str());
  } else {
    std::printf("target %s\n%s", target->name.c_str(), driver::tableHeader().c_str());
    for (const auto& r : rows) std::printf("%s", driver::tableRow(r).c_str());
  }
  return ok ? kOk : kFailed;
}
}  // namespace

void registerInspectCommand(CLI::App& app) {
  static InspectArgs args;
  auto* cmd = app.add_subcommand("inspect", "Compile without a GPU and report registers, stack, spills, shared memory "
                                            "and the SASS instruction mix.");
  cmd->add_option("file", args.file, "Program in text IR");
  cmd->add_flag("--examples", args.examples, "Inspect every built-in example program");
  cmd->add_option("--family", args.family, "Inspect every variant of a registered family (gemm_bf16, gemm_fp8)");
  addScheduleOptions(*cmd, args.schedule);
  cmd->add_flag("--kmajor-b", args.kMajor, "With --family: the variants for a K-major B");
  cmd->add_flag("--json", args.json, "Print JSON instead of a table");
  cmd->callback([] { setExitCode(runInspect(args)); });
}

}  // namespace kiln::tools
