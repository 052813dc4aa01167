// Row log-softmax: Y = x - max(x) - log(sum(exp(x - max(x)))) along each row, BF16 in and out.
#include "examples/examples.h"
#include "kiln/program_builder.h"

namespace kiln::examples {

std::unique_ptr<ir::Module> logSoftmax() {
  ProgramBuilder p("log_softmax");
  auto [M, N] = p.dims("M", "N");
  auto X = p.input("X", bf16, {M, N});
  auto Y = p.output("Y", bf16, {M, N});
  p.tile({M}, [&](Coord m) {
    Coord n = p.span(N);
    Tile x = cast(f32, X(m, n));
    Tile shifted = x - max(x, N);
    Y(m, n) = cast(bf16, shifted - log(sum(exp(shifted), N)));
  });
  return p.finish();
}

}  // namespace kiln::examples
