#include "examples/examples.h"

namespace kiln::examples {

const std::vector<Example>& all() {
  static const std::vector<Example> list = {
      {"gemm_bf16", "C = A·B in BF16 with f32 accumulation", gemmBf16},
      {"gemm_bias_gelu", "C = gelu_tanh(A·B + bias) with a BF16 output", gemmBiasGelu},
      {"gemm_bias_silu_residual", "C = silu(A·B + bias) + R (a residual read in the epilogue), BF16 out",
       gemmBiasSiluResidual},
      {"batched_gemm", "C[b] = A[b]·B[b] over a batch dim", batchedGemm},
      {"gemm_kmajor_b", "C = A·B with B stored K-major (transposed)", gemmKMajorB},
      {"gemm_f16", "C = A·B in FP16 with f32 accumulation", [] { return gemmF16(); }},
      {"fp8_rowwise_gemm", "FP8 e4m3 GEMM with per-row A and per-column B scales, BF16 out", fp8RowwiseGemm},
      {"grouped_gemm", "each row block of A multiplies the B its group id picks (MoE)",
       [] { return groupedGemm(); }},
      {"softmax", "Y = softmax(X) along each row, BF16", softmax, false},
      {"log_softmax", "Y = log_softmax(X) along each row, BF16", logSoftmax, false},
      {"rms_norm", "Y = X * rsqrt(mean(X^2) + eps) * W along each row, BF16", rmsNorm, false},
      {"layer_norm", "Y = (X - mean) * rsqrt(var + eps) * W + B along each row, BF16", layerNorm, false},
      {"add_rms_norm", "H = X + R; Y = rms_norm(H) * W (fused residual add), BF16", addRmsNorm, false},
      {"silu_and_mul", "Y = silu(G) * U elementwise (the SwiGLU gate), BF16", siluAndMul, false},
      {"cross_entropy", "loss = logsumexp(X) - X[label] per row, BF16 logits, f32 loss", crossEntropy, false},
      {"fp8_quant", "Q = e4m3(X / s), s = amax(X) / 448 per row (dynamic FP8 quantization)", fp8Quant, false},
  };
  return list;
}

const Example* find(const std::string& name) {
  for (const auto& e : all())
    if (e.name == name) return &e;
  return nullptr;
}

}  // namespace kiln::examples
