#pragma once
// IEEE 754-2019 maximum / minimum, the semantics of tile.max, tile.min and the max / min
// reductions: NaN if either operand is NaN, and -0 < +0. Templates over the arithmetic type (float
// in Exact mode, double in Reference mode).
#include <cmath>

namespace kiln::interp {

template <typename T>
T ieeeMaximum(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;  // a quiet NaN, carrying an operand's payload
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

template <typename T>
T ieeeMinimum(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

}  // namespace kiln::interp
