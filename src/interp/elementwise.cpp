// Elementwise float math (see elementwise.h). Each op is written once as a template over the
// arithmetic type: float for Exact mode (one IEEE single operation), double for Reference mode.
#include "interp/elementwise.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "interp/element_codec.h"
#include "interp/ieee_minmax.h"

namespace kiln::interp {
namespace {

using tile::OpKind;

template <typename T>
T binary(OpKind k, T a, T b) {
  switch (k) {
    case OpKind::Add: return a + b;
    case OpKind::Sub: return a - b;
    case OpKind::Mul: return a * b;
    case OpKind::Div: return a / b;
    case OpKind::Max: return ieeeMaximum(a, b);
    case OpKind::Min: return ieeeMinimum(a, b);
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
    case OpKind::Exp2: return std::exp2(x);
    case OpKind::Log: return std::log(x);
    case OpKind::Sqrt: return std::sqrt(x);
    case OpKind::Rsqrt: return 1.0 / std::sqrt(x);
    case OpKind::Tanh: return std::tanh(x);
    case OpKind::Erf: return std::erf(x);
    default: KILN_ICE("not a transcendental op");
  }
}

template <typename T>
T unary(OpKind k, T x) {
  switch (k) {
    case OpKind::Neg: return -x;
    case OpKind::Abs: return std::fabs(x);
    case OpKind::Relu: return ieeeMaximum(x, T(0));
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

std::vector<double> applyPow(std::span<const double> x, double exponent, ir::ScalarType elem, Arithmetic m) {
  std::vector<double> r(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    double v = std::pow(m == Arithmetic::Reference ? x[i] : double(float(x[i])), exponent);
    r[i] = m == Arithmetic::Reference ? v : narrowF32(static_cast<float>(v), elem);
  }
  return r;
}

std::vector<double> applyCmp(std::string_view pred, std::span<const double> a, std::span<const double> b) {
  size_t n = std::max(a.size(), b.size());
  KILN_ASSERT((a.size() == n || a.size() == 1) && (b.size() == n || b.size() == 1), "tile.cmp operands differ in size");
  std::vector<double> r(n);
  for (size_t i = 0; i < n; ++i) {
    double x = a[a.size() == 1 ? 0 : i], y = b[b.size() == 1 ? 0 : i];
    bool v = pred == "eq" ? x == y : pred == "ne" ? x != y : pred == "lt" ? x < y : pred == "le" ? x <= y
             : pred == "gt" ? x > y : x >= y;  // IEEE: false with a NaN operand, except ne
    r[i] = v ? 1.0 : 0.0;
  }
  return r;
}

std::vector<double> applySelect(std::span<const double> c, std::span<const double> a, std::span<const double> b) {
  size_t n = std::max({c.size(), a.size(), b.size()});
  auto at = [n](std::span<const double> v, size_t i) {
    KILN_ASSERT(v.size() == n || v.size() == 1, "tile.select operands differ in size");
    return v[v.size() == 1 ? 0 : i];
  };
  std::vector<double> r(n);
  for (size_t i = 0; i < n; ++i) r[i] = at(c, i) != 0 ? at(a, i) : at(b, i);
  return r;
}

}  // namespace kiln::interp
