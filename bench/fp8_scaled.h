#pragma once
// The pieces of kiln_fp8_bench for each FP8 scaling mode (ops/fp8_programs.h): scales on the host
// in the layouts Kiln's programs take, cuBLASLt's FP8 GEMM in the same mode (its CUDA 12.9+ scale
// modes: SCALAR_32F, OUTER_VEC_32F, VEC128_32F, BLK128x128_32F), and an fp64 reference of sampled
// outputs with the mode's exact scale semantics.
#include <cublasLt.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "ops/fp8_programs.h"

namespace kiln::bench {

// Random positive scales (uniform in [0.5, 2)) of `mode` for an M x N x K problem, as Kiln's
// program takes them, and the scale each operand element is multiplied by.
struct Fp8Scales {
  ops::Fp8Scaling mode;
  int64_t M, N, K, kb, nb;  // kb = ceil(K / 128), nb = ceil(N / 128)
  std::vector<float> a, b;  // stored as fp8_programs.h lays them out
  float aScale(int64_t m, int64_t k) const;
  float bScale(int64_t k, int64_t n) const;
};
Fp8Scales randomFp8Scales(ops::Fp8Scaling mode, const Shape& s, uint64_t seed);

// cuBLASLt's FP8 GEMM C[M][N] (bf16) = A[M][K] · B stored [N][K], in `mode`, on Kiln's buffers.
// cuBLASLt is column-major, so the call is m = N, n = M, k = K with its A = Kiln's B (transposed)
// and its B = Kiln's A; its A's scales are Kiln's scale_b and its B's Kiln's scale_a. The layouts
// agree with Kiln's (torch._scaled_mm's) except BLK128x128_32F's leading dimension, a multiple of
// 4 blocks: `scaleB` must then be Kiln's scale_b copied with rows of roundUp(kb, 4) (padScaleB).
class LtScaledGemm {
 public:
  // outType: C's type, bf16 or (grouped_kgrouped_fp8.cpp's weight gradient) f32.
  LtScaledGemm(cublasLtHandle_t h, const Shape& s, ops::Fp8Scaling mode, const void* scaleA, const void* scaleB,
               bool fastAccum, DeviceBuffer& workspace, cudaDataType_t outType = CUDA_R_16BF);
  ~LtScaledGemm();
  LtScaledGemm(const LtScaledGemm&) = delete;
  LtScaledGemm& operator=(const LtScaledGemm&) = delete;
  bool ok() const { return ok_; }
  const std::string& why() const { return why_; }  // why not ok: the attribute or status refused
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

// Kiln's block_1x128_128x128 scale_b ([nb][kb]) with rows of roundUp(kb, 4): BLK128x128_32F's
// layout. The same vector for every other mode, and when kb is a multiple of 4.
std::vector<float> padScaleB(const Fp8Scales& s);

// The largest error of 64 sampled outputs of C (bf16, [M][N]) against an fp64 evaluation of the
// mode's semantics (each 128-slice of K's sums times its scales; tensorwise and rowwise: the
// whole sum times the scales), relative to the size of the scaled terms (sqrt of the sum of their
// squares, or |exact| when larger): bf16 rounding stays under 2^-8, a wrong layout gives order 1.
double sampledError(const Shape& s, const Fp8Scales& scales, const std::vector<uint8_t>& A,
                    const std::vector<uint8_t>& Bnk, const std::vector<uint16_t>& C, uint64_t seed);

}  // namespace kiln::bench
