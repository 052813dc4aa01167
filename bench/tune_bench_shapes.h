#pragma once
// The shapes kiln_tune_bench measures and the figures it sums up, apart from the GPU (so that the
// unit tests check them): random shapes from a seed, shapes that share a tuning bucket with a given
// one, geometric means and medians.
#include <cstdint>
#include <vector>

#include "bench/bench_support.h"

namespace kiln::bench {

// `n` shapes with M, N, K drawn log-uniformly in [256, 16384] and rounded to multiples of 8
// (shared/BENCH.md's random shapes); the same `seed` gives the same shapes.
std::vector<Shape> randomShapes(int n, uint64_t seed);

// Up to `count` shapes other than `s` whose every dim lies in the same tuning bucket as s's
// (ops::dimBucket: the same quarter octave), multiples of 8 like s's, drawn from `seed`: the shapes
// that reuse s's tuned config without a search of their own. Fewer when the bucket holds fewer.
std::vector<Shape> bucketNeighbours(const Shape& s, int count, uint64_t seed);

// The geometric mean (0 for none) and the median (0 for none).
double geomean(const std::vector<double>& v);
double median(std::vector<double> v);

}  // namespace kiln::bench
