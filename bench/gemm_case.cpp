// One GEMM shape for a final comparison (contract in gemm_case.h).
#include "bench/gemm_case.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kiln/float_formats.h"

namespace kiln::bench {
namespace {

// The workspace cuBLASLt may use (as kiln_fp8_bench's).
constexpr size_t kWorkspaceBytes = 32u << 20;

void upload(std::unique_ptr<DeviceBuffer>& buf, const void* data, size_t bytes, const char* what) {
  buf = std::make_unique<DeviceBuffer>(std::max<size_t>(bytes, 1));
  check(cudaMemcpy(buf->ptr, data, bytes, cudaMemcpyHostToDevice), what);
}

}  // namespace

GemmCase::GemmCase(bool fp8, const Shape& s, cublasHandle_t blas, cublasLtHandle_t lt) : fp8_(fp8), s_(s) {
  const size_t mn = size_t(s.M) * s.N;
  out_ = std::make_unique<DeviceBuffer>(mn * 2);
  c_ = std::make_unique<DeviceBuffer>(mn * 2);
  ref_.resize(mn);
  if (!fp8) {
    auto A = randomBf16(size_t(s.M) * s.K, 1), B = randomBf16(size_t(s.K) * s.N, 2);
    upload(a_, A.data(), A.size() * 2, "copy A");
    upload(b_, B.data(), B.size() * 2, "copy B");
    Launch run = [this, blas](cudaStream_t st) {
      cublasGemmBf16(blas, s_.M, s_.N, s_.K, a_->ptr, b_->ptr, c_->ptr, false, st);
    };
    run(nullptr);
    check(cudaMemcpy(ref_.data(), c_->ptr, c_->bytes, cudaMemcpyDeviceToHost), "copy the cuBLAS reference");
    baselines_.push_back({"cublas", run});
    return;
  }
  auto A = randomE4m3(size_t(s.M) * s.K, 1), B = randomE4m3(size_t(s.N) * s.K, 2);
  const Fp8Scales sc = randomFp8Scales(ops::Fp8Scaling::Rowwise, s, 3);
  const float one = 1.0f;
  upload(a_, A.data(), A.size(), "copy A");
  upload(b_, B.data(), B.size(), "copy B");
  upload(scaleA_, sc.a.data(), sc.a.size() * 4, "copy scale_a");
  upload(scaleB_, sc.b.data(), sc.b.size() * 4, "copy scale_b");
  upload(unit_, &one, sizeof one, "copy the unit scale");
  ws_ = std::make_unique<DeviceBuffer>(kWorkspaceBytes);
  tensorwise_ = std::make_unique<LtScaledGemm>(lt, s, ops::Fp8Scaling::Tensorwise, unit_->ptr, unit_->ptr, false, *ws_);
  if (!tensorwise_->ok()) throw std::runtime_error("cuBLASLt FP8 GEMM (tensorwise) unavailable: " + tensorwise_->why());
  Launch runLt = [this](cudaStream_t st) { tensorwise_->run(a_->ptr, b_->ptr, c_->ptr, st); };
  runLt(nullptr);
  check(cudaDeviceSynchronize(), "cuBLASLt");
  std::vector<uint16_t> P(mn);
  check(cudaMemcpy(P.data(), c_->ptr, c_->bytes, cudaMemcpyDeviceToHost), "copy P");
  const Fp8Scales unit{ops::Fp8Scaling::Tensorwise, s.M, s.N, s.K, (s.K + 127) / 128, (s.N + 127) / 128, {1.0f}, {1.0f}};
  const double err = sampledError(s, unit, A, B, P, 7);
  if (!(err <= 2e-2))
    throw std::runtime_error("cuBLASLt's A·B is wrong: sampled error " + std::to_string(err) +
                             " against fp64 (limit 2e-2); the call's layout is broken");
  // Kiln's epilogue order: (acc · scale_a) · scale_b in f32, rounded once to bf16.
  for (size_t m = 0; m < size_t(s.M); ++m)
    for (size_t n = 0; n < size_t(s.N); ++n)
      ref_[m * s.N + n] = floatToBf16Bits(bf16BitsToFloat(P[m * s.N + n]) * sc.a[m] * sc.b[n]);
  baselines_.push_back({"cublaslt", runLt});
  rowwise_ = std::make_unique<LtScaledGemm>(lt, s, ops::Fp8Scaling::Rowwise, scaleA_->ptr, scaleB_->ptr, false, *ws_);
  if (rowwise_->ok()) {
    Launch runRow = [this](cudaStream_t st) { rowwise_->run(a_->ptr, b_->ptr, out_->ptr, st); };
    if (verify(runRow).ok) baselines_.push_back({"cublaslt_rowwise", runRow});
  }
}

std::vector<uint64_t> GemmCase::kilnArgs() const {
  if (!fp8_) return {uint64_t(a_->ptr), uint64_t(b_->ptr), uint64_t(out_->ptr)};
  return {uint64_t(a_->ptr), uint64_t(b_->ptr), uint64_t(scaleA_->ptr), uint64_t(scaleB_->ptr), uint64_t(out_->ptr)};
}

GemmCase::Checked GemmCase::verify(const Launch& launch) {
  Checked c;
  std::vector<uint16_t> got(ref_.size());
  try {
    poisonBf16(*out_, nullptr);
    launch(nullptr);
    bench::check(cudaDeviceSynchronize(), "check run");
    bench::check(cudaMemcpy(got.data(), out_->ptr, out_->bytes, cudaMemcpyDeviceToHost), "copy output");
  } catch (const std::exception& e) {
    c.error = e.what();
    return c;
  }
  Comparison cmp = compareBf16(got, ref_);
  c.relErr = cmp.relFrobenius;
  c.ok = cmp.nonFinite == 0 && cmp.relFrobenius < 1e-2;
  if (!c.ok) c.error = std::to_string(cmp.nonFinite) + " non-finite, rel. error " + std::to_string(cmp.relFrobenius);
  return c;
}

}  // namespace kiln::bench
