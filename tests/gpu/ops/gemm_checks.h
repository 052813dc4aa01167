#pragma once
// Checks shared by the GEMM GPU tests: launch a compiled kernel of the batched GEMM or of the fused
// bias + GELU GEMM on seeded random inputs (outputs poisoned first) and compare with the fp64 host
// reference, by the Frobenius norm and element by element (output_check.h). Failures are reported through gtest, scoped by the caller's SCOPED_TRACE. And the
// name the parameterized suites give their instances.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <string>

#include "bench/bench_support.h"
#include "kiln/kernel.h"
#include "tests/gpu/ops/gemm_reference.h"
#include "tests/unit/testing/output_check.h"

namespace kiln::testing {

// C[b] = A[b] · B[b] for `batches` batches (the batched_gemm example's dims B, M, N, K).
inline void expectBatchedGemmMatches(const Kernel& kernel, const runtime::Context& ctx, int batches, int M, int N,
                                     int K, uint64_t seed) {
  size_t a = size_t(M) * K, b = size_t(K) * N, c = size_t(M) * N;
  auto A = bench::randomBf16(batches * a, seed), B = bench::randomBf16(batches * b, seed + 1);
  bench::DeviceBuffer dA(A.size() * 2), dB(B.size() * 2), dC(batches * c * 2);
  bench::check(cudaMemcpy(dA.ptr, A.data(), dA.bytes, cudaMemcpyHostToDevice), "copy A");
  bench::check(cudaMemcpy(dB.ptr, B.data(), dB.bytes, cudaMemcpyHostToDevice), "copy B");
  bench::poisonBf16(dC, nullptr);
  kernel.launch(ctx, nullptr, {uint64_t(dA.ptr), uint64_t(dB.ptr), uint64_t(dC.ptr)}, {},
                {{"B", batches}, {"M", M}, {"N", N}, {"K", K}});
  bench::check(cudaDeviceSynchronize(), "kernel");
  std::vector<uint16_t> C(batches * c);
  bench::check(cudaMemcpy(C.data(), dC.ptr, dC.bytes, cudaMemcpyDeviceToHost), "copy C");
  for (int bi = 0; bi < batches; ++bi) {
    std::vector<uint16_t> Ab(A.begin() + bi * a, A.begin() + (bi + 1) * a);
    std::vector<uint16_t> Bb(B.begin() + bi * b, B.begin() + (bi + 1) * b);
    std::vector<uint16_t> Cb(C.begin() + bi * c, C.begin() + (bi + 1) * c);
    OutputCheck check = checkOutput(Cb, gemmReference(Ab, Bb, M, N, K, false), kGemmRel, kGemmAbsOfRms, bf16BitsToFloat);
    EXPECT_LT(check.relFrobenius, 8e-3) << "batch " << bi;
    EXPECT_EQ(check.nonFinite, 0u) << "batch " << bi;
    EXPECT_EQ(check.outOfBound, 0u) << "batch " << bi << ": " << check.str(Cb.size());
  }
}

// C = gelu_tanh(A·B + bias[n]) (the gemm_bias_gelu example).
inline void expectBiasGeluMatches(const Kernel& kernel, const runtime::Context& ctx, int M, int N, int K,
                                  uint64_t seed) {
  auto A = bench::randomBf16(size_t(M) * K, seed), B = bench::randomBf16(size_t(K) * N, seed + 1);
  std::vector<float> bias(static_cast<size_t>(N));
  for (int n = 0; n < N; ++n) bias[size_t(n)] = 0.25f * float((n % 9) - 4);
  bench::DeviceBuffer dA(A.size() * 2), dB(B.size() * 2), dBias(bias.size() * 4), dC(size_t(M) * N * 2);
  bench::check(cudaMemcpy(dA.ptr, A.data(), dA.bytes, cudaMemcpyHostToDevice), "copy A");
  bench::check(cudaMemcpy(dB.ptr, B.data(), dB.bytes, cudaMemcpyHostToDevice), "copy B");
  bench::check(cudaMemcpy(dBias.ptr, bias.data(), dBias.bytes, cudaMemcpyHostToDevice), "copy bias");
  bench::poisonBf16(dC, nullptr);
  kernel.launch(ctx, nullptr, {uint64_t(dA.ptr), uint64_t(dB.ptr), uint64_t(dBias.ptr), uint64_t(dC.ptr)}, {},
                {{"M", M}, {"N", N}, {"K", K}});
  bench::check(cudaDeviceSynchronize(), "kernel");
  std::vector<uint16_t> C(size_t(M) * N);
  bench::check(cudaMemcpy(C.data(), dC.ptr, dC.bytes, cudaMemcpyDeviceToHost), "copy C");
  std::vector<double> ref = gemmReference(A, B, M, N, K, false);
  for (size_t i = 0; i < ref.size(); ++i) {
    double x = ref[i] + bias[i % size_t(N)];
    ref[i] = 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  }
  OutputCheck check = checkOutput(C, ref, kGemmRel, kGemmAbsOfRms, bf16BitsToFloat);
  EXPECT_LT(check.relFrobenius, 1e-2);
  EXPECT_EQ(check.nonFinite, 0u);
  EXPECT_EQ(check.outOfBound, 0u) << check.str(C.size());
}

// A gtest parameter name from a variant name or config line: every character that is not a letter
// or digit becomes '_'.
struct ParamName {
  template <typename T>
  std::string operator()(const ::testing::TestParamInfo<T>& info) const {
    std::string n = info.param;
    for (char& c : n)
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return n;
  }
};

}  // namespace kiln::testing
