// LayerNorm with weight and bias: Y = (x - mean(x)) * rsqrt(var(x) + eps) * w + b along each row,
// var the mean of (x - mean(x))^2; BF16 in and out, w and b [N] in BF16, eps a scalar argument.
#include "examples/examples.h"
#include "kiln/program_builder.h"

namespace kiln::examples {

std::unique_ptr<ir::Module> layerNorm() {
  ProgramBuilder p("layer_norm");
  auto [M, N] = p.dims("M", "N");
  auto X = p.input("X", bf16, {M, N});
  auto W = p.input("W", bf16, {N});
  auto B = p.input("B", bf16, {N});
  auto Y = p.output("Y", bf16, {M, N});
  auto eps = p.scalar("eps", f32);
  p.tile({M}, [&](Coord m) {
    Coord n = p.span(N);
    Tile x = cast(f32, X(m, n));
    Tile centered = x - mean(x, N);
    Tile inv = rsqrt(mean(centered * centered, N) + eps);
    Y(m, n) = cast(bf16, centered * inv * cast(f32, W(n)) + cast(f32, B(n)));
  });
  return p.finish();
}

}  // namespace kiln::examples
