// FP8 (e4m3) GEMM with per-row scales on A and per-column scales on B, bf16 output, against fp64
// loops.
#include <gtest/gtest.h>

#include "gemm_programs.h"
#include "interp_test_util.h"
#include "reference_gemm.h"

namespace kiln::interp::testing {
namespace {

using ir::ScalarType;

HostTensor positiveScales(int64_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.25, 4.0);
  std::vector<double> v(n);
  for (double& x : v) x = u(rng);
  return makeHostTensor(ScalarType::F32, {n}, v);
}

TEST(InterpFp8, ScaledGemmMatchesFp64Loops) {
  auto mod = parseProgram(kFp8ScaledGemm);
  ASSERT_TRUE(mod);
  std::mt19937_64 rng(21);
  struct {
    int64_t M, N, K;
  } shapes[] = {{1, 1, 1}, {1, 31, 45}, {66, 9, 17}, {80, 100, 130}};
  for (auto s : shapes) {
    // Scaled by 8 so that the e4m3 inputs use its range, not just its subnormals.
    HostTensor A = randomTensor(ScalarType::F8E4M3, {s.M, s.K}, rng, 8.0);
    HostTensor B = randomTensor(ScalarType::F8E4M3, {s.K, s.N}, rng, 8.0);
    HostTensor sa = positiveScales(s.M, rng), sb = positiveScales(s.N, rng);
    HostTensor C = poisonedTensor(ScalarType::BF16, {s.M, s.N});
    RunRequest req{{{"M", s.M}, {"N", s.N}, {"K", s.K}},
                   {{"A", &A}, {"B", &B}, {"scale_a", &sa}, {"scale_b", &sb}, {"C", &C}},
                   {}};
    ir::DiagnosticEngine diag;
    ASSERT_TRUE(run(programOf(*mod), req, diag)) << diag.str();

    GemmReference dot = referenceGemm(s.M, s.N, s.K, toDoubles(A), toDoubles(B));
    std::vector<double> ref(dot.value.size()), tol(dot.value.size());
    for (int64_t i = 0; i < s.M; ++i)
      for (int64_t j = 0; j < s.N; ++j) {
        size_t e = i * s.N + j;
        double scale = getElement(sa, i) * getElement(sb, j);
        ref[e] = dot.value[e] * scale;
        // The f32 dot error scaled, two f32 multiplies (2^-24 each, relative), then the bf16
        // rounding (2^-8); 1.01 covers the products of the (1 + 2^-k) factors.
        tol[e] = std::ldexp(std::fabs(ref[e]), -8) +
                 1.01 * (scale * f32SumBound(s.K, dot.absSum[e]) + std::ldexp(std::fabs(ref[e]), -23));
      }
    expectWithin(C, ref, tol, "M=" + std::to_string(s.M) + " N=" + std::to_string(s.N) + " K=" + std::to_string(s.K));
  }
}

}  // namespace
}  // namespace kiln::interp::testing
