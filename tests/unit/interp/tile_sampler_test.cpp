// Sampled verification (src/interp/tile_sampler.h): the sampler's choice of tiles, the fp64
// reference of just those tiles against the full reference, and a corrupted element caught.
#include "interp/tile_sampler.h"

#include <gtest/gtest.h>

#include <cmath>

#include "examples/examples.h"
#include "interp/random_inputs.h"

namespace kiln::interp {
namespace {

const std::map<std::string, int64_t> kDims = {{"M", 256}, {"N", 192}, {"K", 64}};

TEST(TileSampler, PicksDistinctSortedTilesWithTheFirstAndLast) {
  auto m = examples::gemmBf16();
  auto s = sampleTiles(*m->body().front(), kDims, 5, 7);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->instances, 4 * 3);  // 64x64 blocks of 256x192
  EXPECT_EQ(s->options.blockSizes.at("M"), 64);
  ASSERT_EQ(s->options.instances.size(), 5u);
  EXPECT_EQ(s->options.instances.front(), 0);
  EXPECT_EQ(s->options.instances.back(), 11);
  EXPECT_TRUE(std::is_sorted(s->options.instances.begin(), s->options.instances.end()));
  EXPECT_EQ(std::adjacent_find(s->options.instances.begin(), s->options.instances.end()), s->options.instances.end());
  // No more tiles than asked for: every instance, no filter.
  EXPECT_TRUE(sampleTiles(*m->body().front(), kDims, 100, 7)->options.instances.empty());
}

// The reference of the sampled tiles, on outputs poisoned with NaN: (expected, sampled).
std::pair<std::vector<double>, std::vector<double>> references(const ir::Operation& program, const TileSample& s) {
  GeneratedArguments args = generateArguments(program, kDims, 3);
  ir::DiagnosticEngine diag;
  std::map<std::string, std::vector<double>> full, sampled;
  RunOptions all;
  all.blockSizes = s.options.blockSizes;
  EXPECT_TRUE(runReference(program, args.request, full, diag, all)) << diag.str();
  HostTensor& c = args.tensors.at("C");
  HostTensor poisoned = c;
  std::fill(poisoned.bytes.begin(), poisoned.bytes.end(), 0xff);  // NaN in bf16 (and f16, f32)
  args.request.tensors["C"] = &poisoned;
  EXPECT_TRUE(runReference(program, args.request, sampled, diag, s.options)) << diag.str();
  return {full.at("C"), sampled.at("C")};
}

TEST(TileSampler, SampledReferenceMatchesTheFullOneOnItsTiles) {
  auto m = examples::gemmBf16();
  const ir::Operation& program = *m->body().front();
  auto s = sampleTiles(program, kDims, 3, 11);
  ASSERT_TRUE(s);
  auto [full, sampled] = references(program, *s);
  size_t written = 0;
  for (size_t i = 0; i < full.size(); ++i)
    if (!std::isnan(sampled[i])) {
      ++written;
      EXPECT_EQ(sampled[i], full[i]) << i;
    }
  EXPECT_EQ(written, 3u * 64 * 64);
  SampledErrors e = compareSampled(full, sampled, 1e-2);
  EXPECT_EQ(e.checked, written);
  EXPECT_EQ(e.bad, 0u);
}

TEST(TileSampler, ACorruptedElementInASampledTileIsCaught) {
  auto m = examples::gemmBf16();
  const ir::Operation& program = *m->body().front();
  auto s = sampleTiles(program, kDims, 3, 11);
  ASSERT_TRUE(s);
  auto [full, sampled] = references(program, *s);
  std::vector<double> got = full;
  size_t victim = 0;
  while (std::isnan(sampled[victim])) ++victim;
  got[victim] += 0.5;  // one wrong element among 12288: invisible in the Frobenius norm at 1e-2
  SampledErrors e = compareSampled(got, sampled, 1e-2);
  EXPECT_EQ(e.bad, 1u);
  EXPECT_EQ(e.firstBad, victim);
  EXPECT_LT(e.relFro, 1e-2);
}

}  // namespace
}  // namespace kiln::interp
