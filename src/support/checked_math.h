#pragma once
// Checked size arithmetic: products and sums of user-given dims, extents and byte counts.
//
// A dim is user input, so any product of dims can exceed int64. Each helper returns nullopt instead
// of wrapping, so that the caller can say which dim made the size too large and by how much; a
// wrapped size would allocate a small buffer and then write past it.
#include <cstdint>
#include <optional>
#include <span>

namespace kiln::support {

inline std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// The product of `factors`, or nullopt when it does not fit in int64 (an empty list gives 1).
inline std::optional<int64_t> checkedProduct(std::span<const int64_t> factors) {
  int64_t r = 1;
  for (int64_t f : factors) {
    auto next = checkedMul(r, f);
    if (!next) return std::nullopt;
    r = *next;
  }
  return r;
}

// ceil(a / b) for a >= 0, b > 0, without the overflow of (a + b - 1) / b.
inline int64_t ceilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

}  // namespace kiln::support
