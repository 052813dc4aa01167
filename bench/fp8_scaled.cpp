// The FP8 benchmark's scaling modes (see fp8_scaled.h).
#include "bench/fp8_scaled.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "kiln/float_formats.h"

namespace kiln::bench {

namespace {
int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
}  // namespace

Fp8Scales randomFp8Scales(ops::Fp8Scaling mode, const Shape& s, uint64_t seed) {
  using F = ops::Fp8Scaling;
  Fp8Scales r{mode, s.M, s.N, s.K, ceilDiv(s.K, 128), ceilDiv(s.N, 128), {}, {}};
  size_t na = mode == F::Tensorwise ? 1 : mode == F::Rowwise ? size_t(s.M) : size_t(s.M * r.kb);
  size_t nb = mode == F::Tensorwise              ? 1
              : mode == F::Rowwise               ? size_t(s.N)
              : mode == F::Block1x128x128x128 ? size_t(r.kb * r.nb)
                                                 : size_t(r.kb * s.N);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(0.5f, 2.0f);
  r.a.resize(na);
  r.b.resize(nb);
  for (auto& x : r.a) x = dist(rng);
  for (auto& x : r.b) x = dist(rng);
  return r;
}

float Fp8Scales::aScale(int64_t m, int64_t k) const {
  switch (mode) {
    case ops::Fp8Scaling::Tensorwise: return a[0];
    case ops::Fp8Scaling::Rowwise: return a[size_t(m)];
    default: return a[size_t((k / 128) * M + m)];  // stored [kb][M]
  }
}

float Fp8Scales::bScale(int64_t k, int64_t n) const {
  switch (mode) {
    case ops::Fp8Scaling::Tensorwise: return b[0];
    case ops::Fp8Scaling::Rowwise: return b[size_t(n)];
    case ops::Fp8Scaling::Block1x128x128x128: return b[size_t((n / 128) * kb + k / 128)];  // stored [nb][kb]
    default: return b[size_t((k / 128) * N + n)];                                         // stored [kb][N]
  }
}

std::vector<float> padScaleB(const Fp8Scales& s) {
  const int64_t ld = (s.kb + 3) / 4 * 4;
  if (s.mode != ops::Fp8Scaling::Block1x128x128x128 || ld == s.kb) return s.b;
  std::vector<float> out(size_t(s.nb * ld), 1.0f);
  for (int64_t n = 0; n < s.nb; ++n)
    std::copy_n(s.b.begin() + n * s.kb, s.kb, out.begin() + n * ld);
  return out;
}

LtScaledGemm::LtScaledGemm(cublasLtHandle_t h, const Shape& s, ops::Fp8Scaling mode, const void* scaleA,
                           const void* scaleB, bool fastAccum, DeviceBuffer& ws, cudaDataType_t outType)
    : h_(h), ws_(ws) {
  using F = ops::Fp8Scaling;
  // Modes in cuBLASLt's operand names: its A is Kiln's B, its B Kiln's A.
  int32_t modeA = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, modeB = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
  if (mode == F::Rowwise) modeA = modeB = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
  if (mode == F::Block1x128x128x128)
    modeA = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F, modeB = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
  if (mode == F::Block1x128x1x128) modeA = modeB = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  const int8_t fast = fastAccum ? 1 : 0;
  const uint64_t wsBytes = ws.bytes;
  int found = 0;
  ok_ = step(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F), "MatmulDescCreate") &&
        set(CUBLASLT_MATMUL_DESC_TRANSA, ta) && set(CUBLASLT_MATMUL_DESC_TRANSB, tb) &&
        set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, scaleB) && set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, scaleA) &&
        (mode == F::Tensorwise ||
         (set(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, modeA) && set(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, modeB))) &&
        set(CUBLASLT_MATMUL_DESC_FAST_ACCUM, fast) &&
        step(cublasLtMatrixLayoutCreate(&la_, CUDA_R_8F_E4M3, s.K, s.N, s.K), "layout A") &&
        step(cublasLtMatrixLayoutCreate(&lb_, CUDA_R_8F_E4M3, s.K, s.M, s.K), "layout B") &&
        step(cublasLtMatrixLayoutCreate(&lc_, outType, s.N, s.M, s.N), "layout C") &&
        step(cublasLtMatmulPreferenceCreate(&pref_), "PreferenceCreate") &&
        step(cublasLtMatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsBytes,
                                                  sizeof wsBytes),
             "workspace preference") &&
        step(cublasLtMatmulAlgoGetHeuristic(h, desc_, la_, lb_, lc_, lc_, pref_, 1, &algo_, &found), "heuristic");
  if (ok_ && found == 0) ok_ = false, why_ = "the heuristic returned no algorithm";
}

LtScaledGemm::~LtScaledGemm() {
  if (pref_) cublasLtMatmulPreferenceDestroy(pref_);
  for (auto l : {la_, lb_, lc_})
    if (l) cublasLtMatrixLayoutDestroy(l);
  if (desc_) cublasLtMatmulDescDestroy(desc_);
}

bool LtScaledGemm::step(cublasStatus_t st, const char* what) {
  if (st != CUBLAS_STATUS_SUCCESS) why_ = std::string(what) + ": " + cublasLtGetStatusString(st);
  return st == CUBLAS_STATUS_SUCCESS;
}

void LtScaledGemm::run(const void* A, const void* B, void* C, cudaStream_t st) const {
  const float alpha = 1.0f, beta = 0.0f;
  check(cublasLtMatmul(h_, desc_, &alpha, B, la_, A, lb_, &beta, C, lc_, C, lc_, &algo_.algo, ws_.ptr, ws_.bytes, st),
        "cublasLtMatmul");
}

double sampledError(const Shape& s, const Fp8Scales& sc, const std::vector<uint8_t>& A, const std::vector<uint8_t>& B,
                    const std::vector<uint16_t>& C, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const bool perSlice = sc.mode == ops::Fp8Scaling::Block1x128x128x128 || sc.mode == ops::Fp8Scaling::Block1x128x1x128;
  double worst = 0;
  for (int i = 0; i < 64; ++i) {
    int64_t m = int64_t(rng() % uint64_t(s.M)), n = int64_t(rng() % uint64_t(s.N));
    double exact = 0, terms = 0;
    for (int64_t k0 = 0; k0 < s.K; k0 += perSlice ? 128 : s.K) {
      double slice = 0, sliceTerms = 0;
      for (int64_t k = k0; k < std::min<int64_t>(s.K, k0 + (perSlice ? 128 : s.K)); ++k) {
        double t = double(fp8BitsToFloat(A[size_t(m * s.K + k)], Fp8Format::E4M3)) *
                   double(fp8BitsToFloat(B[size_t(n * s.K + k)], Fp8Format::E4M3));
        slice += t, sliceTerms += t * t;
      }
      double scale = double(sc.aScale(m, k0)) * double(sc.bScale(k0, n));
      exact += slice * scale, terms += sliceTerms * scale * scale;
    }
    double got = bf16BitsToFloat(C[size_t(m * s.N + n)]);
    double err = std::abs(got - exact) / std::max({std::sqrt(terms), std::abs(exact), 1e-30});
    worst = std::max(worst, std::isfinite(got) ? err : INFINITY);
  }
  return worst;
}

}  // namespace kiln::bench
