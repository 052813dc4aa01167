// Elementwise float math (see elementwise.h). Each op is written once as a template over the
// arithmetic type: float for Exact mode (one IEEE single operation), double for Reference mode.
#include "interp/elementwise.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "interp/element_codec.h"

namespace kiln::interp {
namespace {

using tile::OpKind;

// IEEE 754-2019 maximum / minimum: NaN if either operand is NaN, and -0 < +0.
template <typename T>
T maximum(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;  // a quiet NaN, carrying an operand's payload
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
template <typename T>
T minimum(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

template <typename T>
T binary(OpKind k, T a, T b) {
  switch (k) {
    case OpKind::Add: return a + b;
    case OpKind::Sub: return a - b;
    case OpKind::Mul: return a * b;
    case OpKind::Div: return a / b;
    case OpKind::Max: return maximum(a, b);
    case OpKind::Min: return minimum(a, b);
    default: KILN_ICE("not an elementwise binary op");
  }
}

// The transcendental functions, in double (the header documents the formulas).
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double transcendental(OpKind k, double x) {
  constexpr double kSqrt2OverPi = 0.7978845608028654;  // sqrt(2 / pi)
  constexpr double kInvSqrt2 = 0.7071067811865476;     // 1 / sqrt(2)
  switch (k) {
    case OpKind::Exp: return std::exp(x);
    case OpKind::GeluTanh: return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
    case OpKind::GeluErf: return 0.5 * x * (1.0 + std::erf(x * kInvSqrt2));
    case OpKind::Silu: return x * sigmoid(x);
    case OpKind::Sigmoid: return sigmoid(x);
    default: KILN_ICE("not a transcendental op");
  }
}

template <typename T>
T unary(OpKind k, T x) {
  switch (k) {
    case OpKind::Neg: return -x;
    case OpKind::Abs: return std::fabs(x);
    case OpKind::Relu: return maximum(x, T(0));
    // Computed in double in both modes; Exact mode rounds the result to f32 (T = float).
    default: return static_cast<T>(transcendental(k, static_cast<double>(x)));
  }
}

}  // namespace

std::vector<double> applyUnary(OpKind k, std::span<const double> x, ir::ScalarType elem, Arithmetic m) {
  std::vector<double> r(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    r[i] = m == Arithmetic::Reference ? unary<double>(k, x[i]) : narrowF32(unary<float>(k, static_cast<float>(x[i])), elem);
  return r;
}

std::vector<double> applyBinary(OpKind k, std::span<const double> a, std::span<const double> b, ir::ScalarType elem,
                                Arithmetic m) {
  size_t n = std::max(a.size(), b.size());
  KILN_ASSERT((a.size() == n || a.size() == 1) && (b.size() == n || b.size() == 1), "elementwise operands differ in size");
  size_t sa = a.size() == 1 ? 0 : 1, sb = b.size() == 1 ? 0 : 1;
  std::vector<double> r(n);
  for (size_t i = 0; i < n; ++i) {
    double x = a[i * sa], y = b[i * sb];
    r[i] = m == Arithmetic::Reference
               ? binary<double>(k, x, y)
               : narrowF32(binary<float>(k, static_cast<float>(x), static_cast<float>(y)), elem);
  }
  return r;
}

std::vector<double> applyScale(std::span<const double> x, int64_t rows, int64_t cols, std::span<const double> s,
                               bool perRow, Arithmetic m) {
  KILN_ASSERT(static_cast<int64_t>(x.size()) == rows * cols, "tile.scale operand is not rows x cols");
  std::vector<double> r(x.size());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      double f = s.size() == 1 ? s[0] : perRow ? s[i] : s[j];
      double v = x[i * cols + j];
      r[i * cols + j] = m == Arithmetic::Reference ? v * f : static_cast<float>(v) * static_cast<float>(f);
    }
  return r;
}

std::vector<double> applyCast(std::span<const double> x, ir::ScalarType from, ir::ScalarType to, Arithmetic m) {
  std::vector<double> r(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    if (m == Arithmetic::Reference && ir::isFloat(to)) r[i] = x[i];
    // A float value is exactly an f32, so the f32 conversions round it once.
    else if (ir::isFloat(from) && ir::isFloat(to)) r[i] = narrowF32(static_cast<float>(x[i]), to);
    else r[i] = roundToType(x[i], to);
  }
  return r;
}

}  // namespace kiln::interp
