// GEMM with a fused epilogue: C = gelu_tanh(A·B + bias), bias broadcast along rows, BF16 out.
#include "examples/examples.h"
#include "kiln/program_builder.h"

namespace kiln::examples {

std::unique_ptr<ir::Module> gemmBiasGelu() {
  ProgramBuilder p("gemm_bias_gelu");
  auto [M, N, K] = p.dims("M", "N", "K");
  auto A = p.input("A", bf16, {M, K});
  auto B = p.input("B", bf16, {K, N});
  auto bias = p.input("bias", f32, {N});
  auto C = p.output("C", bf16, {M, N});
  p.tile({M, N}, [&](Coord m, Coord n) {
    Tile acc = p.zeros(f32, {m, n});
    p.reduce(K, [&](Coord k) { acc = dot(A(m, k), B(k, n), acc); });
    C(m, n) = cast(bf16, gelu_tanh(acc + bias(n)));
  });
  return p.finish();
}

}  // namespace kiln::examples
