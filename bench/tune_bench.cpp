// kiln_tune_bench: what `kiln tune` buys on a GEMM, and what it costs, in one run on the GPU
// (shared/BENCH.md). --program bf16 (examples::gemmBf16, against cuBLAS) or fp8
// (examples::fp8RowwiseGemm, against cuBLASLt). For each shape (the --shapes list, then --random
// shapes drawn from --seed, M, N, K log-uniform in [256, 16384], multiples of 8), until
// --max-seconds have passed:
//   1. kiln::tune searches it (default options) and records the winner in a fresh tuning cache.
//      Its seconds: for the first --cold-shapes shapes with an empty compile cache of their own
//      (cold), else with the run's compile cache, warm for what earlier shapes compiled;
//   2. for the first --warm-shapes shapes, the search again with the compile cache warm and the
//      tuning cache bypassed (warm), and a cached lookup;
//   3. for the first --exhaustive-shapes shapes (default all), an exhaustive search (every
//      candidate that assembles timed, --exhaustive-reps each) on the same inputs: the reference the
//      search is judged by;
//   4. the baselines, the family's heuristic pick (kiln::select), the tuned winner and the
//      exhaustive winner on the same buffers, each checked against the reference, then timed in
//      rotated alternation (L2 flushed before every launch, median of --reps);
//   5. for the first --bucket-shapes shapes, --bucket-neighbours other shapes of the same tuning
//      bucket: the winner reused (what the tuning cache gives them) against a search of their own,
//      timed in alternation with the baseline: what the bucketing rule costs.
// Prints a line per shape and a table; writes JSON (and --table, markdown) after every shape.
// --dry-run needs no GPU: per shape, the candidates compiled and pruned (kiln::planTune) and the
// host's share of a search (the inputs generated, the reference computed), timed on the CPU.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "backend/compile_cache.h"
#include "bench/tune_bench_shapes.h"
#include "bench/tune_bench_steps.h"
#include "examples/examples.h"
#include "interp/random_inputs.h"
#include "kiln/runtime/driver.h"
#include "kiln/select.h"

using namespace kiln;
using namespace kiln::bench;
using json = nlohmann::json;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// What a run sums up, over the shapes it completed.
struct Totals {
  std::vector<double> pick, tuned, exhaustive, tunedVsExhaustive, bucketCost, tuneSeconds, coldSeconds, warmSeconds,
      sameShapeWarmSeconds;
  std::vector<std::string> table;
  int skipped = 0;  // shapes not started (--max-seconds)
};

json summaryOf(const Totals& t, size_t done) {
  json s = {{"shapes", done},
            {"shapes_skipped_for_time", t.skipped},
            {"geomean_pick_vs_baseline", geomean(t.pick)},
            {"geomean_tuned_vs_baseline", geomean(t.tuned)},
            {"geomean_exhaustive_vs_baseline", geomean(t.exhaustive)},
            {"geomean_tuned_vs_exhaustive", geomean(t.tunedVsExhaustive)},
            {"tune_s_median", median(t.tuneSeconds)},
            {"tune_s_max", t.tuneSeconds.empty() ? 0 : *std::max_element(t.tuneSeconds.begin(), t.tuneSeconds.end())},
            {"tune_s_over_10", std::count_if(t.tuneSeconds.begin(), t.tuneSeconds.end(), [](double x) { return x > 10; })},
            {"cold_tune_s", t.coldSeconds},
            {"warm_new_shape_tune_s_median", median(t.warmSeconds)},
            {"warm_same_shape_tune_s", t.sameShapeWarmSeconds}};
  if (!t.bucketCost.empty())
    s["bucketing"] = {{"neighbours", t.bucketCost.size()},
                      {"geomean_own_search_vs_reused", geomean(t.bucketCost)},
                      {"worst_own_search_vs_reused",
                       *std::min_element(t.bucketCost.begin(), t.bucketCost.end())}};
  return s;
}

void write(const TuneBenchArgs& a, const json& header, const json& results, const Totals& t) {
  json out = header;
  out["summary"] = summaryOf(t, results.size());
  out["results"] = results;
  std::ofstream(a.json) << out.dump(2) << "\n";
  if (a.table.empty()) return;
  std::ofstream md(a.table);
  md << "| M×N×K | baseline us | pick / baseline | tuned / baseline | exhaustive / baseline | tuned / exhaustive "
        "| search s | compile cache | tuned |\n|---|---:|---:|---:|---:|---:|---:|---|---|\n";
  for (const auto& l : t.table) md << l << "\n";
  md << "\n" << out["summary"].dump(1) << "\n";
}

// --dry-run: per shape, the candidates planned and the host's share of a search, on the CPU.
int dryRun(const TuneBenchArgs& a, const ir::Module& program, const std::vector<Shape>& shapes) {
  const Target target = *Target::byName("sm_90a");
  json results = json::array(), header = {{"dry_run", true}, {"commit", KILN_GIT_COMMIT}, {"seed", a.seed},
                                          {"program", a.program}, {"target", target.name}};
  Totals t;
  for (const Shape& s : shapes) {
    TuneOptions o;
    o.maxCandidates = a.maxCandidates;
    o.budgetSeconds = a.budget;
    ir::DiagnosticEngine diag;
    auto plan = planTune(program, target, dimsOf(s), o, diag);
    if (!plan) {
      std::printf("[%s] plan failed: %s", str(s).c_str(), diag.str().c_str());
      continue;
    }
    Clock::time_point t0 = Clock::now();
    const ir::Operation& p = *program.body().front();
    auto args = interp::generateArguments(p, dimsOf(s), 1);
    const double inputs = since(t0);
    t0 = Clock::now();
    auto ref = tuning::referenceFor(p, args, dimsOf(s), 1, diag);
    const double reference = since(t0);
    json row = {{"M", s.M}, {"N", s.N}, {"K", s.K}, {"candidates", plan->candidates.size()},
                {"assembled", plan->assembled}, {"space", plan->space}, {"compile_s", plan->compileSeconds},
                {"inputs_s", inputs}, {"reference_s", reference}, {"reference", ref ? ref->how : diag.str()}};
    std::printf("[%s] %zu candidates, %d assembled in %.1f s; inputs %.2f s, reference %.2f s (%s)\n", str(s).c_str(),
                plan->candidates.size(), plan->assembled, plan->compileSeconds, inputs, reference,
                ref ? ref->how.c_str() : "failed");
    std::fflush(stdout);
    results.push_back(row);
    t.tuneSeconds.push_back(plan->compileSeconds + inputs + reference);
    write(a, header, results, t);
  }
  return results.size() == shapes.size() ? 0 : 1;
}

// Steps 1 to 5 for one shape: its row, or nullopt when a step failed (said why).
std::optional<json> measureShape(const Searches& search, size_t si, const Shape& s, cublasHandle_t blas,
                                 cublasLtHandle_t lt, Totals& t) {
  const TuneBenchArgs& a = search.args;
  const bool fp8 = a.program == "fp8", cold = int(si) < a.coldShapes;
  json row = {{"M", s.M}, {"N", s.N}, {"K", s.K}};
  // 1. The search, its compile cache empty (cold) or the run's.
  TuneOptions first;
  const std::filesystem::path coldDir = a.tuneDir + "-compile-cache-" + std::to_string(si);
  if (cold) first.compileCacheDir = coldDir.string();
  std::shared_ptr<tuning::Measurer> kept;
  auto tuned = search.run(s, first, "default", &kept);
  std::error_code ec;
  if (cold) {
    // What it compiled joins the run's compile cache, for the searches after it, as it would have
    // in a user's cache.
    const std::filesystem::path shared = backend::CompileCache::defaultDir();
    std::filesystem::create_directories(shared, ec);
    std::filesystem::copy(coldDir, shared, std::filesystem::copy_options::skip_existing, ec);
    std::filesystem::remove_all(coldDir, ec);
  }
  if (!tuned) return std::nullopt;
  row["compile_cache"] = cold ? "cold" : "warm (new shape)";
  row["tuned"] = {{"config", tuned->config}, {"us_in_search", tuned->microseconds}, {"why", tuned->why},
                  {"seconds", tuned->seconds}, {"phases", phases(*tuned)}, {"space", tuned->space}};
  row["candidates"] = tuned->candidates.size();
  row["assembled"] = tuned->assembled;
  row["timed"] = timedCount(*tuned);
  t.tuneSeconds.push_back(tuned->seconds);
  (cold ? t.coldSeconds : t.warmSeconds).push_back(tuned->seconds);
  // 2. Again with the compile cache warm for this very shape, then a cached lookup.
  if (int(si) < a.warmShapes) {
    TuneOptions again;
    again.useCache = false;
    again.record = false;
    if (auto w = search.run(s, again, "warm")) {
      row["warm_same_shape"] = {{"seconds", w->seconds}, {"phases", phases(*w)}};
      t.sameShapeWarmSeconds.push_back(w->seconds);
    }
    if (auto hit = search.run(s, {}, "cached")) row["cached_lookup_s"] = hit->seconds, row["cached_hit"] = hit->fromCache;
  }
  // 3. The exhaustive search, on the tuned search's inputs.
  std::optional<TuneResult> exhaustive;
  if (a.exhaustive && (a.exhaustiveShapes < 0 || int(si) < a.exhaustiveShapes)) {
    TuneOptions all;
    all.exhaustive = true;
    all.record = false;
    exhaustive = search.run(s, all, "exhaustive", nullptr, kept.get());
    if (exhaustive)
      row["exhaustive"] = {{"config", exhaustive->config}, {"seconds", exhaustive->seconds},
                           {"timed", timedCount(*exhaustive)}};
  }
  kept.reset();  // its device memory, before the comparison's
  // 4. The baselines, the pick, the tuned and the exhaustive winners, checked and timed together.
  std::vector<std::string> labels = {"pick", "tuned"}, configs = {select(search.program, search.target, dimsOf(s)).config,
                                                                  tuned->config};
  if (exhaustive) labels.push_back("exhaustive"), configs.push_back(exhaustive->config);
  std::vector<Kernel> kernels;
  for (const auto& c : configs) {
    auto k = buildOrSay(search.program, search.target, c);
    if (!k) return std::nullopt;
    kernels.push_back(std::move(*k));
  }
  std::vector<const Kernel*> ptrs;
  for (const auto& k : kernels) ptrs.push_back(&k);
  GemmCase g(fp8, s, blas, lt);
  auto ms = compare(g, ptrs, labels, s, search.ctx, a.reps, row);
  if (!ms) return std::nullopt;
  const size_t nb = g.baselines().size();
  const double base = (*ms)[0];
  row["baseline"] = g.baselines()[0].name;
  row["baseline_ms"] = base;
  for (size_t i = 1; i < nb; ++i) row[g.baselines()[i].name + "_ms"] = (*ms)[i];
  for (size_t i = 0; i < labels.size(); ++i) {
    row[labels[i]]["config"] = configs[i];
    row[labels[i]]["ms"] = (*ms)[nb + i];
    row[labels[i]]["vs_baseline"] = base / (*ms)[nb + i];
  }
  t.pick.push_back(base / (*ms)[nb]);
  t.tuned.push_back(base / (*ms)[nb + 1]);
  double vsExhaustive = 0;
  if (exhaustive) {
    vsExhaustive = (*ms)[nb + 2] / (*ms)[nb + 1];
    row["tuned_vs_exhaustive"] = vsExhaustive;
    t.exhaustive.push_back(base / (*ms)[nb + 2]);
    t.tunedVsExhaustive.push_back(vsExhaustive);
  }
  std::printf("[%s] %s %.4f ms; pick %.2fx, tuned %.2fx%s; search %.1f s (%s, %d of %zu timed)\n", str(s).c_str(),
              g.baselines()[0].name.c_str(), base, base / (*ms)[nb], base / (*ms)[nb + 1],
              exhaustive ? (", exhaustive " + std::to_string(base / (*ms)[nb + 2]).substr(0, 4) + "x").c_str() : "",
              tuned->seconds, cold ? "cold" : "warm", timedCount(*tuned), tuned->candidates.size());
  char line[700];
  std::snprintf(line, sizeof line, "| %s | %.1f | %.2f | %.2f | %s | %s | %.1f | %s | `%s` |", str(s).c_str(), base * 1e3,
                base / (*ms)[nb], base / (*ms)[nb + 1],
                exhaustive ? std::to_string(base / (*ms)[nb + 2]).substr(0, 4).c_str() : "-",
                exhaustive ? std::to_string(vsExhaustive).substr(0, 5).c_str() : "-", tuned->seconds,
                cold ? "cold" : "warm", tuned->config.c_str());
  t.table.push_back(line);
  // 5. The bucketing rule's cost.
  if (int(si) < a.bucketShapes)
    row["bucket_neighbours"] = bucketing(search, s, tuned->config, fp8, blas, lt, a.seed + si, t.bucketCost);
  return row;
}

int benchMain(int argc, char** argv) {
  CLI::App app{"What kiln tune buys on a GEMM against cuBLAS or cuBLASLt, and what it costs"};
  TuneBenchArgs a;
  app.add_option("--program", a.program, "bf16 (gemm_bf16 against cuBLAS) or fp8 (fp8_rowwise_gemm against cuBLASLt)")
      ->check(CLI::IsMember({"bf16", "fp8"}));
  app.add_option("--shapes", a.shapes, "Shapes as MxNxK;MxNxK, measured first");
  app.add_option("--random", a.random, "How many random shapes follow them");
  app.add_option("--seed", a.seed, "The random shapes' seed (recorded in the JSON)");
  app.add_option("--reps", a.reps, "Timed repetitions in the final comparison (median reported)");
  app.add_option("--tune-reps", a.tuneReps, "Timed repetitions per finalist in each search");
  app.add_option("--exhaustive-reps", a.exhaustiveReps, "Timed repetitions per candidate in the exhaustive search");
  app.add_flag("!--no-exhaustive", a.exhaustive, "Skip the exhaustive search");
  app.add_option("--exhaustive-shapes", a.exhaustiveShapes, "The exhaustive search for the first N shapes only (-1: all)");
  app.add_option("--cold-shapes", a.coldShapes, "For this many shapes, the search starts with an empty compile cache");
  app.add_option("--warm-shapes", a.warmShapes, "For this many shapes, search again with the compile cache warm");
  app.add_option("--bucket-shapes", a.bucketShapes, "For this many shapes, measure reusing the winner in its bucket");
  app.add_option("--bucket-neighbours", a.bucketNeighbours, "Other shapes of the bucket measured per shape");
  app.add_option("--max-seconds", a.maxSeconds, "Start no shape after this many seconds (0: no limit)");
  app.add_option("--budget-s", a.budget, "kiln tune's --budget-s for each search");
  app.add_option("--max-candidates", a.maxCandidates, "kiln tune's --max-candidates for each search");
  app.add_option("--tune-dir", a.tuneDir, "The tuning cache this run writes (emptied first)");
  app.add_option("--json", a.json, "Where to write the JSON results");
  app.add_option("--table", a.table, "Where to write a markdown table and the summary");
  app.add_flag("--dry-run", a.dryRun, "No GPU: plan each shape's search and time its host work on the CPU");
  CLI11_PARSE(app, argc, argv);
  std::vector<Shape> shapes;
  try {
    if (!a.shapes.empty()) shapes = parseShapes(a.shapes);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln_tune_bench: --shapes '%s': %s\n", a.shapes.c_str(), e.what());
    return 2;
  }
  for (const auto& s : randomShapes(a.random, a.seed)) shapes.push_back(s);
  auto program = a.program == "fp8" ? examples::fp8RowwiseGemm() : examples::gemmBf16();
  if (a.dryRun) return dryRun(a, *program, shapes);
  runtime::Driver* drv = driverOrExplain("kiln_tune_bench");
  if (!drv) return 3;
  runtime::Context ctx = runtime::Context::primary(*drv);
  std::printf("GPU: %s\nprogram %s, seed %llu, %zu shapes\n", gpuDescription().c_str(), a.program.c_str(),
              static_cast<unsigned long long>(a.seed), shapes.size());
  std::error_code ec;
  std::filesystem::remove_all(a.tuneDir, ec);
  const Target target = targetOf(ctx).value();
  cublasHandle_t blas;
  cublasLtHandle_t lt;
  check(cublasCreate(&blas), "cublasCreate");
  check(cublasLtCreate(&lt), "cublasLtCreate");
  const Searches search{*program, ctx, target, a};
  const json header = {{"gpu", gpuDescription()}, {"commit", KILN_GIT_COMMIT}, {"seed", a.seed}, {"program", a.program},
                       {"reps", a.reps}, {"tune_reps", a.tuneReps}, {"exhaustive_reps", a.exhaustiveReps}};
  json results = json::array();
  Totals t;
  const Clock::time_point started = Clock::now();
  for (size_t si = 0; si < shapes.size(); ++si) {
    if (a.maxSeconds > 0 && since(started) > a.maxSeconds) {
      t.skipped = int(shapes.size() - si);
      std::printf("--max-seconds %.0f spent: %d shapes not started\n", a.maxSeconds, t.skipped);
      break;
    }
    try {
      if (auto row = measureShape(search, si, shapes[si], blas, lt, t)) results.push_back(std::move(*row));
    } catch (const std::exception& e) {
      std::printf("[%s] failed: %s\n", str(shapes[si]).c_str(), e.what());
    }
    std::fflush(stdout);
    write(a, header, results, t);
  }
  cublasLtDestroy(lt);
  cublasDestroy(blas);
  std::printf("\n| M×N×K | baseline us | pick / baseline | tuned / baseline | exhaustive / baseline | tuned / "
              "exhaustive | search s | compile cache | tuned |\n|---|---:|---:|---:|---:|---:|---:|---|---|\n");
  for (const auto& l : t.table) std::printf("%s\n", l.c_str());
  std::printf("\n%s\n", summaryOf(t, results.size()).dump(1).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return benchMain(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln_tune_bench: %s\n", e.what());
    return 1;
  }
}
