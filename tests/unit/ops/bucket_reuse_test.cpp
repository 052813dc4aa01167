// The bucketing rule's choice at another shape of an entry's bucket (ops/bucket_reuse.h): the
// winner at the entry's own dims or without alternates; elsewhere the config whose measured time,
// carried over by the family's heuristic, is the least.
#include "ops/bucket_reuse.h"

#include <gtest/gtest.h>

#include "examples/examples.h"
#include "tests/unit/ops/tuning_samples.h"

namespace kiln::ops {
namespace {

const std::string kWide = "strategy=sm90_ws_persistent bm=128 bn=256 bk=64 stages=4 warps_m=2 epilogue=tma";
const std::string kNarrow = "strategy=sm90_ws_persistent bm=128 bn=128 bk=64 stages=6 warps_m=2 epilogue=tma";

TunedEntry entryAt(int64_t m, int64_t n, int64_t k) {
  TunedEntry e = sampleEntry(kWide);
  e.dims = {{"K", k}, {"M", m}, {"N", n}};
  e.microseconds = 20.0;
  e.alternates = {{kNarrow, 20.5}};
  return e;
}

// The heuristic's time (flops / preference) of `config` at m x n x k, on the H200's 132 SMs.
double heuristicUs(const std::string& config, int64_t m, int64_t n, int64_t k) {
  return 2.0 * double(m) * double(n) * double(k) /
         gemmPreference(Config::parse(config), m, n, k, false, false, Target::sm90a(), 132);
}

TEST(BucketReuse, TheWinnerIsKeptAtItsOwnDimsAndWithoutAlternates) {
  auto m = examples::gemmBf16();
  const ir::Operation& p = *m->body().front();
  TunedEntry e = entryAt(256, 1024, 4096);
  BucketChoice same = chooseInBucket(p, Target::sm90a(), 132, e, e.dims);
  EXPECT_EQ(same.config, kWide);
  EXPECT_EQ(same.predictedUs, 20.0);
  EXPECT_EQ(same.why, "");
  e.alternates.clear();
  BucketChoice alone = chooseInBucket(p, Target::sm90a(), 132, e, {{"K", 4096}, {"M", 256}, {"N", 1032}});
  EXPECT_EQ(alone.config, kWide);
  EXPECT_EQ(alone.why, "");
}

// 4096 x 1024 x 4096: 128 tiles of 128 x 256, one wave on 132 SMs; 256 of 128 x 128, two. At
// N = 1032 (the same bucket) the wide tiles need 160, two waves, the narrow ones 288, three: the
// heuristic's time grows 2.5x for the wide, 1.9x for the narrow, so the narrow alternate, measured
// slightly slower at 1024, is carried to the lesser time.
TEST(BucketReuse, AnAlternateWinsWhereTheHeuristicCarriesItsTimeLower) {
  auto m = examples::gemmBf16();
  const ir::Operation& p = *m->body().front();
  const TunedEntry e = entryAt(4096, 1024, 4096);
  BucketChoice c = chooseInBucket(p, Target::sm90a(), 132, e, {{"K", 4096}, {"M", 4096}, {"N", 1032}});
  EXPECT_EQ(c.config, kNarrow);
  EXPECT_DOUBLE_EQ(c.predictedUs,
                   20.5 * heuristicUs(kNarrow, 4096, 1032, 4096) / heuristicUs(kNarrow, 4096, 1024, 4096));
  EXPECT_LT(c.predictedUs, 20.0 * heuristicUs(kWide, 4096, 1032, 4096) / heuristicUs(kWide, 4096, 1024, 4096));
  EXPECT_EQ(c.why.rfind("of the 2 checked configs tuned at K=4096,M=4096,N=1024, the least time carried to these "
                        "dims by the heuristic: ",
                        0),
            0u)
      << c.why;
  // Back at 4096 x 1024 x 4096 the measured winner stands.
  EXPECT_EQ(chooseInBucket(p, Target::sm90a(), 132, e, e.dims).config, kWide);
}

// A program no GEMM family scores (no analysis) keeps the winner as measured.
TEST(BucketReuse, AProgramThatIsNotAGemmKeepsTheWinner) {
  auto softmax = examples::find("softmax")->build();
  const TunedEntry e = entryAt(256, 1024, 4096);
  BucketChoice c = chooseInBucket(*softmax->body().front(), Target::sm90a(), 132, e, {{"M", 300}, {"N", 1024}});
  EXPECT_EQ(c.config, kWide);
  EXPECT_EQ(c.why, "");
}

}  // namespace
}  // namespace kiln::ops
