// The interpreter against fp64 loops: plain BF16 GEMM, GEMM with K-major B, batched GEMM; and the
// independence of results from block sizes.
#include <gtest/gtest.h>

#include "gemm_programs.h"
#include "interp_test_util.h"
#include "reference_gemm.h"

namespace kiln::interp::testing {
namespace {

using ir::ScalarType;

struct Shape3 {
  int64_t M, N, K;
};
// Ragged shapes (not multiples of 16 or of the interpreter's 64-row blocks), M = 1, and one shape
// of whole blocks.
const Shape3 kShapes[] = {{1, 1, 1}, {1, 37, 19}, {17, 5, 33}, {64, 64, 64}, {100, 130, 70}, {129, 65, 200}};

std::string shapeName(const Shape3& s) {
  return "M=" + std::to_string(s.M) + " N=" + std::to_string(s.N) + " K=" + std::to_string(s.K);
}

TEST(InterpGemm, Bf16MatchesFp64Loops) {
  auto mod = parseProgram(kBf16Gemm);
  ASSERT_TRUE(mod);
  std::mt19937_64 rng(1);
  for (const Shape3& s : kShapes) {
    HostTensor A = randomTensor(ScalarType::BF16, {s.M, s.K}, rng);
    HostTensor B = randomTensor(ScalarType::BF16, {s.K, s.N}, rng);
    HostTensor C = poisonedTensor(ScalarType::BF16, {s.M, s.N});
    RunRequest req{{{"M", s.M}, {"N", s.N}, {"K", s.K}}, {{"A", &A}, {"B", &B}, {"C", &C}}, {}};
    ir::DiagnosticEngine diag;
    ASSERT_TRUE(run(programOf(*mod), req, diag)) << diag.str();
    GemmReference ref = referenceGemm(s.M, s.N, s.K, toDoubles(A), toDoubles(B));
    std::vector<double> tol(ref.value.size());
    for (size_t i = 0; i < tol.size(); ++i) tol[i] = bf16DotBound(ref.value[i], ref.absSum[i], s.K);
    expectWithin(C, ref.value, tol, shapeName(s));
  }
}

TEST(InterpGemm, KMajorBMatchesFp64Loops) {
  auto mod = parseProgram(kKMajorGemm);
  ASSERT_TRUE(mod);
  std::mt19937_64 rng(2);
  for (const Shape3& s : kShapes) {
    HostTensor A = randomTensor(ScalarType::BF16, {s.M, s.K}, rng);
    HostTensor B = randomTensor(ScalarType::BF16, {s.K, s.N}, rng);  // element (k, n) at k + n * K
    HostTensor C = poisonedTensor(ScalarType::BF16, {s.M, s.N});
    RunRequest req{{{"M", s.M}, {"N", s.N}, {"K", s.K}}, {{"A", &A}, {"B", &B}, {"C", &C}}, {}};
    ir::DiagnosticEngine diag;
    ASSERT_TRUE(run(programOf(*mod), req, diag)) << diag.str();
    std::vector<double> b(s.K * s.N);  // B row-major, read from its K-major storage
    for (int64_t k = 0; k < s.K; ++k)
      for (int64_t j = 0; j < s.N; ++j) b[k * s.N + j] = getElement(B, k + j * s.K);
    GemmReference ref = referenceGemm(s.M, s.N, s.K, toDoubles(A), b);
    std::vector<double> tol(ref.value.size());
    for (size_t i = 0; i < tol.size(); ++i) tol[i] = bf16DotBound(ref.value[i], ref.absSum[i], s.K);
    expectWithin(C, ref.value, tol, shapeName(s));
  }
}

TEST(InterpGemm, BatchedMatchesFp64Loops) {
  auto mod = parseProgram(kBatchedGemm);
  ASSERT_TRUE(mod);
  std::mt19937_64 rng(3);
  const int64_t L = 3;  // batch count
  for (const Shape3& s : kShapes) {
    HostTensor A = randomTensor(ScalarType::BF16, {L, s.M, s.K}, rng);
    HostTensor W = randomTensor(ScalarType::BF16, {L, s.K, s.N}, rng);
    HostTensor C = poisonedTensor(ScalarType::BF16, {L, s.M, s.N});
    RunRequest req{{{"B", L}, {"M", s.M}, {"N", s.N}, {"K", s.K}}, {{"A", &A}, {"W", &W}, {"C", &C}}, {}};
    ir::DiagnosticEngine diag;
    ASSERT_TRUE(run(programOf(*mod), req, diag)) << diag.str();
    std::vector<double> refAll, tolAll;
    for (int64_t b = 0; b < L; ++b) {
      std::vector<double> a = toDoubles(A), w = toDoubles(W);  // batch b is one contiguous slice of each
      GemmReference ref = referenceGemm(s.M, s.N, s.K, {a.begin() + b * s.M * s.K, a.begin() + (b + 1) * s.M * s.K},
                                        {w.begin() + b * s.K * s.N, w.begin() + (b + 1) * s.K * s.N});
      for (size_t i = 0; i < ref.value.size(); ++i) {
        refAll.push_back(ref.value[i]);
        tolAll.push_back(bf16DotBound(ref.value[i], ref.absSum[i], s.K));
      }
    }
    expectWithin(C, refAll, tolAll, shapeName(s));
  }
}

// The program's meaning does not depend on block sizes: any blocking gives the same bits, because
// the dot's order (k increasing from the incoming accumulator) does not depend on it either.
TEST(InterpGemm, ResultsDoNotDependOnBlockSizes) {
  auto mod = parseProgram(kBf16Gemm);
  ASSERT_TRUE(mod);
  std::mt19937_64 rng(4);
  const int64_t M = 21, N = 18, K = 27;
  HostTensor A = randomTensor(ScalarType::BF16, {M, K}, rng);
  HostTensor B = randomTensor(ScalarType::BF16, {K, N}, rng);
  auto runWith = [&](std::map<std::string, int64_t> blocks) {
    HostTensor C = poisonedTensor(ScalarType::BF16, {M, N});
    RunRequest req{{{"M", M}, {"N", N}, {"K", K}}, {{"A", &A}, {"B", &B}, {"C", &C}}, {}};
    ir::DiagnosticEngine diag;
    EXPECT_TRUE(run(programOf(*mod), req, diag, RunOptions{blocks})) << diag.str();
    return C.bytes;
  };
  std::vector<uint8_t> base = runWith({});
  EXPECT_EQ(runWith({{"M", 1}, {"N", 1}, {"K", 1}}), base);
  EXPECT_EQ(runWith({{"M", 7}, {"N", 16}, {"K", 5}}), base);
  EXPECT_EQ(runWith({{"M", 64}, {"N", 64}, {"K", 64}}), base);
}

// The reference mode of the interpreter agrees with the plain loops, unrounded.
TEST(InterpGemm, ReferenceModeIsTheUnroundedProduct) {
  auto mod = parseProgram(kBf16Gemm);
  ASSERT_TRUE(mod);
  std::mt19937_64 rng(5);
  const int64_t M = 19, N = 23, K = 41;
  HostTensor A = randomTensor(ScalarType::BF16, {M, K}, rng);
  HostTensor B = randomTensor(ScalarType::BF16, {K, N}, rng);
  HostTensor C = poisonedTensor(ScalarType::BF16, {M, N});
  std::vector<uint8_t> poison = C.bytes;
  RunRequest req{{{"M", M}, {"N", N}, {"K", K}}, {{"A", &A}, {"B", &B}, {"C", &C}}, {}};
  std::map<std::string, std::vector<double>> wide;
  ir::DiagnosticEngine diag;
  ASSERT_TRUE(runReference(programOf(*mod), req, wide, diag)) << diag.str();
  EXPECT_EQ(C.bytes, poison) << "runReference must leave the output tensors alone";
  GemmReference ref = referenceGemm(M, N, K, toDoubles(A), toDoubles(B));
  ASSERT_EQ(wide["C"].size(), ref.value.size());
  for (size_t i = 0; i < ref.value.size(); ++i)
    // Both sum exact products in double, in the same order; only the summation's rounding remains.
    EXPECT_NEAR(wide["C"][i], ref.value[i], 1e-12 * ref.absSum[i]) << i;
}

}  // namespace
}  // namespace kiln::interp::testing
