#pragma once
// The independent fp64 reference of the GEMM tests: plain loops over the stored (already rounded)
// input values, and the error bounds that an f32-accumulated, bf16-rounded result must meet.
#include <cmath>
#include <cstdint>
#include <vector>

namespace kiln::interp::testing {

struct GemmReference {
  std::vector<double> value;   // sum_k a(i, k) * b(k, j), row-major [M, N]
  std::vector<double> absSum;  // sum_k |a(i, k) * b(k, j)|, which bounds the summation error
};

// a is row-major [M, K] and b row-major [K, N], both as the exact values of the stored inputs.
inline GemmReference referenceGemm(int64_t M, int64_t N, int64_t K, const std::vector<double>& a,
                                   const std::vector<double>& b) {
  GemmReference r{std::vector<double>(M * N, 0.0), std::vector<double>(M * N, 0.0)};
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < K; ++k) {
        double p = a[i * K + k] * b[k * N + j];  // exact: narrow operands have at most 11 significant bits
        r.value[i * N + j] += p;
        r.absSum[i * N + j] += std::fabs(p);
      }
  return r;
}

// gamma_K = K u / (1 - K u) with u = 2^-24: the relative bound of recursive f32 summation of K
// terms, whatever their order (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed.,
// section 4.2). |f32 sum - exact sum| <= gamma_K * sum of |terms|.
inline double f32SumBound(int64_t K, double absSum) {
  const double u = std::ldexp(1.0, -24);
  return K * u / (1.0 - K * u) * absSum;
}

// The bound for a bf16 output of an f32-accumulated dot: the accumulated f32 value s is within
// f32SumBound of the exact sum, and rounding s to bf16 (8 significant bits) moves it by at most
// 2^-8 |s| (half an ulp). So |out - ref| <= 2^-8 |ref| + (1 + 2^-8) f32SumBound.
inline double bf16DotBound(double ref, double absSum, int64_t K) {
  return std::ldexp(std::fabs(ref), -8) + (1.0 + std::ldexp(1.0, -8)) * f32SumBound(K, absSum);
}

}  // namespace kiln::interp::testing
