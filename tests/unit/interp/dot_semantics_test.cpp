// tile.dot's documented semantics: the f32 accumulation order, and IEEE special values.
#include <gtest/gtest.h>

#include "gemm_programs.h"
#include "interp_test_util.h"

namespace kiln::interp::testing {
namespace {

using ir::ScalarType;

// The BF16 GEMM with the f32 accumulator stored as it is, so that its bits can be checked.
const char* kF32OutGemm = R"(tile.program() {sym_name = "gemm_f32_out", dims = ["M", "N", "K"]} {
  %A = tile.input() {name = "A"} : tensor<bf16, [M, K]>
  %B = tile.input() {name = "B"} : tensor<bf16, [K, N]>
  %C = tile.output() {name = "C"} : tensor<f32, [M, N]>
  tile.for_tiles() {dims = ["M", "N"]} {
  ^bb0(%m: coord<[M]>, %n: coord<[N]>):
    %0 = tile.constant() {value = 0.0} : tile<f32, [M, N]>
    %acc = tile.reduce(%0) {dim = "K"} : tile<f32, [M, N]> {
    ^bb0(%k: coord<[K]>, %a: tile<f32, [M, N]>):
      %1 = tile.load(%A, %m, %k) : tile<bf16, [M, K]>
      %2 = tile.load(%B, %k, %n) : tile<bf16, [K, N]>
      %3 = tile.dot(%1, %2, %a) : tile<f32, [M, N]>
      tile.yield(%3)
    }
    tile.store(%C, %m, %n, %acc)
    tile.yield()
  }
}
)";

std::vector<double> runGemm(const char* text, const HostTensor& A0, const HostTensor& B0, ScalarType outType,
                            const RunOptions& opts = {}) {
  auto mod = parseProgram(text);
  if (!mod) return {};
  HostTensor A = A0, B = B0;
  int64_t M = A.shape[0], K = A.shape[1], N = B.shape[1];
  HostTensor C = poisonedTensor(outType, {M, N});
  RunRequest req{{{"M", M}, {"N", N}, {"K", K}}, {{"A", &A}, {"B", &B}, {"C", &C}}, {}};
  ir::DiagnosticEngine diag;
  EXPECT_TRUE(run(programOf(*mod), req, diag, opts)) << diag.str();
  return toDoubles(C);
}

// The accumulator's bits equal a plain f32 loop in the documented order: acc = 0; for k
// increasing: acc = acc + a[i][k] * b[k][j]. Whatever the blocking of K.
TEST(InterpDot, AccumulatesInF32WithKIncreasing) {
  std::mt19937_64 rng(41);
  const int64_t M = 9, N = 11, K = 300;
  HostTensor A = randomTensor(ScalarType::BF16, {M, K}, rng), B = randomTensor(ScalarType::BF16, {K, N}, rng);
  std::vector<double> expected(M * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (int64_t k = 0; k < K; ++k) {
        float p = static_cast<float>(getElement(A, i * K + k)) * static_cast<float>(getElement(B, k * N + j));
        acc = acc + p;
      }
      expected[i * N + j] = acc;
    }
  EXPECT_EQ(runGemm(kF32OutGemm, A, B, ScalarType::F32), expected);
  EXPECT_EQ(runGemm(kF32OutGemm, A, B, ScalarType::F32, RunOptions{{{"K", 7}}}), expected);
}

// 2^24 + 1 - 2^24 is 0 in that order in f32 (2^24 + 1 rounds to 2^24), 1 in any wider arithmetic
// or another order: this pins the order and the f32 accumulator.
TEST(InterpDot, OrderIsObservable) {
  const double big = 16777216.0;  // 2^24, exactly a bf16
  HostTensor A = makeHostTensor(ScalarType::BF16, {1, 3}, std::vector<double>{1, 1, 1});
  HostTensor B = makeHostTensor(ScalarType::BF16, {3, 2}, std::vector<double>{big, 1, 1, 1, -big, 1});
  EXPECT_EQ(runGemm(kF32OutGemm, A, B, ScalarType::F32), (std::vector<double>{0, 3}));
  EXPECT_EQ(runGemm(kF32OutGemm, A, B, ScalarType::F32, RunOptions{{{"K", 1}}}), (std::vector<double>{0, 3}));
}

// A NaN in A[1][2] makes all of row 1 NaN and nothing else; an inf in A[3][0] times a zero B[0][1]
// is NaN in C[3][1], while C[3][j] for other j is an infinity with the sign of B[0][j].
TEST(InterpDot, NanAndInfPropagate) {
  std::mt19937_64 rng(42);
  const int64_t M = 5, N = 4, K = 6;
  HostTensor A = randomTensor(ScalarType::BF16, {M, K}, rng), B = randomTensor(ScalarType::BF16, {K, N}, rng);
  setElement(A, 1 * K + 2, std::numeric_limits<double>::quiet_NaN());
  setElement(A, 3 * K + 0, std::numeric_limits<double>::infinity());
  setElement(B, 0 * N + 1, 0.0);
  for (int64_t j = 0; j < N; ++j)
    if (j != 1) ASSERT_NE(getElement(B, j), 0.0);
  std::vector<double> c = runGemm(kBf16Gemm, A, B, ScalarType::BF16);
  ASSERT_EQ(c.size(), static_cast<size_t>(M * N));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double v = c[i * N + j];
      if (i == 1 || (i == 3 && j == 1)) {
        EXPECT_TRUE(std::isnan(v)) << i << "," << j << " = " << v;
      } else if (i == 3) {
        EXPECT_EQ(v, std::copysign(INFINITY, getElement(B, j))) << i << "," << j;
      } else {
        EXPECT_TRUE(std::isfinite(v)) << i << "," << j << " = " << v;
      }
    }
}

}  // namespace
}  // namespace kiln::interp::testing
