// The GPU tests' output check (output_check.h) on the CPU: one wrong 16 x 16 fragment of a
// 1024 x 1024 output passes the Frobenius-norm check the GEMM tests use (8e-3) but fails the
// per-element bound; outputs that differ by rounding only pass both.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kiln/float_formats.h"
#include "tests/unit/testing/output_check.h"

namespace kiln::testing {
namespace {

constexpr int kRows = 1024, kCols = 1024;

std::vector<double> reference() {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> dist(0, 16);  // a K = 256 GEMM's typical magnitude
  std::vector<double> ref(size_t(kRows) * kCols);
  for (double& r : ref) r = dist(rng);
  return ref;
}

// The reference rounded to bf16, as a correct kernel's output is.
std::vector<uint16_t> roundedToBf16(const std::vector<double>& ref) {
  std::vector<uint16_t> out(ref.size());
  for (size_t i = 0; i < ref.size(); ++i) out[i] = floatToBf16Bits(float(ref[i]));
  return out;
}

TEST(OutputCheck, RoundingAlonePasses) {
  auto ref = reference();
  OutputCheck c = checkOutput(roundedToBf16(ref), ref, kGemmRel, kGemmAbsOfRms, bf16BitsToFloat);
  EXPECT_EQ(c.outOfBound, 0u) << c.str(ref.size());
  EXPECT_EQ(c.nonFinite, 0u);
  EXPECT_LT(c.relFrobenius, 8e-3);
}

TEST(OutputCheck, OneWrongFragmentFailsTheElementBoundThoughNotTheNorm) {
  auto ref = reference();
  auto out = roundedToBf16(ref);
  // One 16 x 16 fragment (256 of a million elements) lost a quarter of its value, as if it had
  // missed one of four K blocks.
  for (int i = 100; i < 116; ++i)
    for (int j = 200; j < 216; ++j) {
      size_t e = size_t(i) * kCols + j;
      out[e] = floatToBf16Bits(float(0.75 * ref[e]));
    }
  OutputCheck c = checkOutput(out, ref, kGemmRel, kGemmAbsOfRms, bf16BitsToFloat);
  EXPECT_LT(c.relFrobenius, 8e-3) << "the norm alone would pass this output";
  EXPECT_GT(c.outOfBound, 200u);
  EXPECT_LE(c.outOfBound, 256u);
  int row = int(c.worst / kCols), col = int(c.worst % kCols);
  EXPECT_TRUE(row >= 100 && row < 116 && col >= 200 && col < 216) << "the worst element is outside the fragment";
  EXPECT_NE(c.str(ref.size()), "");
}

TEST(OutputCheck, NonFiniteOutputsAreCountedApart) {
  std::vector<double> ref = {1, 2, 3, 4};
  std::vector<double> out = {1, NAN, 3, INFINITY};
  OutputCheck c = checkOutput(std::span<const double>(out), std::span<const double>(ref), kGemmRel, kGemmAbsOfRms);
  EXPECT_EQ(c.nonFinite, 2u);
  EXPECT_EQ(c.outOfBound, 0u);
}

TEST(OutputCheck, ANearZeroElementIsJudgedAgainstTheOutputsMagnitude) {
  // 1e-3 off an element of 1e-4 is 10x the element, but a rounding-sized error for an output
  // whose elements are around 1.
  std::vector<double> ref = {1, -1, 1e-4, 1}, out = {1, -1, 1.1e-3, 1};
  OutputCheck c = checkOutput(std::span<const double>(out), std::span<const double>(ref), kGemmRel, kGemmAbsOfRms);
  EXPECT_EQ(c.outOfBound, 0u) << c.str(ref.size());
}

}  // namespace
}  // namespace kiln::testing
