// kiln_tune_bench's shapes and figures (contract in tune_bench_shapes.h).
#include "bench/tune_bench_shapes.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <tuple>

#include "ops/tuning_cache.h"

namespace kiln::bench {

std::vector<Shape> randomShapes(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> logSize(std::log(256.0), std::log(16384.0));
  auto draw = [&] { return std::max(256, int(std::lround(std::exp(logSize(rng)) / 8.0)) * 8); };
  std::vector<Shape> out;
  for (int i = 0; i < n; ++i) {
    int m = draw(), nn = draw(), k = draw();
    out.push_back({m, nn, k});
  }
  return out;
}

namespace {

// The multiples of 8 (of 1 when d is not one) in d's bucket.
std::vector<int> sameBucket(int d) {
  const int step = d % 8 == 0 ? 8 : 1, b = ops::dimBucket(d);
  int lo = d, hi = d;
  while (lo - step > 0 && ops::dimBucket(lo - step) == b) lo -= step;
  while (ops::dimBucket(hi + step) == b) hi += step;
  std::vector<int> out;
  for (int v = lo; v <= hi; v += step) out.push_back(v);
  return out;
}

}  // namespace

std::vector<Shape> bucketNeighbours(const Shape& s, int count, uint64_t seed) {
  const std::vector<int> ms = sameBucket(s.M), ns = sameBucket(s.N), ks = sameBucket(s.K);
  std::mt19937_64 rng(seed);
  std::set<std::tuple<int, int, int>> seen = {{s.M, s.N, s.K}};
  std::vector<Shape> out;
  const size_t all = ms.size() * ns.size() * ks.size();
  for (int tries = 0; int(out.size()) < count && seen.size() < all && tries < 100 * count; ++tries) {
    Shape n{ms[rng() % ms.size()], ns[rng() % ns.size()], ks[rng() % ks.size()]};
    if (seen.insert({n.M, n.N, n.K}).second) out.push_back(n);
  }
  return out;
}

double geomean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double s = 0;
  for (double x : v) s += std::log(x);
  return std::exp(s / double(v.size()));
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace kiln::bench
