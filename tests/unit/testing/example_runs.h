#pragma once
// Running an example program on generated inputs and judging a compiled kernel's outputs against
// the tile-IR interpreter: shared by the GPU test (tests/gpu/ops/examples_gpu_test.cpp) and its CPU
// twin, which runs the same kernels in the kern simulator (tests/unit/examples/examples_sim_test.cpp),
// so the harness itself -- dims, argument order, tolerance -- is exercised without a GPU.
#include <cmath>
#include <map>
#include <sstream>
#include <string>

#include "kiln/interp/host_tensor.h"
#include "kiln/ir/operation.h"

namespace kiln::testing {

struct ExampleShape {
  int64_t m, n, k;
};

// The shapes both tests run: K % 16 == 0 (FP8 rows of 16 bytes) and N % 8 == 0 (row-major BF16
// B), inside every example's launch contract; ragged against the 128-wide tiles except N = 256,
// and a small M = 33 (one partial block).
inline constexpr ExampleShape kExampleShapes[] = {{200, 136, 96}, {64, 256, 160}, {33, 40, 48}};

// Values for every dim of an example: M, N, K from the shape, G (groups) = 4, anything else (a
// batch) = 3.
inline std::map<std::string, int64_t> exampleDims(const ir::Operation& program, const ExampleShape& s) {
  std::map<std::string, int64_t> dims;
  for (const auto& d : program.stringsAttr("dims"))
    dims[d] = d == "M" ? s.m : d == "N" ? s.n : d == "K" ? s.k : d == "G" ? 4 : 3;
  return dims;
}

// How far a compiled kernel may be from the interpreter, per output dtype. Both compute the same
// f32 operations and round once to the output type, but
//  (1) the tensor cores sum the K products in another order (the interpreter strictly in
//      sequence), which moves the f32 result by about K * 2^-24 * sum|a b| -- below 1e-4 of the
//      output's scale for the K used here;
//  (2) tanh in gelu_tanh is tanh.approx.f32 on the GPU (max relative error 2^-11, PTX ISA "tanh"),
//      an absolute error of at most |x| 2^-12 in 0.5 x (1 + tanh(...));
//  (3) after (1) and (2), the final rounding to the output type may land on the neighbouring
//      value: one unit in the last place, at most 2^(1-p) |ref| for p significant bits.
// So |got - ref| <= 2^(1-p) |ref| + 2^-10 max|ref|: the second term covers (1) and (2) with a margin
// of 4 (gelu's input is about as large as the output's largest magnitude). A wrong group, a
// missing scale or a dropped K tile is off by the output's own magnitude and fails by far.
inline double relativeUlp(ir::ScalarType t) {
  switch (t) {
    case ir::ScalarType::BF16: return std::ldexp(1.0, -7);    // 8 significant bits
    case ir::ScalarType::F16: return std::ldexp(1.0, -10);    // 11
    case ir::ScalarType::F8E4M3: return std::ldexp(1.0, -3);  // 4
    case ir::ScalarType::F8E5M2: return std::ldexp(1.0, -2);  // 3
    default: return std::ldexp(1.0, -23);                     // f32: 24
  }
}

// "" when `got` is within the tolerance above of `want` everywhere; otherwise the first few
// differences (a NaN is the poison of an element never written).
inline std::string compareToInterpreter(const std::string& name, const interp::HostTensor& want,
                                        const interp::HostTensor& got) {
  // Every stored element; a strided output's gaps are poisoned in both and skipped.
  int64_t n = interp::storageElements(want);
  double scale = 0;
  for (int64_t i = 0; i < n; ++i)
    if (!std::isnan(interp::getElement(want, i))) scale = std::max(scale, std::fabs(interp::getElement(want, i)));
  if (!std::isfinite(scale) || scale == 0) return "the interpreter's " + name + " is degenerate (all zero or not finite)";
  double ulp = relativeUlp(want.dtype), atol = std::ldexp(scale, -10);
  std::ostringstream out;
  int bad = 0;
  for (int64_t i = 0; i < n && bad < 8; ++i) {
    double r = interp::getElement(want, i), g = interp::getElement(got, i);
    if (std::isnan(r) && std::isnan(g)) continue;
    if (!(std::fabs(g - r) <= ulp * std::fabs(r) + atol)) {
      ++bad;
      out << name << " element " << i << " (storage order) = " << g << ", interpreter " << r
          << (std::isnan(g) ? " (poison: never written?)" : "") << "\n";
    }
  }
  return out.str();
}

}  // namespace kiln::testing
