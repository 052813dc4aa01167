#pragma once
// The host reference the GEMM GPU tests compare against: C = A·B in fp64 on BF16 inputs, and the
// relative Frobenius error of a BF16 output against it.
#include <cmath>
#include <cstdint>
#include <vector>

#include "kiln/float_formats.h"

namespace kiln::testing {

// A is row-major [M, K]; B is row-major [K, N], or K-major ([N, K]) when kMajor.
inline std::vector<double> gemmReference(const std::vector<uint16_t>& A, const std::vector<uint16_t>& B, int M, int N,
                                         int K, bool kMajor) {
  std::vector<double> C(size_t(M) * N, 0.0);
  for (int m = 0; m < M; ++m)
    for (int k = 0; k < K; ++k) {
      double a = bf16BitsToFloat(A[size_t(m) * K + k]);
      for (int n = 0; n < N; ++n) {
        double b = bf16BitsToFloat(kMajor ? B[size_t(n) * K + k] : B[size_t(k) * N + n]);
        C[size_t(m) * N + n] += a * b;
      }
    }
  return C;
}

// ||out - ref|| / ||ref|| over the finite outputs; the non-finite ones are counted in *nonFinite.
inline double relError(const std::vector<uint16_t>& out, const std::vector<double>& ref, size_t* nonFinite) {
  double num = 0, den = 0;
  *nonFinite = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    double x = bf16BitsToFloat(out[i]);
    if (!std::isfinite(x)) ++*nonFinite;
    else num += (x - ref[i]) * (x - ref[i]);
    den += ref[i] * ref[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

}  // namespace kiln::testing
