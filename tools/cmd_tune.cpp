// `kiln tune`: search a program's schedules on the GPU at given dims, check the fastest and record
// it in the tuning cache (kiln/tune.h), which `kiln run` then uses at those dims and nearby ones.
//   kiln tune --example gemm_bf16 --dims M=4096,N=4096,K=4096
//   kiln tune FILE --shapes shapes.txt      one dims line per shape (M=..,N=..,K=..), tuned in turn
//   kiln tune --list | --clear              the tuning cache's entries
//   kiln tune --example gemm_bf16 --dims ... --dry-run [--target sm_90a]
//                                           on the CPU: the candidates compiled and pruned, no GPU
#include <cstdio>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "examples/examples.h"
#include "interp/interpret_command.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"
#include "kiln/runtime/driver.h"
#include "kiln/tune.h"
#include "ops/tuning_cache.h"
#include "tools/commands.h"

namespace kiln::tools {
namespace {

struct TuneArgs {
  std::string file, example, dims, shapes, target, cacheDir;
  int finalists = 8, reps = 15, screenReps = 3, maxCandidates = 0, sms = 0;
  double budget = 0, screenSeconds = 4;
  bool exhaustive = false, noCache = false, json = false, list = false, clear = false, dryRun = false;
};

nlohmann::json toJson(const TuneResult& r, const std::map<std::string, int64_t>& dims) {
  nlohmann::json cands = nlohmann::json::array();
  for (const auto& c : r.candidates) {
    nlohmann::json j{{"config", c.config}, {"origin", c.origin}, {"score", c.score}, {"registers", c.registers},
                     {"shared_bytes", c.sharedBytes}};
    if (c.microseconds >= 0) j["us"] = c.microseconds;
    if (!c.dropped.empty()) j["dropped"] = c.dropped;
    cands.push_back(std::move(j));
  }
  return {{"dims", dims},         {"config", r.config},       {"us", r.microseconds}, {"why", r.why},
          {"cached", r.fromCache}, {"seconds", r.seconds},    {"verified", r.verified},
          {"cache_file", r.cacheFile}, {"space", r.space}, {"assembled", r.assembled},
          {"phases", {{"compile", r.compileSeconds}, {"inputs", r.inputSeconds}, {"screen", r.screenSeconds},
                      {"timing", r.timingSeconds}, {"check", r.checkSeconds}}},
          {"candidates", cands}};
}

// Why candidates were dropped, counted by the reason's kind ("spills 96 bytes" counts as "spills").
std::string dropSummary(const TuneResult& r) {
  std::map<std::string, int> kinds;
  for (const auto& c : r.candidates) {
    if (c.dropped.empty()) continue;
    std::string kind = c.dropped.substr(0, c.dropped.find_first_of(":(0123456789"));
    kind.erase(kind.find_last_not_of(' ') + 1);
    ++kinds[kind];
  }
  std::string s;
  for (const auto& [k, n] : kinds) s += fmt::format("{}{} {}", s.empty() ? "" : ", ", n, k);
  return s;
}

// --dry-run: one line per candidate that would be screened, the dropped ones with their reason.
void printPlan(const TuneResult& r) {
  for (const auto& c : r.candidates) {
    if (c.dropped.empty())
      std::printf("  %3d regs %6lld B  %s\n             (%s)\n", c.registers, static_cast<long long>(c.sharedBytes),
                  c.config.c_str(), c.origin.c_str());
    else
      std::printf("  %12s  %s: %s\n", "dropped", c.origin.c_str(), c.dropped.c_str());
  }
  std::string dropped = dropSummary(r);
  std::printf("%s\n  space: %s\n  compiled in %.1f s; dropped: %s\n", r.why.c_str(),
              r.space.empty() ? "none" : r.space.c_str(), r.compileSeconds, dropped.empty() ? "none" : dropped.c_str());
}

void printReport(const TuneResult& r) {
  for (const auto& c : r.candidates) {
    if (c.microseconds >= 0)
      std::printf("  %9.2f us  %s%s\n             (%s)\n", c.microseconds, c.config.c_str(),
                  c.dropped.empty() && c.config == r.config ? "  <- fastest" : "", c.origin.c_str());
    else if (c.dropped.rfind("not among", 0) != 0)
      std::printf("  %12s  %s: %s\n", "dropped", c.origin.c_str(), c.dropped.c_str());
    if (c.microseconds >= 0 && !c.dropped.empty()) std::printf("             dropped: %s\n", c.dropped.c_str());
  }
  std::printf("schedule %s\n  %.2f us (%s)\n", r.config.c_str(), r.microseconds, r.why.c_str());
  if (!r.verified.empty()) std::printf("  %s\n", r.verified.c_str());
  if (!r.cacheFile.empty()) std::printf("  recorded in %s\n", r.cacheFile.c_str());
  if (std::string dropped = dropSummary(r); !dropped.empty()) std::printf("  dropped: %s\n", dropped.c_str());
}

int listOrClear(const TuneArgs& a) {
  ops::TuningCache cache(a.cacheDir.empty() ? ops::TuningCache::defaultDir() : std::filesystem::path(a.cacheDir));
  ir::DiagnosticEngine diag;
  if (a.clear) {
    size_t n = cache.clear(diag);
    std::fprintf(stderr, "%s", diag.str().c_str());
    std::printf("removed %zu tuning entr%s from %s\n", n, n == 1 ? "y" : "ies", cache.dir().c_str());
    return kOk;
  }
  for (const auto& s : cache.list(diag)) {
    std::string dims;
    for (const auto& [d, v] : s.entry.dims) dims += (dims.empty() ? "" : ",") + d + "=" + std::to_string(v);
    std::printf("%s %s on %s (%d SMs) at %s: %.2f us, %s\n  %s\n", s.entry.source.c_str(), s.key.target.c_str(),
                s.key.device.name.c_str(), s.key.device.smCount, dims.c_str(), s.entry.microseconds,
                s.entry.date.c_str(), s.entry.config.c_str());
  }
  std::fprintf(stderr, "%s", diag.str().c_str());
  return kOk;
}

// The dims lines of --shapes (blank lines and # comments skipped), or the one --dims.
std::optional<std::vector<std::string>> shapeLines(const TuneArgs& a) {
  if (a.shapes.empty()) return std::vector<std::string>{a.dims};
  std::string text;
  if (!readFile(a.shapes, text)) return std::nullopt;
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    line = line.substr(0, line.find('#'));
    line.erase(0, line.find_first_not_of(" \t"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

TuneOptions optionsOf(const TuneArgs& a) {
  TuneOptions options;
  options.finalists = a.finalists;
  options.reps = a.reps;
  options.screenReps = a.screenReps;
  options.screenSeconds = a.screenSeconds;
  options.exhaustive = a.exhaustive;
  options.budgetSeconds = a.budget;
  options.maxCandidates = a.maxCandidates;
  options.useCache = !a.noCache;
  options.cacheDir = a.cacheDir;
  if (!a.json) options.progress = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  return options;
}

// --dry-run: the candidates for --target (default sm_90a) compiled and pruned on the CPU, per shape.
int dryRun(const TuneArgs& a, const ir::Module& module, const std::vector<std::string>& lines) {
  auto target = Target::byName(a.target.empty() ? "sm_90a" : a.target);
  if (!target) {
    std::fprintf(stderr, "kiln tune: unknown --target '%s'; known: %s\n", a.target.c_str(), Target::knownNames().c_str());
    return kUsage;
  }
  TuneOptions options = optionsOf(a);
  nlohmann::json all = nlohmann::json::array();
  int status = kOk;
  for (const std::string& line : lines) {
    ir::DiagnosticEngine diag;
    auto dims = interp::parseDims(line, diag);
    if (!dims) {
      std::fprintf(stderr, "%s", diag.str().c_str());
      return kUsage;
    }
    auto r = planTune(module, *target, *dims, options, diag, a.sms);
    std::fprintf(stderr, "%s", diag.str().c_str());
    if (!r) {
      status = kFailed;
      continue;
    }
    if (a.json) {
      all.push_back(toJson(*r, *dims));
    } else {
      std::printf("plan %s at %s for %s (%d SMs)\n", module.body().front()->stringAttr("sym_name").c_str(), line.c_str(),
                  target->name.c_str(), a.sms > 0 ? a.sms : target->referenceSms);
      printPlan(*r);
    }
  }
  if (a.json) std::printf("%s\n", (lines.size() == 1 && all.size() == 1 ? all[0] : all).dump(1).c_str());
  return status;
}

int runTune(const TuneArgs& a) {
  if (a.list || a.clear) return listOrClear(a);
  std::string text;
  if (!a.example.empty() && !a.file.empty()) {
    std::fprintf(stderr, "kiln tune: give either a program file or --example NAME, not both\n");
    return kUsage;
  }
  if (!a.example.empty()) {
    const examples::Example* e = examples::find(a.example);
    if (!e) {
      std::fprintf(stderr, "kiln tune: no example named '%s'; run `kiln examples` for the list\n", a.example.c_str());
      return kUsage;
    }
    text = ir::toString(*e->build());
  } else if (a.file.empty()) {
    std::fprintf(stderr, "kiln tune: give a program file (text IR) or --example NAME, and --dims\n");
    return kUsage;
  } else if (!readFile(a.file, text)) {
    return kFailed;
  }
  if (a.dims.empty() == a.shapes.empty()) {
    std::fprintf(stderr, "kiln tune: give the dims to tune at: --dims M=..,N=.. or --shapes FILE (one line each)\n");
    return kUsage;
  }
  ir::DiagnosticEngine diag;
  ir::ParseOptions parse;
  parse.filename = a.file.empty() ? "example " + a.example : a.file;
  auto module = ir::parseModule(text, diag, parse);
  if (!module || !ir::verify(*module, diag)) {
    std::fprintf(stderr, "%s", diag.str().c_str());
    return kFailed;
  }
  auto lines = shapeLines(a);
  if (!lines) return kFailed;
  if (a.dryRun) return dryRun(a, *module, *lines);
  std::string why;
  const runtime::Driver* drv = runtime::Driver::get(&why);
  if (!drv) {
    std::fprintf(stderr, "kiln tune: no GPU is available here: %s\n(tuning times each candidate on the GPU)\n",
                 why.c_str());
    return kNoGpu;
  }
  runtime::Context ctx = runtime::Context::primary(*drv);
  auto target = targetOf(ctx);
  if (!a.target.empty() && (!target || target->name != a.target)) {
    std::fprintf(stderr, "kiln tune: --target %s, but this GPU (%s) is %s: tuning measures on the GPU present\n",
                 a.target.c_str(), ctx.properties().name.c_str(), target ? target->name.c_str() : "no Kiln target");
    return kUsage;
  }
  TuneOptions options = optionsOf(a);
  nlohmann::json all = nlohmann::json::array();
  int status = kOk;
  for (const std::string& line : *lines) {
    auto dims = interp::parseDims(line, diag);
    if (!dims) {
      std::fprintf(stderr, "%s", diag.str().c_str());
      return kUsage;
    }
    auto r = tune(*module, ctx, *dims, options, diag);
    std::fprintf(stderr, "%s", diag.str().c_str());
    diag = ir::DiagnosticEngine();
    if (!r) {
      status = kFailed;
      continue;
    }
    if (a.json) all.push_back(toJson(*r, *dims));
    else {
      std::printf("tune %s at %s on %s\n", module->body().front()->stringAttr("sym_name").c_str(), line.c_str(),
                  ctx.properties().name.c_str());
      printReport(*r);
    }
  }
  if (a.json) std::printf("%s\n", (a.shapes.empty() && all.size() == 1 ? all[0] : all).dump(1).c_str());
  return status;
}

}  // namespace

void registerTuneCommand(CLI::App& app) {
  static TuneArgs args;
  auto* cmd = app.add_subcommand("tune", "Search a program's schedules on the GPU at given dims; record the fastest "
                                         "correct one in the tuning cache, which `kiln run` uses.");
  cmd->add_option("file", args.file, "Program in text IR");
  cmd->add_option("--example", args.example, "Tune a built-in example instead of a file (see `kiln examples`)");
  cmd->add_option("--dims", args.dims, "Dim values to tune at, e.g. M=4096,N=4096,K=4096");
  cmd->add_option("--shapes", args.shapes, "A file of dims lines (M=..,N=..,K=..), each tuned in turn");
  cmd->add_option("--target", args.target, "The target expected (the GPU present decides; a mismatch is an error)");
  cmd->add_option("--finalists", args.finalists, "Candidates timed after the static pruning")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--reps", args.reps, "Timed launches per finalist (the median is kept)")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  cmd->add_option("--screen-reps", args.screenReps,
                  "Launches per candidate in the screen that picks the finalists (0: the best ranked are the finalists)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd->add_option("--screen-s", args.screenSeconds,
                  "Seconds the screen may take: only as many candidates (best ranked first) as fit at the family "
                  "pick's time are screened. 0: none")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  cmd->add_option("--budget-s", args.budget,
                  "Seconds for compiling candidates (best ranked first); what compiled by then is timed. 0: none")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  cmd->add_option("--max-candidates", args.maxCandidates,
                  "Candidates compiled at most (the registered variants always; the generated space up to it). "
                  "0: 256")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  cmd->add_flag("--dry-run", args.dryRun,
                "No GPU: compile and prune the candidates for --target (default sm_90a) and list them");
  cmd->add_option("--sms", args.sms, "With --dry-run: the SM count of the device planned for (0: the target's "
                                     "reference count, 132 for sm_90a)")
      ->check(CLI::Range(0, 1024));
  cmd->add_flag("--exhaustive", args.exhaustive, "Time every candidate that assembles (ignores the cache)");
  cmd->add_flag("--no-cache", args.noCache, "Measure even when the tuning cache has an entry");
  cmd->add_option("--cache-dir", args.cacheDir, "The tuning cache's folder (default: $KILN_TUNE_DIR, else "
                                                "the compile cache's folder + /tuning)");
  cmd->add_flag("--json", args.json, "Print the result (and every candidate) as JSON");
  cmd->add_flag("--list", args.list, "List the tuning cache's entries");
  cmd->add_flag("--clear", args.clear, "Remove the tuning cache's entries");
  cmd->callback([] { setExitCode(runTune(args)); });
}

}  // namespace kiln::tools
