// The FP16 GEMM: C[M, N] = A[M, K] · B[K, N], f32 accumulation, FP16 out. The same tile program as
// gemm_bf16 in the other 16-bit float format (wgmma's .f16 operands on sm_90a, mma.sync's on
// sm_80); kMajorB lays B out as N rows of K values, as gemm_kmajor_b does.
#include "examples/examples.h"
#include "kiln/program_builder.h"

namespace kiln::examples {

std::unique_ptr<ir::Module> gemmF16(bool kMajorB) {
  ProgramBuilder p(kMajorB ? "gemm_f16_kmajor_b" : "gemm_f16");
  auto [M, N, K] = p.dims("M", "N", "K");
  auto A = p.input("A", f16, {M, K});
  auto B = kMajorB ? p.input("B", f16, {K, N}, /*order=*/{0, 1}) : p.input("B", f16, {K, N});
  auto C = p.output("C", f16, {M, N});
  p.tile({M, N}, [&](Coord m, Coord n) {
    Tile acc = p.zeros(f32, {m, n});
    p.reduce(K, [&](Coord k) { acc = dot(A(m, k), B(k, n), acc); });
    C(m, n) = cast(f16, acc);
  });
  return p.finish();
}

}  // namespace kiln::examples
