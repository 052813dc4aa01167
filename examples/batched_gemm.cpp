// Batched GEMM: C[b] = A[b] · B[b] for every b of the batch dim.
#include "examples/examples.h"
#include "kiln/program_builder.h"

namespace kiln::examples {

std::unique_ptr<ir::Module> batchedGemm() {
  ProgramBuilder p("batched_gemm");
  auto [Bt, M, N, K] = p.dims("B", "M", "N", "K");
  auto A = p.input("A", bf16, {Bt, M, K});
  auto B = p.input("B", bf16, {Bt, K, N});
  auto C = p.output("C", bf16, {Bt, M, N});
  p.tile_batched(Bt, {M, N}, [&](Index b, Coord m, Coord n) {
    Tile acc = p.zeros(f32, {m, n});
    p.reduce(K, [&](Coord k) { acc = dot(A(b, m, k), B(b, k, n), acc); });
    C(b, m, n) = cast(bf16, acc);
  });
  return p.finish();
}

}  // namespace kiln::examples
