// FP8 scaled GEMM: A and B in e4m3, both K-major; C = (A·B) scaled by a per-row factor of A and a
// per-column factor of B (the "rowwise" scaling of torch._scaled_mm), BF16 out.
#include "examples/examples.h"
#include "kiln/program_builder.h"

namespace kiln::examples {

std::unique_ptr<ir::Module> fp8RowwiseGemm() {
  ProgramBuilder p("fp8_rowwise_gemm");
  auto [M, N, K] = p.dims("M", "N", "K");
  auto A = p.input("A", f8e4m3, {M, K});
  auto B = p.input("B", f8e4m3, {K, N}, /*order=*/{0, 1});
  auto scaleA = p.input("scale_a", f32, {M});
  auto scaleB = p.input("scale_b", f32, {N});
  auto C = p.output("C", bf16, {M, N});
  p.tile({M, N}, [&](Coord m, Coord n) {
    Tile acc = p.zeros(f32, {m, n});
    p.reduce(K, [&](Coord k) { acc = dot(A(m, k), B(k, n), acc); });
    C(m, n) = cast(bf16, scale(scale(acc, scaleA(m)), scaleB(n)));
  });
  return p.finish();
}

}  // namespace kiln::examples
