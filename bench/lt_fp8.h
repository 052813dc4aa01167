#pragma once
// cuBLASLt's FP8 GEMM as the FP8 benchmarks' baseline (kiln_fp8_bench, kiln_tune_bench): e4m3 x
// e4m3, both operands K-major, bf16 out, tensorwise or outer-vector (rowwise) scales, and the
// checks that its layout is right before anything is compared with it.
#include <cublasLt.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench_support.h"

namespace kiln::bench {

// The workspace cuBLASLt may use.
inline constexpr size_t kLtWorkspaceBytes = 32u << 20;

// cuBLASLt's FP8 GEMM on Kiln's buffers. cuBLASLt is column-major and takes FP8 only as "TN", both
// operands K-major. Kiln's row-major C[M][N] is the column-major N x M matrix Cᵀ = Bᵀ·Aᵀ (ld N), so
// the call is m = N, n = M, k = K with cuBLASLt's A = Kiln's B (stored [N][K]: column-major K x N,
// ld K, transposed) and its B = Kiln's A (stored [M][K]: column-major K x M = Aᵀ, ld K, as is).
// Outer-vector scales follow cuBLASLt's A and B (cublasLt.h: its A's vector has m entries, its B's
// n), so its A scale is Kiln's scale_b and its B scale Kiln's scale_a.
class LtFp8Gemm {
 public:
  // scaleA / scaleB in Kiln's terms: M and N floats when rowwise, else one float each.
  LtFp8Gemm(cublasLtHandle_t h, const Shape& s, const void* scaleA, const void* scaleB, bool rowwise, bool fastAccum,
            DeviceBuffer& ws);
  ~LtFp8Gemm();
  LtFp8Gemm(const LtFp8Gemm&) = delete;
  LtFp8Gemm& operator=(const LtFp8Gemm&) = delete;
  bool ok() const { return ok_; }
  const std::string& why() const { return why_; }
  // C = A·B in Kiln's terms (A [M][K], B [N][K], C [M][N]), scaled.
  void run(const void* A, const void* B, void* C, cudaStream_t st) const;

 private:
  bool step(cublasStatus_t st, const char* what);
  template <class T>
  bool set(cublasLtMatmulDescAttributes_t attr, const T& v) {
    return step(cublasLtMatmulDescSetAttribute(desc_, attr, &v, sizeof v), "MatmulDescSetAttribute");
  }
  cublasLtHandle_t h_;
  DeviceBuffer& ws_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t la_ = nullptr, lb_ = nullptr, lc_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  cublasLtMatmulHeuristicResult_t algo_{};
  bool ok_ = false;
  std::string why_;
};

// Scales drawn uniformly from [0.5, 2] with a fixed seed.
std::vector<float> randomScales(size_t n, uint64_t seed);

// The largest error of 64 random entries of P = A·B (cuBLASLt, unit scales) against an fp64 dot
// product of the decoded operands, relative to max(‖a_m ∘ b_n‖, |exact|): the terms' size, since
// cancellation can make |exact| arbitrarily small. bf16 rounding stays under 2^-8 of it, an operand
// read transposed or from the wrong rows gives errors of order 1.
double ltSampleError(const Shape& s, const std::vector<uint8_t>& A, const std::vector<uint8_t>& B,
                     const std::vector<uint16_t>& P);

}  // namespace kiln::bench
