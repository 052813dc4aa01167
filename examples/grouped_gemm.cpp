// Grouped (MoE) GEMM: rows of A are sorted by expert; each row block multiplies the expert matrix
// B[g] that its group id picks. Groups come in multiples of `align` rows (64 by default; pad them),
// so a block of up to `align` rows never straddles two experts.
#include "examples/examples.h"
#include "kiln/program_builder.h"

namespace kiln::examples {

std::unique_ptr<ir::Module> groupedGemm(int64_t align) {
  ProgramBuilder p("grouped_gemm");
  auto [G, M, N, K] = p.dims("G", "M", "N", "K");
  auto A = p.input("A", bf16, {M, K});
  auto B = p.input("B", bf16, {G, K, N});
  auto ids = p.input("group_ids", i32, {M});
  auto C = p.output("C", bf16, {M, N});
  p.tile({M, N}, [&](Coord m, Coord n) {
    Index g = p.group_index(ids, m, align);
    Tile acc = p.zeros(f32, {m, n});
    p.reduce(K, [&](Coord k) { acc = dot(A(m, k), B(g, k, n), acc); });
    C(m, n) = cast(bf16, acc);
  });
  return p.finish();
}

}  // namespace kiln::examples
