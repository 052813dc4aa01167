// tile.dot (see dot.h).
//
// Speed: the operands are converted once per call to flat arrays of the arithmetic type, and the
// loops run i, k, j. For a fixed (i, j) that is still k increasing -- the documented order -- while
// the innermost loop walks contiguous rows of b and acc, which the compiler vectorises without
// reassociating anything (every lane is a different (i, j)).
#include "interp/dot.h"

#include <algorithm>
#include <cmath>

#include "kiln/ir/diagnostics.h"

namespace kiln::interp {
namespace {

template <typename T>
std::vector<T> toFlat(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

template <typename T>
void multiplyAccumulate(const T* a, const T* b, T* acc, int64_t m, int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i) {
    T* accRow = acc + i * n;
    for (int64_t kk = 0; kk < k; ++kk) {
      const T aik = a[i * k + kk];
      const T* bRow = b + kk * n;
      for (int64_t j = 0; j < n; ++j) {
        // Two statements, so that no compiler contracts them into a fused multiply-add.
        const T p = aik * bRow[j];
        accRow[j] = accRow[j] + p;
      }
    }
  }
}

template <typename T>
std::vector<double> run(const Tile& a, const Tile& b, const Tile& acc) {
  int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  std::vector<T> fa = toFlat<T>(a.data), fb = toFlat<T>(b.data), facc = toFlat<T>(acc.data);
  multiplyAccumulate(fa.data(), fb.data(), facc.data(), m, n, k);
  return std::vector<double>(facc.begin(), facc.end());
}

// acc[i][j] += sum over each slice of b's rows (blockK at a time) of the slice's partial sums times
// its scale, i, then slice, then k, then j, as multiplyAccumulate walks.
template <typename T>
void scaledAccumulate(const T* a, const T* sa, const T* b, const T* sb, T* acc, int64_t m, int64_t n, int64_t k,
                      int64_t blockK) {
  std::vector<T> partial(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    T* accRow = acc + i * n;
    for (int64_t k0 = 0; k0 < k; k0 += blockK) {
      std::fill(partial.begin(), partial.end(), T(0));
      for (int64_t kk = k0; kk < std::min(k, k0 + blockK); ++kk) {
        const T aik = a[i * k + kk];
        const T* bRow = b + kk * n;
        for (int64_t j = 0; j < n; ++j) {
          const T p = aik * bRow[j];  // as multiplyAccumulate: never contracted
          partial[j] = partial[j] + p;
        }
      }
      const T scaleA = sa[i * k + k0];
      const T* scaleB = sb + k0 * n;
      for (int64_t j = 0; j < n; ++j) {
        const T s = scaleA * scaleB[j];  // rounded to T before the fused multiply-add
        accRow[j] = std::fma(partial[j], s, accRow[j]);
      }
    }
  }
}

template <typename T>
std::vector<double> runScaled(const Tile& a, const Tile& sa, const Tile& b, const Tile& sb, const Tile& acc,
                              int64_t blockK) {
  int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  std::vector<T> fa = toFlat<T>(a.data), fsa = toFlat<T>(sa.data), fb = toFlat<T>(b.data), fsb = toFlat<T>(sb.data),
                 facc = toFlat<T>(acc.data);
  scaledAccumulate(fa.data(), fsa.data(), fb.data(), fsb.data(), facc.data(), m, n, k, blockK);
  return std::vector<double>(facc.begin(), facc.end());
}

}  // namespace

TilePtr dotScaled(const Tile& a, const Tile& aScale, const Tile& b, const Tile& bScale, const Tile& acc,
                  int64_t blockK, Arithmetic m) {
  KILN_ASSERT(a.shape.size() == 2 && b.shape.size() == 2 && acc.shape.size() == 2, "tile.dot_scaled on tiles not of rank 2");
  KILN_ASSERT(a.shape[1] == b.shape[0] && acc.shape[0] == a.shape[0] && acc.shape[1] == b.shape[1] &&
                  aScale.shape == a.shape && bScale.shape == b.shape && blockK > 0,
              "tile.dot_scaled block sizes do not match");
  auto r = std::make_shared<Tile>();
  r->elem = ir::ScalarType::F32;
  r->shape = acc.shape;
  r->data = m == Arithmetic::Exact ? runScaled<float>(a, aScale, b, bScale, acc, blockK)
                                   : runScaled<double>(a, aScale, b, bScale, acc, blockK);
  return r;
}

TilePtr dot(const Tile& a, const Tile& b, const Tile& acc, Arithmetic m) {
  KILN_ASSERT(a.shape.size() == 2 && b.shape.size() == 2 && acc.shape.size() == 2, "tile.dot on tiles not of rank 2");
  KILN_ASSERT(a.shape[1] == b.shape[0] && acc.shape[0] == a.shape[0] && acc.shape[1] == b.shape[1],
              "tile.dot block sizes do not match");
  auto r = std::make_shared<Tile>();
  r->elem = ir::ScalarType::F32;
  r->shape = acc.shape;
  r->data = m == Arithmetic::Exact ? run<float>(a, b, acc) : run<double>(a, b, acc);
  return r;
}

}  // namespace kiln::interp
