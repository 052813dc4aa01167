// The tuning cache's key: the bucketing rule (quarter octaves, exactly), the key's hash over every
// field, the program's hash and the dims' buckets.
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <set>

#include "backend/sha256.h"
#include "examples/examples.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "ops/tuning_cache.h"
#include "tests/unit/ops/tuning_samples.h"

namespace kiln::ops {
namespace {

// ---- The bucketing rule -------------------------------------------------------------------------

TEST(TuningCacheBucket, BoundaryValues) {
  const std::pair<int64_t, int> cases[] = {
      {1, 0},     {2, 4},     {3, 6},     {4, 8},     {15, 15},   {16, 16},
      {4096, 48}, {4870, 48}, {4871, 49}, {5120, 49}, {INT64_MAX, 251}};
  for (const auto& [d, bucket] : cases) EXPECT_EQ(dimBucket(d), bucket) << "d = " << d;
  EXPECT_EQ(dimBucket(0), 0);
  EXPECT_EQ(dimBucket(-1), 0);
  EXPECT_EQ(dimBucket(INT64_MIN), 0);
}

TEST(TuningCacheBucket, NearbyShapesShareABucketAndFarOnesDoNot) {
  EXPECT_EQ(dimBucket(4096), dimBucket(4500));
  EXPECT_NE(dimBucket(4096), dimBucket(6144));
  EXPECT_EQ(dimBucket(6144), 50);
  auto b = bucketDims({{"M", 4096}, {"N", 4500}, {"K", 6144}});
  EXPECT_EQ(b, (std::map<std::string, int>{{"K", 50}, {"M", 48}, {"N", 48}}));
  EXPECT_TRUE(bucketDims({}).empty());
}

// The definition, checked independently: b = dimBucket(d) is the b with 2^b <= d^4 < 2^(b+1).
// d^4 fits 128 bits for d < 2^32.
TEST(TuningCacheBucket, IsFloorOfFourLog2Exactly) {
  using u128 = unsigned __int128;
  auto check = [](int64_t d) {
    u128 d4 = u128(d) * u128(d) * u128(d) * u128(d);
    int b = dimBucket(d);
    ASSERT_GE(b, 0);
    ASSERT_LT(b, 127);
    EXPECT_TRUE((u128(1) << b) <= d4 && d4 < (u128(1) << (b + 1))) << "d = " << d << ", bucket " << b;
  };
  for (int64_t d = 1; d <= 200000; ++d) check(d);
  for (int64_t d = (int64_t(1) << 31) - 100000; d < (int64_t(1) << 31) + 100000; d += 7) check(d);
  // Beyond 2^32, where a floating-point log2 rounds 2^k - 1 up to k: each octave starts a
  // multiple of 4, and the value just below it is in the last quarter of the octave before.
  for (int k = 3; k <= 62; ++k) {
    int64_t p = int64_t(1) << k;
    EXPECT_EQ(dimBucket(p), 4 * k) << "2^" << k;
    EXPECT_EQ(dimBucket(p - 1), 4 * k - 1) << "2^" << k << " - 1";
    EXPECT_EQ(dimBucket(p + 1), 4 * k) << "2^" << k << " + 1";
  }
  EXPECT_EQ(static_cast<int>(std::floor(4 * std::log2(double((int64_t(1) << 62) - 1)))), 248)
      << "the rounding this rule avoids (if this fails, the platform's log2 changed, not the rule)";
  EXPECT_EQ(dimBucket((int64_t(1) << 62) - 1), 247);
}

TEST(TuningCacheKey, DefaultsToThisKilnsVersion) {
  EXPECT_EQ(TuningKey{}.kilnVersion, std::string(KILN_VERSION));
  EXPECT_FALSE(TuningKey{}.kilnVersion.empty());
}

TEST(TuningCacheKey, HexCoversEveryField) {
  const TuningKey base = sampleKey();
  EXPECT_EQ(base.hex().size(), 64u);
  EXPECT_EQ(base.hex(), sampleKey().hex());
  std::vector<std::pair<const char*, TuningKey>> variants;
  auto vary = [&](const char* what, auto change) {
    TuningKey k = base;
    change(k);
    variants.emplace_back(what, k);
  };
  vary("programHash", [](TuningKey& k) { k.programHash[0] = 'b'; });
  vary("target", [](TuningKey& k) { k.target = "sm_80"; });
  vary("device.name", [](TuningKey& k) { k.device.name = "NVIDIA H100 80GB HBM3"; });
  vary("device.smCount", [](TuningKey& k) { k.device.smCount = 114; });
  vary("device.driverVersion", [](TuningKey& k) { k.device.driverVersion = 12090; });
  vary("kilnVersion", [](TuningKey& k) { k.kilnVersion = "0.0.0-other"; });
  vary("a bucket", [](TuningKey& k) { k.bucket["N"] = 49; });
  vary("a bucket's name", [](TuningKey& k) { k.bucket.erase("N"), k.bucket["n"] = 48; });
  vary("one more dim", [](TuningKey& k) { k.bucket["G"] = 3; });
  vary("one dim fewer", [](TuningKey& k) { k.bucket.erase("K"); });
  vary("space", [](TuningKey& k) { k.space = "gemv"; });
  // Length prefixes: moving a character from one field to the next changes the hash.
  vary("target/kilnVersion boundary", [](TuningKey& k) { k.target += k.kilnVersion[0], k.kilnVersion.erase(0, 1); });
  std::set<std::string> seen = {base.hex()};
  for (const auto& [what, k] : variants) {
    EXPECT_FALSE(k == base) << what;
    EXPECT_TRUE(seen.insert(k.hex()).second) << what << " did not change the hash";
  }
}

TEST(TuningCacheKey, ProgramHashIsTheHashOfThePrintedProgram) {
  auto softmax = examples::find("softmax")->build();
  auto again = examples::find("softmax")->build();
  auto gemm = examples::find("gemm_bf16")->build();
  const ir::Operation& p = *softmax->body().front();
  std::string h = programHash(p);
  EXPECT_EQ(h, backend::toHex(backend::Sha256::of(ir::toString(p))));
  EXPECT_EQ(h.size(), 64u);
  EXPECT_EQ(h, programHash(*again->body().front()));
  EXPECT_NE(h, programHash(*gemm->body().front()));
  // The same program parsed from its text, under another file name, hashes the same.
  ir::DiagnosticEngine diag;
  ir::ParseOptions opts;
  opts.filename = "elsewhere.kiln";
  auto parsed = ir::parseModule(ir::toString(*softmax), diag, opts);
  ASSERT_TRUE(parsed) << diag.str();
  EXPECT_EQ(programHash(*parsed->body().front()), h);
}

TEST(TuningCacheKey, TuningKeyBucketsTheDims) {
  auto gemm = examples::find("gemm_bf16")->build();
  const ir::Operation& p = *gemm->body().front();
  DeviceIdentity dev{"NVIDIA H200", 132, 12080};
  TuningKey a = tuningKey(p, "sm_90a", dev, {{"M", 4096}, {"N", 4096}, {"K", 4096}});
  TuningKey b = tuningKey(p, "sm_90a", dev, {{"M", 4500}, {"N", 4200}, {"K", 4870}});
  TuningKey c = tuningKey(p, "sm_90a", dev, {{"M", 4096}, {"N", 4096}, {"K", 6144}});
  EXPECT_EQ(a.programHash, programHash(p));
  EXPECT_EQ(a.target, "sm_90a");
  EXPECT_EQ(a.device, dev);
  EXPECT_EQ(a.kilnVersion, KILN_VERSION);
  EXPECT_EQ(a.bucket, (std::map<std::string, int>{{"K", 48}, {"M", 48}, {"N", 48}}));
  EXPECT_EQ(a.hex(), b.hex());
  EXPECT_NE(a.hex(), c.hex());
  EXPECT_EQ(a.space, "");
}

// M = 8 and M = 9 share a bucket, but on sm_80 the family picks gemv at 8 and the tensor cores at
// 9, and kiln tune searches gemv's space only at 8: their keys differ, so neither winner serves the
// other. On sm_90a the family picks the tensor cores from M = 3 (gemvPreferredRows): M = 8 has no
// gemv space there, M = 2 has. The key of a shape outside gemv's rows hashes as it did before the
// field (empty: not hashed).
TEST(TuningCacheKey, TheGemvSpaceHasItsOwnKeys) {
  auto gemm = examples::find("gemm_bf16")->build();
  const ir::Operation& p = *gemm->body().front();
  DeviceIdentity dev{"NVIDIA H200", 132, 12080};
  TuningKey m8 = tuningKey(p, "sm_80", dev, {{"M", 8}, {"N", 4096}, {"K", 4096}});
  TuningKey m9 = tuningKey(p, "sm_80", dev, {{"M", 9}, {"N", 4096}, {"K", 4096}});
  EXPECT_EQ(m8.bucket, m9.bucket);
  EXPECT_EQ(m8.space, "gemv");
  EXPECT_EQ(m9.space, "");
  EXPECT_NE(m8.hex(), m9.hex());
  TuningKey old = m9;
  old.space = "";
  EXPECT_EQ(m9.hex(), old.hex());
  EXPECT_EQ(tuningKey(p, "sm_90a", dev, {{"M", 1}, {"N", 4096}, {"K", 4096}}).space, "gemv");
  EXPECT_EQ(tuningKey(p, "sm_90a", dev, {{"M", 2}, {"N", 4096}, {"K", 4096}}).space, "gemv");
  EXPECT_EQ(tuningKey(p, "sm_90a", dev, {{"M", 8}, {"N", 4096}, {"K", 4096}}).space, "");
}

}  // namespace
}  // namespace kiln::ops
