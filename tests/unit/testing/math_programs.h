#pragma once
// One elementwise program per tile math op, Y = op(X) over [M, N] in f32 (the ops that need a
// positive argument take |x| + 0.01), with the error the GPU's math may have against the
// interpreter's: what codegen/ptx/emit_math.cpp states for the unit (ex2.approx, lg2.approx,
// rsqrt.approx, tanh.approx, the erf polynomial; sqrt.rn exact) plus the rounding of the f32 ops
// around it. The kern simulator computes the exact functions, so it meets the same bounds.
// Shared by the simulator test (tests/unit/schedule/rowwise/rowwise_math_sim_test.cpp) and the
// GPU test (tests/gpu/ops/math_gpu_test.cpp).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kiln/program_builder.h"

namespace kiln::testing {

struct MathOp {
  const char* name;
  std::function<Tile(const Tile& x, const Tile& positive)> f;
  double rel, abs;  // |kernel - interpreter| <= rel |interpreter| + abs
};

inline const std::vector<MathOp>& mathOps() {
  static const std::vector<MathOp> ops = {
      {"exp", [](const Tile& x, const Tile&) { return exp(x); }, 1e-6, 0},
      {"exp2", [](const Tile& x, const Tile&) { return exp2(x); }, 5e-7, 0},
      {"log", [](const Tile&, const Tile& p) { return log(p); }, 1e-6, 3e-7},
      {"sqrt", [](const Tile&, const Tile& p) { return sqrt(p); }, 0, 0},
      {"rsqrt", [](const Tile&, const Tile& p) { return rsqrt(p); }, 5e-7, 0},
      {"tanh", [](const Tile& x, const Tile&) { return tanh(x); }, 1e-3, 1e-6},
      {"erf", [](const Tile& x, const Tile&) { return erf(x); }, 1e-6, 5e-7},
      {"sigmoid", [](const Tile& x, const Tile&) { return sigmoid(x); }, 2e-6, 0},
      {"gelu_erf", [](const Tile& x, const Tile&) { return gelu_erf(x); }, 2e-6, 1e-6},
      {"pow", [](const Tile&, const Tile& p) { return pow(p, 1.5); }, 3e-6, 0},
      {"cube", [](const Tile& x, const Tile&) { return pow(x, 3.0); }, 1e-6, 0},
  };
  return ops;
}

inline std::unique_ptr<ir::Module> mathProgram(const MathOp& op) {
  ProgramBuilder p(std::string("math_") + op.name);
  auto [M, N] = p.dims("M", "N");
  auto X = p.input("X", f32, {M, N});
  auto Y = p.output("Y", f32, {M, N});
  p.tile({M, N}, [&](Coord m, Coord n) {
    Tile x = X(m, n);
    Y(m, n) = op.f(x, abs(x) + 0.01);
  });
  return p.finish();
}

}  // namespace kiln::testing
