#pragma once
// One GEMM shape set up for a final comparison on the GPU (kiln_tune_bench): the inputs on the
// device, the baselines that run the same product on them, the reference every Kiln kernel is
// checked against before its time is trusted, and Kiln's arguments in the program's order.
//  * BF16 (examples::gemmBf16: A [M][K], B [K][N] row-major, C bf16): random normal operands; the
//    baseline and the reference are cuBLAS's.
//  * FP8 (examples::fp8RowwiseGemm: A [M][K], B [N][K] e4m3, scale_a [M], scale_b [N] f32, C
//    bf16): random normal operands rounded to e4m3, scales in [0.5, 2]; the baselines are
//    cuBLASLt with tensorwise scales (its fastest FP8 GEMM, unit scales) and, where this cuBLASLt
//    runs it, with Kiln's outer-vector scales; the reference is the tensorwise product, its layout
//    first checked against fp64 dot products of sampled entries, scaled on the host in Kiln's order.
#include <cublasLt.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "bench/fp8_scaled.h"

namespace kiln::bench {

class GemmCase {
 public:
  using Launch = std::function<void(cudaStream_t)>;
  struct Baseline {
    std::string name;  // "cublas", "cublaslt", "cublaslt_rowwise"
    Launch run;
  };

  // Throws std::runtime_error when the inputs cannot be made or the baseline is wrong.
  GemmCase(bool fp8, const Shape& s, cublasHandle_t blas, cublasLtHandle_t lt);
  GemmCase(const GemmCase&) = delete;
  GemmCase& operator=(const GemmCase&) = delete;

  // The pointers Kiln's kernel takes, in the program's order (inputs and outputs as declared).
  std::vector<uint64_t> kilnArgs() const;
  // The baselines that run here, the first the one ratios are taken against.
  const std::vector<Baseline>& baselines() const { return baselines_; }
  // `launch` once into Kiln's output, poisoned first, against the reference: finite where it is
  // and a relative Frobenius error under 1e-2. A launch that throws fails with its message.
  struct Checked {
    bool ok = false;
    double relErr = 0;
    std::string error;
  };
  Checked verify(const Launch& launch);

 private:
  bool fp8_;
  Shape s_;
  std::unique_ptr<DeviceBuffer> a_, b_, scaleA_, scaleB_, c_, out_, unit_, ws_;
  std::unique_ptr<LtScaledGemm> tensorwise_, rowwise_;
  std::vector<uint16_t> ref_;
  std::vector<Baseline> baselines_;
};

}  // namespace kiln::bench
