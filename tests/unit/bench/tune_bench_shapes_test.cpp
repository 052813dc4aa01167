// kiln_tune_bench's shapes: the random ones are reproducible from their seed and within the issue's
// range; the bucket neighbours of a shape share its tuning bucket in every dim and differ from it.
#include "bench/tune_bench_shapes.h"

#include <gtest/gtest.h>

#include <set>

#include "ops/tuning_cache.h"

namespace kiln::bench {
namespace {

TEST(TuneBenchShapes, RandomShapesComeFromTheSeedInRangeInEights) {
  auto a = randomShapes(30, 7), b = randomShapes(30, 7), c = randomShapes(30, 8);
  ASSERT_EQ(a.size(), 30u);
  bool differ = false;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(std::tie(a[i].M, a[i].N, a[i].K), std::tie(b[i].M, b[i].N, b[i].K));
    differ = differ || a[i].M != c[i].M;
    for (int d : {a[i].M, a[i].N, a[i].K}) {
      EXPECT_GE(d, 256);
      EXPECT_LE(d, 16384);
      EXPECT_EQ(d % 8, 0);
    }
  }
  EXPECT_TRUE(differ);
}

TEST(TuneBenchShapes, BucketNeighboursShareEveryDimsBucket) {
  const Shape s{1200, 1424, 1608};
  auto n = bucketNeighbours(s, 3, 1);
  ASSERT_EQ(n.size(), 3u);
  std::set<std::tuple<int, int, int>> seen;
  for (const Shape& x : n) {
    EXPECT_EQ(ops::dimBucket(x.M), ops::dimBucket(s.M));
    EXPECT_EQ(ops::dimBucket(x.N), ops::dimBucket(s.N));
    EXPECT_EQ(ops::dimBucket(x.K), ops::dimBucket(s.K));
    EXPECT_EQ(x.M % 8, 0);
    EXPECT_FALSE(x.M == s.M && x.N == s.N && x.K == s.K);
    EXPECT_TRUE(seen.insert({x.M, x.N, x.K}).second);
  }
  // 8 and 9 are the only sizes of their bucket: at most one other shape there.
  EXPECT_EQ(bucketNeighbours({8, 8, 8}, 5, 1).size(), 0u);
  EXPECT_EQ(bucketNeighbours({9, 8, 8}, 5, 1).size(), 1u);
}

TEST(TuneBenchShapes, GeomeanAndMedian) {
  EXPECT_DOUBLE_EQ(geomean({}), 0);
  EXPECT_NEAR(geomean({1, 4}), 2, 1e-12);
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 2, 3}), 2.5);
}

}  // namespace
}  // namespace kiln::bench
