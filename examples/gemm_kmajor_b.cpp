// GEMM with B stored K-major: B is logically [K, N] but laid out as N rows of K contiguous values
// (order = {0, 1}: axis 0, K, is the fastest), as a transposed weight matrix usually is.
#include "examples/examples.h"
#include "kiln/program_builder.h"

namespace kiln::examples {

std::unique_ptr<ir::Module> gemmKMajorB() {
  ProgramBuilder p("gemm_kmajor_b");
  auto [M, N, K] = p.dims("M", "N", "K");
  auto A = p.input("A", bf16, {M, K});
  auto B = p.input("B", bf16, {K, N}, /*order=*/{0, 1});
  auto C = p.output("C", bf16, {M, N});
  p.tile({M, N}, [&](Coord m, Coord n) {
    Tile acc = p.zeros(f32, {m, n});
    p.reduce(K, [&](Coord k) { acc = dot(A(m, k), B(k, n), acc); });
    C(m, n) = cast(bf16, acc);
  });
  return p.finish();
}

}  // namespace kiln::examples
