// Fused residual add and RMSNorm (vLLM's fused_add_rms_norm): H = x + r rounded to BF16 (the new
// residual stream, written out), Y = rms_norm(H) * w; BF16 throughout, eps a scalar argument.
#include "examples/examples.h"
#include "kiln/program_builder.h"

namespace kiln::examples {

std::unique_ptr<ir::Module> addRmsNorm() {
  ProgramBuilder p("add_rms_norm");
  auto [M, N] = p.dims("M", "N");
  auto X = p.input("X", bf16, {M, N});
  auto R = p.input("R", bf16, {M, N});
  auto W = p.input("W", bf16, {N});
  auto H = p.output("H", bf16, {M, N});
  auto Y = p.output("Y", bf16, {M, N});
  auto eps = p.scalar("eps", f32);
  p.tile({M}, [&](Coord m) {
    Coord n = p.span(N);
    Tile h = cast(bf16, cast(f32, X(m, n)) + cast(f32, R(m, n)));
    H(m, n) = h;
    Tile hf = cast(f32, h);
    Y(m, n) = cast(bf16, hf * rsqrt(mean(hf * hf, N) + eps) * cast(f32, W(n)));
  });
  return p.finish();
}

}  // namespace kiln::examples
