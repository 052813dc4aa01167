#include "interp/tile_sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <set>

namespace kiln::interp {

std::optional<TileSample> sampleTiles(const ir::Operation& program, const std::map<std::string, int64_t>& dims,
                                      size_t maxTiles, uint64_t seed) {
  const ir::Operation* loop = nullptr;
  int64_t align = 0;
  program.walk([&](const ir::Operation& op) {
    if (op.is("tile.for_tiles") && !loop) loop = &op;
    if (op.is("tile.group_index")) align = std::gcd(align, op.intAttr("align", 0));
  });
  if (!loop) return std::nullopt;
  auto extent = [&](const std::string& d) {
    auto it = dims.find(d);
    return it == dims.end() ? int64_t{1} : std::max<int64_t>(it->second, 1);
  };
  TileSample s;
  std::string batch = loop->stringAttr("batch");
  s.instances = batch.empty() ? 1 : extent(batch);
  for (const auto& d : loop->stringsAttr("dims")) {
    int64_t b = std::min<int64_t>(64, extent(d));
    if (align > 0) b = std::gcd(b, align);
    s.options.blockSizes[d] = b;
    s.instances *= (extent(d) + b - 1) / b;
  }
  if (static_cast<int64_t>(maxTiles) >= s.instances) return s;  // every instance: no filter
  std::set<int64_t> pick = {0, s.instances - 1};
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> any(0, s.instances - 1);
  while (pick.size() < maxTiles) pick.insert(any(rng));
  s.options.instances.assign(pick.begin(), pick.end());
  return s;
}

SampledErrors compareSampled(const std::vector<double>& got, const std::vector<double>& ref, double tol) {
  SampledErrors e;
  double refSq = 0, errSq = 0;
  for (size_t i = 0; i < ref.size(); ++i)
    if (!std::isnan(ref[i]) && std::isfinite(ref[i])) refSq += ref[i] * ref[i], ++e.checked;
  const double rms = e.checked ? std::sqrt(refSq / e.checked) : 0.0;
  e.checked = 0;
  for (size_t i = 0; i < ref.size() && i < got.size(); ++i) {
    if (std::isnan(ref[i])) continue;  // not in the sample
    ++e.checked;
    double d = std::fabs(got[i] - ref[i]);
    bool bad = std::isfinite(ref[i]) ? !(d <= tol * std::max(std::fabs(ref[i]), rms)) : got[i] != ref[i];
    if (bad && e.bad++ == 0) e.firstBad = i;
    if (std::isfinite(d)) errSq += d * d;
  }
  e.relFro = refSq > 0 ? std::sqrt(errSq / refSq) : std::sqrt(errSq);
  return e;
}

}  // namespace kiln::interp
