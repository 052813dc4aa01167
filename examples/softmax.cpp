// Row softmax: Y = exp(x - max(x)) / sum(exp(x - max(x))) along each row of X, BF16 in and out,
// f32 math.
#include "examples/examples.h"
#include "kiln/program_builder.h"

namespace kiln::examples {

std::unique_ptr<ir::Module> softmax() {
  ProgramBuilder p("softmax");
  auto [M, N] = p.dims("M", "N");
  auto X = p.input("X", bf16, {M, N});
  auto Y = p.output("Y", bf16, {M, N});
  p.tile({M}, [&](Coord m) {
    Coord n = p.span(N);
    Tile x = cast(f32, X(m, n));
    Tile e = exp(x - max(x, N));
    Y(m, n) = cast(bf16, e / sum(e, N));
  });
  return p.finish();
}

}  // namespace kiln::examples
