// RMSNorm (LLaMA): Y = x * rsqrt(mean(x^2) + eps) * w along each row, BF16 in and out, the weight
// w [N] in BF16, eps a scalar argument.
#include "examples/examples.h"
#include "kiln/program_builder.h"

namespace kiln::examples {

std::unique_ptr<ir::Module> rmsNorm() {
  ProgramBuilder p("rms_norm");
  auto [M, N] = p.dims("M", "N");
  auto X = p.input("X", bf16, {M, N});
  auto W = p.input("W", bf16, {N});
  auto Y = p.output("Y", bf16, {M, N});
  auto eps = p.scalar("eps", f32);
  p.tile({M}, [&](Coord m) {
    Coord n = p.span(N);
    Tile x = cast(f32, X(m, n));
    Tile inv = rsqrt(mean(x * x, N) + eps);
    Y(m, n) = cast(bf16, x * inv * cast(f32, W(n)));
  });
  return p.finish();
}

}  // namespace kiln::examples
