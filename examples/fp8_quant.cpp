// Per-row dynamic FP8 quantization: s[m] = max(amax(x[m, :]), 1e-12) / 448, Q = e4m3(x / s) (round
// to nearest even, saturating), BF16 in; the scales S [M] in f32 (dequantize as Q * S).
#include "examples/examples.h"
#include "kiln/program_builder.h"

namespace kiln::examples {

std::unique_ptr<ir::Module> fp8Quant() {
  ProgramBuilder p("fp8_quant");
  auto [M, N] = p.dims("M", "N");
  auto X = p.input("X", bf16, {M, N});
  auto Q = p.output("Q", f8e4m3, {M, N});
  auto S = p.output("S", f32, {M});
  p.tile({M}, [&](Coord m) {
    Coord n = p.span(N);
    Tile x = cast(f32, X(m, n));
    Tile s = max(max(abs(x), N), 1e-12) / 448.0;
    S(m) = s;
    Q(m, n) = cast(f8e4m3, x / s);
  });
  return p.finish();
}

}  // namespace kiln::examples
