#pragma once
// The host reference the GEMM GPU tests compare against: C = A·B in fp64 on BF16 (or, through
// `decode`, FP16) inputs, and the relative Frobenius error of an output in the same format against
// it; and the sm_90a tests' skip rule.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "kiln/float_formats.h"
#include "kiln/runtime/driver.h"

namespace kiln::testing {

// A is row-major [M, K]; B is row-major [K, N], or K-major ([N, K]) when kMajor. The inputs are
// widened once (B to row-major), and rows of C are shared out among the host's threads: the large
// stream-K shapes are billions of multiply-adds.
inline std::vector<double> gemmReference(const std::vector<uint16_t>& A, const std::vector<uint16_t>& B, int M, int N,
                                         int K, bool kMajor, float (*decode)(uint16_t) = bf16BitsToFloat) {
  std::vector<double> a(A.size()), b(size_t(K) * N);
  for (size_t i = 0; i < A.size(); ++i) a[i] = decode(A[i]);
  for (int k = 0; k < K; ++k)
    for (int n = 0; n < N; ++n) b[size_t(k) * N + n] = decode(kMajor ? B[size_t(n) * K + k] : B[size_t(k) * N + n]);
  std::vector<double> C(size_t(M) * N, 0.0);
  auto rows = [&](int first, int step) {
    for (int m = first; m < M; m += step)
      for (int k = 0; k < K; ++k) {
        double x = a[size_t(m) * K + k];
        const double* brow = b.data() + size_t(k) * N;
        double* crow = C.data() + size_t(m) * N;
        for (int n = 0; n < N; ++n) crow[n] += x * brow[n];
      }
  };
  int threads = int(std::max(1u, std::min(32u, std::thread::hardware_concurrency())));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(rows, t, threads);
  for (auto& t : pool) t.join();
  return C;
}

// ||out - ref|| / ||ref|| over the finite outputs; the non-finite ones are counted in *nonFinite.
inline double relError(const std::vector<uint16_t>& out, const std::vector<double>& ref, size_t* nonFinite,
                       float (*decode)(uint16_t) = bf16BitsToFloat) {
  double num = 0, den = 0;
  *nonFinite = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    double x = decode(out[i]);
    if (!std::isfinite(x)) ++*nonFinite;
    else num += (x - ref[i]) * (x - ref[i]);
    den += ref[i] * ref[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

// True when there is a GPU of compute capability 9.0 (sm_90a code runs on nothing else); else
// false, with why the sm_90a tests skip.
inline bool needHopper(std::string* why) {
  runtime::Driver* drv = runtime::Driver::get(why);
  if (!drv) return false;
  runtime::Context ctx = runtime::Context::primary(*drv);
  if (ctx.properties().computeCapability() != 90) {
    *why = "sm_90a kernels need a compute capability 9.0 GPU; this is " + ctx.properties().str();
    return false;
  }
  return true;
}

}  // namespace kiln::testing
