// kiln_tune_bench's steps (contract in tune_bench_steps.h).
#include "bench/tune_bench_steps.h"

#include <cstdio>

#include "bench/tune_bench_shapes.h"
#include "kiln/select.h"
#include "ops/tuning_cache.h"
#include "tune/search.h"

namespace kiln::bench {

std::map<std::string, int64_t> dimsOf(const Shape& s) { return {{"M", s.M}, {"N", s.N}, {"K", s.K}}; }
std::string str(const Shape& s) { return std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K); }

nlohmann::json phases(const TuneResult& r) {
  return {{"compile", r.compileSeconds}, {"inputs", r.inputSeconds}, {"screen", r.screenSeconds},
          {"timing", r.timingSeconds},   {"check", r.checkSeconds}};
}

int timedCount(const TuneResult& r) {
  int n = 0;
  for (const auto& c : r.candidates) n += c.microseconds >= 0;
  return n;
}

namespace {

// A measurer lent to another search (the exhaustive one reuses the tuned search's inputs and
// reference, which are not what it is timed for).
class Borrowed : public tuning::Measurer {
 public:
  explicit Borrowed(tuning::Measurer& m) : m_(m) {}
  std::vector<tuning::Timing> time(const std::vector<const Kernel*>& k, int reps) override { return m_.time(k, reps); }
  std::string verify(const Kernel& k, std::string& how) override { return m_.verify(k, how); }

 private:
  tuning::Measurer& m_;
};

}  // namespace

std::optional<TuneResult> Searches::run(const Shape& s, TuneOptions o, const char* what,
                                      std::shared_ptr<tuning::Measurer>* keep, tuning::Measurer* borrow) const {
  o.cacheDir = args.tuneDir;
  o.reps = o.exhaustive ? args.exhaustiveReps : args.tuneReps;
  o.budgetSeconds = args.budget;
  o.maxCandidates = args.maxCandidates;
  ir::DiagnosticEngine diag;
  auto r = tuning::search(program, target, ops::deviceIdentity(ctx), dimsOf(s), o,
                          [&](const ir::Operation& p, ir::DiagnosticEngine& d) -> std::unique_ptr<tuning::Measurer> {
                            if (borrow) return std::make_unique<Borrowed>(*borrow);
                            auto m = tuning::gpuMeasurer(ctx, p, dimsOf(s), o.seed, d);
                            if (!keep || !m) return m;
                            *keep = std::move(m);
                            return std::make_unique<Borrowed>(**keep);
                          },
                          diag);
  if (!r) std::printf("[%s] %s search failed: %s", str(s).c_str(), what, diag.str().c_str());
  return r;
}

std::optional<std::vector<double>> compare(GemmCase& g, const std::vector<const Kernel*>& kernels,
                                           const std::vector<std::string>& labels, const Shape& s,
                                           const runtime::Context& ctx, int reps, nlohmann::json& row) {
  std::vector<std::function<void(cudaStream_t)>> launches;
  for (const auto& b : g.baselines()) launches.push_back(b.run);
  const std::vector<uint64_t> ptrs = g.kilnArgs();
  const auto dims = dimsOf(s);
  bool ok = true;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const Kernel* k = kernels[i];
    auto run = [&ctx, k, ptrs, dims](cudaStream_t st) { k->launch(ctx, st, ptrs, {}, dims); };
    GemmCase::Checked c = g.verify(run);
    row[labels[i]]["rel_err"] = c.relErr;
    if (!c.ok) {
      std::printf("[%s] %s is wrong: %s\n", str(s).c_str(), labels[i].c_str(), c.error.c_str());
      row[labels[i]]["error"] = c.error;
      ok = false;
    }
    launches.push_back(run);
  }
  if (!ok) return std::nullopt;
  return alternatingMediansMs(launches, 3, reps, nullptr);
}

std::optional<Kernel> buildOrSay(const ir::Module& program, const Target& t, const std::string& config) {
  ir::DiagnosticEngine diag;
  auto k = Kernel::build(program, t, config, diag);
  if (!k) std::printf("does not build: %s: %s", config.c_str(), diag.str().c_str());
  return k;
}

namespace {

// One bucket neighbour n of a shape tuned to `winner`: its own search, then what the tuning cache
// gives it (kiln::select: the bucketing rule, ops/bucket_reuse.h), the winner as it is (the rule
// before alternates) and its own winner, checked and timed in alternation with the baseline.
nlohmann::json bucketNeighbour(const Searches& search, const Shape& n, const std::string& winner, bool fp8,
                               cublasHandle_t blas, cublasLtHandle_t lt, BucketCosts& costs) {
  nlohmann::json row = {{"M", n.M}, {"N", n.N}, {"K", n.K}};
  TuneOptions o;
  o.useCache = false;
  o.record = false;
  auto own = search.run(n, o, "bucket neighbour");
  if (!own) {
    row["error"] = "its own search failed";
    return row;
  }
  const Selection rule = select(search.program, search.ctx, dimsOf(n), search.args.tuneDir);
  auto reused = buildOrSay(search.program, search.target, rule.config);
  auto asIs = buildOrSay(search.program, search.target, winner);
  auto tuned = buildOrSay(search.program, search.target, own->config);
  if (!reused || !asIs || !tuned) {
    row["error"] = "a winner does not build";
    return row;
  }
  row["search_s"] = own->seconds;
  GemmCase g(fp8, n, blas, lt);
  auto ms = compare(g, {&*reused, &*asIs, &*tuned}, {"reused", "winner", "own"}, n, search.ctx, search.args.reps, row);
  if (!ms) return row;
  const size_t k = g.baselines().size();
  row["baseline_ms"] = (*ms)[0];
  row["reused"]["config"] = rule.config;
  row["reused"]["why"] = rule.why;
  row["reused"]["ms"] = (*ms)[k];
  row["winner"]["config"] = winner;
  row["winner"]["ms"] = (*ms)[k + 1];
  row["own"]["config"] = own->config;
  row["own"]["ms"] = (*ms)[k + 2];
  row["reused_vs_own"] = (*ms)[k + 2] / (*ms)[k];
  row["winner_vs_own"] = (*ms)[k + 2] / (*ms)[k + 1];
  costs.rule.push_back((*ms)[k + 2] / (*ms)[k]);
  costs.winnerOnly.push_back((*ms)[k + 2] / (*ms)[k + 1]);
  std::printf("  bucket neighbour %s: the rule's %.4f ms%s, the winner's %.4f ms, its own search's %.4f ms: %.3f (winner "
              "as is %.3f)\n",
              str(n).c_str(), (*ms)[k], rule.config == winner ? " (the winner)" : "", (*ms)[k + 1], (*ms)[k + 2],
              (*ms)[k + 2] / (*ms)[k], (*ms)[k + 2] / (*ms)[k + 1]);
  return row;
}

}  // namespace

nlohmann::json bucketing(const Searches& search, const Shape& s, const std::string& winner, bool fp8,
                         cublasHandle_t blas, cublasLtHandle_t lt, uint64_t seed, BucketCosts& costs) {
  nlohmann::json out = nlohmann::json::array();
  for (const Shape& n : bucketNeighbours(s, search.args.bucketNeighbours, seed)) {
    try {
      out.push_back(bucketNeighbour(search, n, winner, fp8, blas, lt, costs));
    } catch (const std::exception& e) {  // one neighbour failing leaves the shape's other figures
      std::printf("  bucket neighbour %s failed: %s\n", str(n).c_str(), e.what());
      out.push_back({{"M", n.M}, {"N", n.N}, {"K", n.K}, {"error", e.what()}});
    }
  }
  return out;
}

}  // namespace kiln::bench
