// cuBLASLt's FP8 GEMM (contract in lt_fp8.h).
#include "bench/lt_fp8.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "kiln/float_formats.h"

namespace kiln::bench {

LtFp8Gemm::LtFp8Gemm(cublasLtHandle_t h, const Shape& s, const void* scaleA, const void* scaleB, bool rowwise,
                     bool fastAccum, DeviceBuffer& ws)
    : h_(h), ws_(ws) {
  const int32_t outerVec = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  const int8_t fast = fastAccum ? 1 : 0;
  const uint64_t wsBytes = ws.bytes;
  int found = 0;
  ok_ = step(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F), "MatmulDescCreate") &&
        set(CUBLASLT_MATMUL_DESC_TRANSA, ta) && set(CUBLASLT_MATMUL_DESC_TRANSB, tb) &&
        set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, scaleB) && set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, scaleA) &&
        (!rowwise || (set(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, outerVec) &&
                      set(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, outerVec))) &&
        set(CUBLASLT_MATMUL_DESC_FAST_ACCUM, fast) &&
        step(cublasLtMatrixLayoutCreate(&la_, CUDA_R_8F_E4M3, s.K, s.N, s.K), "layout A") &&
        step(cublasLtMatrixLayoutCreate(&lb_, CUDA_R_8F_E4M3, s.K, s.M, s.K), "layout B") &&
        step(cublasLtMatrixLayoutCreate(&lc_, CUDA_R_16BF, s.N, s.M, s.N), "layout C") &&
        step(cublasLtMatmulPreferenceCreate(&pref_), "PreferenceCreate") &&
        step(cublasLtMatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsBytes,
                                                  sizeof wsBytes),
             "workspace preference") &&
        step(cublasLtMatmulAlgoGetHeuristic(h, desc_, la_, lb_, lc_, lc_, pref_, 1, &algo_, &found), "heuristic");
  if (ok_ && found == 0) ok_ = false, why_ = "the heuristic returned no algorithm";
}

LtFp8Gemm::~LtFp8Gemm() {
  if (pref_) cublasLtMatmulPreferenceDestroy(pref_);
  for (auto l : {la_, lb_, lc_})
    if (l) cublasLtMatrixLayoutDestroy(l);
  if (desc_) cublasLtMatmulDescDestroy(desc_);
}

void LtFp8Gemm::run(const void* A, const void* B, void* C, cudaStream_t st) const {
  const float alpha = 1.0f, beta = 0.0f;
  bench::check(cublasLtMatmul(h_, desc_, &alpha, B, la_, A, lb_, &beta, C, lc_, C, lc_, &algo_.algo, ws_.ptr,
                              ws_.bytes, st),
               "cublasLtMatmul");
}

bool LtFp8Gemm::step(cublasStatus_t st, const char* what) {
  if (st != CUBLAS_STATUS_SUCCESS) why_ = std::string(what) + ": " + cublasLtGetStatusString(st);
  return st == CUBLAS_STATUS_SUCCESS;
}

std::vector<float> randomScales(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(0.5f, 2.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

double ltSampleError(const Shape& s, const std::vector<uint8_t>& A, const std::vector<uint8_t>& B,
                     const std::vector<uint16_t>& P) {
  std::mt19937_64 rng(uint64_t(s.M) * 31 + uint64_t(s.N) * 7 + uint64_t(s.K));
  double worst = 0;
  for (int i = 0; i < 64; ++i) {
    size_t m = rng() % size_t(s.M), n = rng() % size_t(s.N);
    double dot = 0, terms = 0;
    for (size_t k = 0; k < size_t(s.K); ++k) {
      double t = double(fp8BitsToFloat(A[m * s.K + k], Fp8Format::E4M3)) *
                 double(fp8BitsToFloat(B[n * s.K + k], Fp8Format::E4M3));
      dot += t, terms += t * t;
    }
    double got = bf16BitsToFloat(P[m * s.N + n]);
    double err = std::abs(got - dot) / std::max({std::sqrt(terms), std::abs(dot), 1e-30});
    worst = std::max(worst, std::isfinite(got) ? err : INFINITY);
  }
  return worst;
}

}  // namespace kiln::bench
