#pragma once
// Helpers shared by the interpreter tests: parsing a program, random and poisoned tensors, and an
// element-by-element comparison against a reference with a per-element bound.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kiln/interp/host_tensor.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/verifier.h"

namespace kiln::interp::testing {

// Parses and verifies `text`; on failure the test fails and the result is null.
inline std::unique_ptr<ir::Module> parseProgram(const std::string& text) {
  ir::DiagnosticEngine diag;
  auto m = ir::parseModule(text, diag);
  if (!m || !ir::verify(*m, diag)) {
    ADD_FAILURE() << "program does not parse and verify:\n" << diag.str();
    return nullptr;
  }
  return m;
}

inline const ir::Operation& programOf(const ir::Module& m) { return *m.body().front(); }

// normal(0, 1) * scale values, rounded to the dtype (storage order).
inline HostTensor randomTensor(ir::ScalarType t, std::vector<int64_t> shape, std::mt19937_64& rng, double scale = 1.0) {
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> v(static_cast<size_t>(numElements(shape)));
  for (double& x : v) x = normal(rng) * scale;
  return makeHostTensor(t, std::move(shape), v);
}

// Every element NaN, so that an element the program fails to write shows up in the comparison.
inline HostTensor poisonedTensor(ir::ScalarType t, std::vector<int64_t> shape) {
  std::vector<double> v(static_cast<size_t>(numElements(shape)), std::numeric_limits<double>::quiet_NaN());
  return makeHostTensor(t, std::move(shape), v);
}

// Expects |out[i] - ref[i]| <= tol[i] for every element (storage order), reporting the first few
// that are not; a NaN anywhere fails.
inline void expectWithin(const HostTensor& out, const std::vector<double>& ref, const std::vector<double>& tol,
                         const std::string& what) {
  std::vector<double> got = toDoubles(out);
  ASSERT_EQ(got.size(), ref.size()) << what;
  int reported = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double err = std::fabs(got[i] - ref[i]);
    if (!(err <= tol[i]) && reported++ < 5)
      ADD_FAILURE() << what << ": element " << i << " is " << got[i] << ", reference " << ref[i] << ", error " << err
                    << " > bound " << tol[i];
  }
}

}  // namespace kiln::interp::testing
