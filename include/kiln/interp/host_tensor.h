#pragma once
// HostTensor: a tensor argument of a tile program, in host memory, as the interpreter reads and
// writes it.
//
// Elements are stored in the tensor's dtype, bit for bit as the GPU would hold them (bf16/f16 as
// 2 bytes, FP8 as 1, i32 as 4, i64/index as 8, i1 as 1; little-endian). The element sequence is
// "row-major in the declared order": the tensor type's `order` lists axes fastest-first, and the
// default (no order) is row-major, i.e. the last axis is fastest. A tensor<bf16, [K, N],
// order = [0, 1]> therefore stores element (k, n) at index k + n * K. The HostTensor itself does not
// carry the order: the program declares it, and elementStrides() computes the layout from it.
//
// Filling from doubles rounds exactly once to the dtype (round to nearest even; FP8 saturates to
// its max normal like the hardware's satfinite conversion; integers round to nearest even and
// saturate, NaN becomes 0). Reading gives each element's exact value as a double.
#include <cstdint>
#include <span>
#include <vector>

#include "kiln/ir/types.h"

namespace kiln::interp {

struct HostTensor {
  ir::ScalarType dtype = ir::ScalarType::F32;
  std::vector<int64_t> shape;
  // The storage: numElements(shape) * elementBytes(dtype) for a dense tensor; for one whose type
  // has strides, every element those strides reach from the base, gaps included (spanElements in
  // the tile dialect's tensor_layout.h: 1 + sum (extent - 1) * stride).
  std::vector<uint8_t> bytes;
};

// Bytes per element of a dtype (i1 takes a whole byte).
int64_t elementBytes(ir::ScalarType t);
// The element count, and the storage bytes of a tensor of `dtype`. Both abort (an internal error)
// when the size overflows int64: user-given sizes are checked before they get here.
int64_t numElements(const std::vector<int64_t>& shape);
int64_t storageBytes(ir::ScalarType dtype, const std::vector<int64_t>& shape);
inline int64_t numElements(const HostTensor& t) { return numElements(t.shape); }

// A tensor of this dtype and shape with every byte zero (the value +0 for every dtype).
HostTensor makeHostTensor(ir::ScalarType dtype, std::vector<int64_t> shape);
// The same, filled from `values` in storage order (values.size() must equal the element count).
HostTensor makeHostTensor(ir::ScalarType dtype, std::vector<int64_t> shape, std::span<const double> values);

// A strided tensor's storage, `storage.size()` elements filled from `storage`.
HostTensor makeStridedHostTensor(ir::ScalarType dtype, std::vector<int64_t> shape, std::span<const double> storage);
// The elements the storage holds (bytes / element size).
int64_t storageElements(const HostTensor& t);

// Element `i` (in storage order), exactly, as a double.
double getElement(const HostTensor& t, int64_t i);
// Stores `v` into element `i`, rounded once to the dtype.
void setElement(HostTensor& t, int64_t i, double v);

// Every element, in storage order, rounded once to the dtype / read back exactly (toDoubles: the
// whole storage, a strided tensor's gaps included).
void fillFromDoubles(HostTensor& t, std::span<const double> values);
std::vector<double> toDoubles(const HostTensor& t);

// Element strides (in elements) of each logical axis for a tensor laid out fastest-first in
// `order`; an empty order means row-major. Storage index of (i0, i1, ...) = sum(i_a * stride[a]).
std::vector<int64_t> elementStrides(const std::vector<int64_t>& shape, const std::vector<int64_t>& order = {});

}  // namespace kiln::interp
