#include "examples/examples.h"

namespace kiln::examples {

const std::vector<Example>& all() {
  static const std::vector<Example> list = {
      {"gemm_bf16", "C = A·B in BF16 with f32 accumulation", gemmBf16},
      {"gemm_bias_gelu", "C = gelu_tanh(A·B + bias) with a BF16 output", gemmBiasGelu},
      {"batched_gemm", "C[b] = A[b]·B[b] over a batch dim", batchedGemm},
      {"gemm_kmajor_b", "C = A·B with B stored K-major (transposed)", gemmKMajorB},
      {"gemm_f16", "C = A·B in FP16 with f32 accumulation", [] { return gemmF16(); }},
      {"fp8_rowwise_gemm", "FP8 e4m3 GEMM with per-row A and per-column B scales, BF16 out", fp8RowwiseGemm},
      {"grouped_gemm", "each row block of A multiplies the B its group id picks (MoE)",
       [] { return groupedGemm(); }},
  };
  return list;
}

const Example* find(const std::string& name) {
  for (const auto& e : all())
    if (e.name == name) return &e;
  return nullptr;
}

}  // namespace kiln::examples
