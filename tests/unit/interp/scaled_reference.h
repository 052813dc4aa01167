#pragma once
// The interpreter's documented numerics of tile.dot and tile.dot_scaled (kiln/interp/interpreter.h)
// written again, independently, in float: a test that compares with these bit for bit checks the
// contract, not the implementation. Also: block-scale tensors laid out from logical values.
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "kiln/interp/host_tensor.h"

namespace kiln::interp::testing {

// Row-major [rows, cols] matrices of exactly representable values.
struct Mat {
  int64_t rows = 0, cols = 0;
  std::vector<double> v;
  double at(int64_t i, int64_t j) const { return v[static_cast<size_t>(i * cols + j)]; }
};

// acc + sum over slices of `g` along K (from k0 = 0) of (f32 sum of the slice's products) times
// f32(sa(i, k0) * sb(k0, j)), added by a fused multiply-add. g >= K gives one slice.
inline std::vector<float> scaledDotF32(const Mat& a, const Mat& sa, const Mat& b, const Mat& sb, int64_t g) {
  std::vector<float> c(static_cast<size_t>(a.rows * b.cols), 0.0f);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < b.cols; ++j) {
      float acc = 0.0f;
      for (int64_t k0 = 0; k0 < a.cols; k0 += g) {
        float p = 0.0f;
        for (int64_t k = k0; k < std::min(a.cols, k0 + g); ++k) {
          volatile float prod = float(a.at(i, k)) * float(b.at(k, j));  // volatile: no contraction
          p = p + prod;
        }
        volatile float s = float(sa.at(i, k0)) * float(sb.at(k0, j));
        acc = std::fma(p, s, acc);
      }
      c[static_cast<size_t>(i * b.cols + j)] = acc;
    }
  return c;
}

// A tensor of `stored` extents laid out in `order` (fastest first; empty: row-major) whose element
// at stored index (s0, s1, ...) is value({s0, s1, ...}).
inline HostTensor storedTensor(ir::ScalarType t, const std::vector<int64_t>& stored, const std::vector<int64_t>& order,
                               const std::function<double(const std::vector<int64_t>&)>& value) {
  std::vector<int64_t> strides = elementStrides(stored, order);
  std::vector<double> v(static_cast<size_t>(numElements(stored)));
  std::vector<int64_t> idx(stored.size(), 0);
  for (int64_t n = 0; n < numElements(stored); ++n) {
    int64_t off = 0;
    for (size_t a = 0; a < idx.size(); ++a) off += idx[a] * strides[a];
    v[static_cast<size_t>(off)] = value(idx);
    for (size_t a = idx.size(); a-- > 0;) {
      if (++idx[a] < stored[a]) break;
      idx[a] = 0;
    }
  }
  return makeHostTensor(t, stored, v);
}

}  // namespace kiln::interp::testing
