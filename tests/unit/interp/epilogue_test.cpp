// GEMM + bias + GELU (tanh) with a bf16 output, against fp64 loops.
#include <gtest/gtest.h>

#include <numbers>

#include "gemm_programs.h"
#include "interp_test_util.h"
#include "reference_gemm.h"

namespace kiln::interp::testing {
namespace {

using ir::ScalarType;

double geluTanh(double x) { return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x))); }

TEST(InterpEpilogue, BiasGeluMatchesFp64Loops) {
  auto mod = parseProgram(kGemmBiasGelu);
  ASSERT_TRUE(mod);
  std::mt19937_64 rng(11);
  struct {
    int64_t M, N, K;
  } shapes[] = {{1, 1, 1}, {1, 50, 17}, {33, 7, 65}, {70, 129, 48}};
  for (auto s : shapes) {
    HostTensor A = randomTensor(ScalarType::BF16, {s.M, s.K}, rng);
    HostTensor B = randomTensor(ScalarType::BF16, {s.K, s.N}, rng);
    HostTensor bias = randomTensor(ScalarType::F32, {s.N}, rng);
    HostTensor C = poisonedTensor(ScalarType::BF16, {s.M, s.N});
    RunRequest req{{{"M", s.M}, {"N", s.N}, {"K", s.K}}, {{"A", &A}, {"B", &B}, {"bias", &bias}, {"C", &C}}, {}};
    ir::DiagnosticEngine diag;
    ASSERT_TRUE(run(programOf(*mod), req, diag)) << diag.str();

    GemmReference dot = referenceGemm(s.M, s.N, s.K, toDoubles(A), toDoubles(B));
    std::vector<double> ref(dot.value.size()), tol(dot.value.size());
    for (int64_t i = 0; i < s.M; ++i)
      for (int64_t j = 0; j < s.N; ++j) {
        size_t e = i * s.N + j;
        double pre = dot.value[e] + getElement(bias, j);
        ref[e] = geluTanh(pre);
        // Error sources, each bounded: the f32 dot (f32SumBound), the f32 bias add (2^-24 |pre|),
        // both carried through gelu, whose slope is below 1.13 everywhere (so 1.2 covers it with the
        // (1 + 2^-8) factor of the final rounding); gelu computed in double then rounded to f32
        // (2^-24 |ref|); and the bf16 output rounding (2^-8 |ref|).
        double preErr = f32SumBound(s.K, dot.absSum[e]) + std::ldexp(std::fabs(pre), -24);
        tol[e] = std::ldexp(std::fabs(ref[e]), -8) + 1.2 * preErr + std::ldexp(std::fabs(ref[e]), -23);
      }
    expectWithin(C, ref, tol, "M=" + std::to_string(s.M) + " N=" + std::to_string(s.N) + " K=" + std::to_string(s.K));
  }
}

}  // namespace
}  // namespace kiln::interp::testing
