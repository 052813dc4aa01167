// HostTensor helpers (contract in include/kiln/interp/host_tensor.h).
#include "kiln/interp/host_tensor.h"

#include "interp/element_codec.h"
#include "kiln/ir/diagnostics.h"
#include "support/checked_math.h"

namespace kiln::interp {

int64_t elementBytes(ir::ScalarType t) {
  // i1 takes a byte: the host never packs booleans.
  return t == ir::ScalarType::I1 ? 1 : ir::bitWidth(t) / 8;
}

// Callers check user-given sizes first (size_limits.h), so an overflow here is an interpreter bug:
// it must abort loudly, never wrap into a small buffer that is then written past.
int64_t numElements(const std::vector<int64_t>& shape) {
  auto n = support::checkedProduct(shape);
  KILN_ASSERT(n.has_value(), "numElements: the product of the extents overflows int64");
  return *n;
}

int64_t storageBytes(ir::ScalarType dtype, const std::vector<int64_t>& shape) {
  auto bytes = support::checkedMul(numElements(shape), elementBytes(dtype));
  KILN_ASSERT(bytes.has_value(), "storageBytes: the tensor's byte count overflows int64");
  return *bytes;
}

HostTensor makeHostTensor(ir::ScalarType dtype, std::vector<int64_t> shape) {
  HostTensor t{dtype, std::move(shape), {}};
  t.bytes.assign(static_cast<size_t>(storageBytes(dtype, t.shape)), 0);
  return t;
}

HostTensor makeHostTensor(ir::ScalarType dtype, std::vector<int64_t> shape, std::span<const double> values) {
  HostTensor t = makeHostTensor(dtype, std::move(shape));
  fillFromDoubles(t, values);
  return t;
}

HostTensor makeStridedHostTensor(ir::ScalarType dtype, std::vector<int64_t> shape, std::span<const double> storage) {
  HostTensor t{dtype, std::move(shape), {}};
  auto bytes = support::checkedMul(static_cast<int64_t>(storage.size()), elementBytes(dtype));
  KILN_ASSERT(bytes.has_value(), "makeStridedHostTensor: the storage's byte count overflows int64");
  t.bytes.assign(static_cast<size_t>(*bytes), 0);
  for (size_t i = 0; i < storage.size(); ++i) setElement(t, static_cast<int64_t>(i), storage[i]);
  return t;
}

int64_t storageElements(const HostTensor& t) { return static_cast<int64_t>(t.bytes.size()) / elementBytes(t.dtype); }

double getElement(const HostTensor& t, int64_t i) {
  KILN_ASSERT(i >= 0 && (i + 1) * elementBytes(t.dtype) <= static_cast<int64_t>(t.bytes.size()),
              "getElement: index past the tensor's bytes");
  return loadElement(t.bytes.data() + i * elementBytes(t.dtype), t.dtype);
}

void setElement(HostTensor& t, int64_t i, double v) {
  KILN_ASSERT(i >= 0 && (i + 1) * elementBytes(t.dtype) <= static_cast<int64_t>(t.bytes.size()),
              "setElement: index past the tensor's bytes");
  storeElement(t.bytes.data() + i * elementBytes(t.dtype), t.dtype, v);
}

void fillFromDoubles(HostTensor& t, std::span<const double> values) {
  KILN_ASSERT(static_cast<int64_t>(values.size()) == numElements(t), "fillFromDoubles: wrong number of values");
  t.bytes.resize(static_cast<size_t>(storageBytes(t.dtype, t.shape)));
  for (size_t i = 0; i < values.size(); ++i) setElement(t, static_cast<int64_t>(i), values[i]);
}

std::vector<double> toDoubles(const HostTensor& t) {
  std::vector<double> out(static_cast<size_t>(storageElements(t)));
  for (size_t i = 0; i < out.size(); ++i) out[i] = getElement(t, static_cast<int64_t>(i));
  return out;
}

std::vector<int64_t> elementStrides(const std::vector<int64_t>& shape, const std::vector<int64_t>& order) {
  size_t rank = shape.size();
  std::vector<int64_t> strides(rank, 0);
  int64_t s = 1;
  for (size_t i = 0; i < rank; ++i) {
    size_t axis = order.empty() ? rank - 1 - i : static_cast<size_t>(order.at(i));
    KILN_ASSERT(axis < rank, "elementStrides: order names a missing axis");
    strides[axis] = s;
    auto next = support::checkedMul(s, shape[axis]);
    KILN_ASSERT(next.has_value(), "elementStrides: the strides overflow int64 (sizes are checked before a run)");
    s = *next;
  }
  return strides;
}

}  // namespace kiln::interp
