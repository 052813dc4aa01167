// GEMM with a residual epilogue, as in a transformer's MLP block: C = silu(A·B + bias) + R, bias
// broadcast along rows, the residual R [M, N] read in the epilogue, BF16 out, f32 math.
#include "examples/examples.h"
#include "kiln/program_builder.h"

namespace kiln::examples {

std::unique_ptr<ir::Module> gemmBiasSiluResidual() {
  ProgramBuilder p("gemm_bias_silu_residual");
  auto [M, N, K] = p.dims("M", "N", "K");
  auto A = p.input("A", bf16, {M, K});
  auto B = p.input("B", bf16, {K, N});
  auto bias = p.input("bias", f32, {N});
  auto R = p.input("R", bf16, {M, N});
  auto C = p.output("C", bf16, {M, N});
  p.tile({M, N}, [&](Coord m, Coord n) {
    Tile acc = p.zeros(f32, {m, n});
    p.reduce(K, [&](Coord k) { acc = dot(A(m, k), B(k, n), acc); });
    C(m, n) = cast(bf16, silu(acc + bias(n)) + cast(f32, R(m, n)));
  });
  return p.finish();
}

}  // namespace kiln::examples
