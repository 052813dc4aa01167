// Tensor layouts (contract in tensor_layout.h).
#include "dialects/tile/tensor_layout.h"

#include <algorithm>

#include "kiln/ir/diagnostics.h"

namespace kiln::tile {
using namespace ir;

int64_t TensorLayout::contiguousAxis() const {
  if (!strided()) return order.empty() ? 0 : order[0];
  for (size_t a = 0; a < strides.size(); ++a)
    if (!strides[a].isSymbolic() && strides[a].value == 1) return int64_t(a);
  KILN_ICE("a strided tensor layout without a unit-stride axis reached tensorLayout's user");
}

TensorLayout tensorLayout(const Type& t) {
  TensorLayout l;
  if (const Attribute* s = t.param("strides")) {
    KILN_ASSERT(s->isArray() && s->asArray().size() == t.rank(), "tensorLayout: unverified strides");
    for (const Attribute& e : s->asArray())
      l.strides.push_back(e.isString() ? Extent::of(e.asString()) : Extent::of(e.asInt()));
    return l;
  }
  if (const Attribute* o = t.param("order")) l.order = *o->asInts();
  for (int64_t a = int64_t(t.rank()) - 1; l.order.size() < t.rank(); --a) l.order.push_back(a);
  return l;
}

std::vector<int64_t> elementStrides(const Type& t, const std::function<int64_t(const std::string&)>& dim) {
  TensorLayout l = tensorLayout(t);
  std::vector<int64_t> strides(t.rank(), 1);
  if (l.strided()) {
    for (size_t a = 0; a < t.rank(); ++a) strides[a] = l.strides[a].isSymbolic() ? dim(l.strides[a].sym) : l.strides[a].value;
    return strides;
  }
  int64_t s = 1;
  for (int64_t a : l.order) {
    strides[size_t(a)] = s;
    const Extent& e = t.shape()[size_t(a)];
    s *= std::max<int64_t>(1, e.isSymbolic() ? dim(e.sym) : e.value);
  }
  return strides;
}

std::optional<int64_t> spanElements(const std::vector<int64_t>& extents, const std::vector<int64_t>& strides) {
  int64_t span = 1;
  for (size_t a = 0; a < extents.size(); ++a) {
    if (extents[a] == 0) return 0;
    int64_t reach = 0;
    if (__builtin_mul_overflow(extents[a] - 1, strides[a], &reach) || __builtin_add_overflow(span, reach, &span))
      return std::nullopt;
  }
  return span;
}

bool selfOverlaps(const std::vector<int64_t>& extents, const std::vector<int64_t>& strides) {
  std::vector<size_t> axes;
  for (size_t a = 0; a < extents.size(); ++a)
    if (extents[a] > 1) axes.push_back(a);
  std::sort(axes.begin(), axes.end(), [&](size_t x, size_t y) { return strides[x] < strides[y]; });
  int64_t span = 1;  // elements covered by the axes so far
  for (size_t a : axes) {
    if (strides[a] < span) return true;
    span += (extents[a] - 1) * strides[a];
  }
  return false;
}

std::string stridesProblem(const Type& t, const std::string& name, const std::vector<std::string>& dims) {
  const Attribute* s = t.param("strides");
  if (!s) return "";
  const std::string what = "tensor '" + name + "' has strides = " + s->str();
  if (t.param("order"))
    return "tensor '" + name + "' gives both an order and strides; strides say the layout on their own: drop the order";
  if (t.param("block"))
    return "tensor '" + name + "' gives both a block and strides; a block tensor (scales) is dense: drop the strides";
  if (!s->isArray() || s->asArray().size() != t.rank())
    return what + ": give one stride per axis (" + std::to_string(t.rank()) + "), each an integer or a dim";
  int units = 0;
  for (const Attribute& e : s->asArray()) {
    if (e.isString()) {
      if (std::find(dims.begin(), dims.end(), e.asString()) == dims.end())
        return what + ", whose stride '" + e.asString() + "' is not a dim of the program; declare it in the program's dims";
    } else if (!e.isInt() || e.asInt() < 0) {
      return what + ": a stride is an integer >= 0 or a dim's name, not " + e.str();
    } else if (e.asInt() == 1) {
      ++units;
    }
  }
  if (units != 1)
    return what + ": exactly one axis must have the constant stride 1 (the contiguous one), not " +
           std::to_string(units);
  return "";
}

}  // namespace kiln::tile
