#include "schedule/sm80_epilogue_address.h"

namespace kiln::sm80 {
using namespace ir;

namespace {

// The tensor's axes, fastest first.
std::vector<int64_t> axisOrder(const Type& t) {
  std::vector<int64_t> order;
  if (const Attribute* o = t.param("order")) order = *o->asInts();
  for (int64_t a = int64_t(t.rank()) - 1; order.size() < t.rank(); --a) order.push_back(a);
  return order;
}

}  // namespace

Value* elementOffset(KernBuilder& b, const Type& t, const std::vector<Value*>& pos, const ExtentValue& extent) {
  Value* stride = b.i64(1);
  Value* off = b.i64(0);
  for (int64_t axis : axisOrder(t)) {
    off = b.add(off, b.mul(b.cast(pos[size_t(axis)], types::i64()), stride));
    stride = b.mul(stride, b.cast(extent(t.shape()[size_t(axis)]), types::i64()));
  }
  return off;
}

Value* loadAddress(KernBuilder& b, Value* base, const Type& t, const std::vector<Value*>& pos, const ExtentValue& extent) {
  std::vector<Value*> bases = pos;
  int64_t k = 0, stride = 1;
  for (int64_t axis : axisOrder(t)) {
    Operation* d = pos[size_t(axis)]->definingOp();
    std::optional<int64_t> c = d && d->is("arith.addi") ? KernBuilder::intConstant(d->operand(1)) : std::nullopt;
    if (c && *c >= 0) {
      bases[size_t(axis)] = d->operand(0);
      k += *c * stride;
    }
    const Extent& e = t.shape()[size_t(axis)];
    if (e.isSymbolic()) break;  // the axes past a symbolic extent have no compile-time stride
    stride *= e.value;
  }
  Value* p = b.ptrAdd(base, elementOffset(b, t, bases, extent));
  return k ? b.ptrAdd(p, b.i64(k)) : p;
}

}  // namespace kiln::sm80
