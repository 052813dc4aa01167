// tile.reduce_axis (see reduce_axis.h).
#include "interp/reduce_axis.h"

#include "interp/element_codec.h"
#include "interp/ieee_minmax.h"

namespace kiln::interp {
namespace {

template <typename T>
T combine(std::string_view kind, T acc, T x) {
  if (kind == "sum") return acc + x;
  return kind == "max" ? ieeeMaximum(acc, x) : ieeeMinimum(acc, x);
}

}  // namespace

Tile reduceAxis(const Tile& x, size_t axis, std::string_view kind, ir::ScalarType resultElem, Arithmetic m) {
  KILN_ASSERT(axis < x.shape.size() && x.shape[axis] > 0, "tile.reduce_axis along a missing or empty axis");
  // x viewed as [outer, n, inner]: the reduced axis in the middle.
  int64_t n = x.shape[axis], outer = 1, inner = 1;
  for (size_t a = 0; a < axis; ++a) outer *= x.shape[a];
  for (size_t a = axis + 1; a < x.shape.size(); ++a) inner *= x.shape[a];
  Tile r;
  r.elem = resultElem;
  r.shape = x.shape;
  r.shape.erase(r.shape.begin() + static_cast<std::ptrdiff_t>(axis));
  r.data.resize(static_cast<size_t>(outer * inner));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const double* v = x.data.data() + o * n * inner + i;
      double out;
      if (m == Arithmetic::Reference) {
        double acc = v[0];
        for (int64_t j = 1; j < n; ++j) acc = combine(kind, acc, v[j * inner]);
        out = acc;
      } else {
        float acc = static_cast<float>(v[0]);
        for (int64_t j = 1; j < n; ++j) acc = combine(kind, acc, static_cast<float>(v[j * inner]));
        out = narrowF32(acc, resultElem);
      }
      r.data[static_cast<size_t>(o * inner + i)] = out;
    }
  return r;
}

}  // namespace kiln::interp
