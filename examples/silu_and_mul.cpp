// SiLU-and-mul, the SwiGLU gate of an LLM's MLP: Y = silu(gate) * up, elementwise over [M, N],
// BF16 in and out, f32 math.
#include "examples/examples.h"
#include "kiln/program_builder.h"

namespace kiln::examples {

std::unique_ptr<ir::Module> siluAndMul() {
  ProgramBuilder p("silu_and_mul");
  auto [M, N] = p.dims("M", "N");
  auto G = p.input("G", bf16, {M, N});
  auto U = p.input("U", bf16, {M, N});
  auto Y = p.output("Y", bf16, {M, N});
  p.tile({M, N}, [&](Coord m, Coord n) { Y(m, n) = cast(bf16, silu(cast(f32, G(m, n))) * cast(f32, U(m, n))); });
  return p.finish();
}

}  // namespace kiln::examples
