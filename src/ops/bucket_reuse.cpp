// The bucketing rule's choice at a shape of an entry's bucket (contract in bucket_reuse.h).
#include "ops/bucket_reuse.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "ops/gemm_bf16.h"
#include "ops/gemm_fp8.h"
#include "schedule/gemm_analysis.h"

namespace kiln::ops {

double gemmPreference(const Config& c, int64_t m, int64_t n, int64_t k, bool bKMajor, bool fp8, const Target& t,
                      int sms) {
  Target at = t;
  at.referenceSms = sms > 0 ? sms : t.referenceSms;
  if (fp8 && c.strategy == "sm90_ws_persistent") return Fp8GemmVariant{"", c}.preference(Fp8GemmProblem{m, n, k}, at);
  GemmProblem p{m, n, k};
  p.bKMajor = bKMajor;
  return GemmVariant{"", c}.preference(p, at);
}

namespace {

struct Gemm {
  std::string m, n, k, batch;
  bool bKMajor = false, fp8 = false;
};

// The heuristic's time for `config` at `dims` in its own units (flops / preference), or nullopt
// when it has none (a config that does not parse, a dim missing, no preference).
std::optional<double> heuristicTime(const Gemm& g, const Target& t, int sms, const std::string& config,
                                    const std::map<std::string, int64_t>& dims) {
  auto dim = [&](const std::string& name) {
    auto it = dims.find(name);
    return it == dims.end() ? int64_t{0} : it->second;
  };
  const int64_t m = dim(g.m) * (g.batch.empty() ? 1 : std::max<int64_t>(1, dim(g.batch))), n = dim(g.n), k = dim(g.k);
  ir::DiagnosticEngine quiet;
  auto c = Config::parse(config, quiet);
  if (!c || m <= 0 || n <= 0 || k <= 0) return std::nullopt;
  const double pref = gemmPreference(*c, m, n, k, g.bKMajor, g.fp8, t, sms);
  if (!(pref > 0)) return std::nullopt;
  return 2.0 * double(m) * double(n) * double(k) / pref;
}

std::string dimsText(const std::map<std::string, int64_t>& dims) {
  std::string s;
  for (const auto& [d, v] : dims) s += fmt::format("{}{}={}", s.empty() ? "" : ",", d, v);
  return s;
}

}  // namespace

BucketChoice chooseInBucket(const ir::Operation& program, const Target& t, int sms, const TunedEntry& e,
                            const std::map<std::string, int64_t>& dims) {
  BucketChoice kept{e.config, e.microseconds, ""};
  if (e.alternates.empty() || e.dims == dims) return kept;
  ir::DiagnosticEngine quiet;
  auto gp = analyzeGemm(program, "sm90_ws_persistent", quiet);
  if (!gp) return kept;
  const Gemm g{gp->dimM, gp->dimN, gp->dimK, gp->dimBatch, gp->bKMajor, gp->fp8};
  std::vector<TunedAlternate> all = {{e.config, e.microseconds}};
  all.insert(all.end(), e.alternates.begin(), e.alternates.end());
  std::optional<BucketChoice> best;
  for (const TunedAlternate& a : all) {
    auto then = heuristicTime(g, t, sms, a.config, e.dims), now = heuristicTime(g, t, sms, a.config, dims);
    if (!then || !now) continue;
    const double predicted = a.microseconds * *now / *then;
    if (!best || predicted < best->predictedUs) best = BucketChoice{a.config, predicted, ""};
  }
  if (!best) return kept;
  best->why = fmt::format("of the {} checked configs tuned at {}, the least time carried to these dims by the "
                          "heuristic: {:.1f} us",
                          all.size(), dimsText(e.dims), best->predictedUs);
  return *best;
}

}  // namespace kiln::ops
