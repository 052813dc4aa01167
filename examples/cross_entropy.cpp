// Cross-entropy loss over a vocabulary: loss[m] = logsumexp(x[m, :]) - x[m, label[m]], logits BF16
// [M, V] (rows of 128K+ elements for LLM vocabularies), labels i32 [M], the loss in f32. A label
// outside [0, V) picks no logit (it counts as 0).
#include "examples/examples.h"
#include "kiln/program_builder.h"

namespace kiln::examples {

std::unique_ptr<ir::Module> crossEntropy() {
  ProgramBuilder p("cross_entropy");
  auto [M, V] = p.dims("M", "V");
  auto X = p.input("X", bf16, {M, V});
  auto L = p.input("labels", i32, {M});
  auto loss = p.output("loss", f32, {M});
  p.tile({M}, [&](Coord m) {
    Coord v = p.span(V);
    Tile x = cast(f32, X(m, v));
    Tile mx = max(x, V);
    Tile lse = mx + log(sum(exp(x - mx), V));
    Tile picked = sum(where(eq(broadcast(p.iota(v), {m, v}), L(m)), x, 0.0), V);
    loss(m) = lse - picked;
  });
  return p.finish();
}

}  // namespace kiln::examples
