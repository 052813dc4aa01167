#pragma once
// The FP8 scaled GEMM in each scaling mode (docs/fp8-scaling.md), written once with the DSL, for
// the gemm_fp8 family, the benchmarks and the Python ops:
//   C[M, N] = out((A · B) scaled)          A fp8 [M, K] (K contiguous), B fp8 [K, N] stored K-major
// with the scales laid out as torch._scaled_mm and cuBLASLt take them:
//  * tensorwise: scale_a, scale_b f32 [1]; C = out(acc x f32(scale_a x scale_b)) after the K loop.
//  * rowwise:    scale_a f32 [M], scale_b f32 [N]; C = out(acc x scale_a[m] x scale_b[n]).
//  * block_1x128_128x128 (DeepSeek-V3: activations x weights): scale_a [M, K] in blocks of
//    [1, 128], stored [ceil(K/128)][M] (M contiguous: torch's (M, K/128) with strides (1, M),
//    cuBLASLt's VEC128_32F); scale_b [K, N] in blocks of [128, 128], stored [ceil(N/128)][ceil(K/128)]
//    (K blocks contiguous: cuBLASLt's BLK128x128_32F, DeepGEMM's sfb). Applied per 128-wide slice
//    of K inside the K loop (tile.dot_scaled).
//  * block_1x128_1x128 (weight gradients: both operands per 128 along K): scale_a as above,
//    scale_b [K, N] in blocks of [128, 1], stored [ceil(K/128)][N] (N contiguous: torch's
//    (N, K/128) with strides (1, N)).
// The arguments are (A, B, scale_a, scale_b, C) and the dims M, N, K.
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "kiln/ir/operation.h"

namespace kiln::ops {

enum class Fp8Scaling { Tensorwise, Rowwise, Block1x128x128x128, Block1x128x1x128 };

// "tensorwise", "rowwise", "block_1x128_128x128", "block_1x128_1x128".
std::string_view fp8ScalingName(Fp8Scaling s);
std::optional<Fp8Scaling> parseFp8Scaling(std::string_view name);

struct Fp8GemmSpec {
  Fp8Scaling scaling = Fp8Scaling::Rowwise;
  ir::ScalarType a = ir::ScalarType::F8E4M3;  // f8e4m3 or f8e5m2
  ir::ScalarType b = ir::ScalarType::F8E4M3;
  ir::ScalarType out = ir::ScalarType::BF16;  // bf16 or f32
};

// The program of `spec` (the header comment's C), named `name`.
std::unique_ptr<ir::Module> fp8GemmProgram(const Fp8GemmSpec& spec, const std::string& name);

}  // namespace kiln::ops
