#pragma once
// Launch-argument validation: everything a kernel was compiled to assume about its arguments,
// checked on the host before anything runs.
//
// A compiled kernel bakes in assumptions: element types, ranks, which extents are equal, a
// contiguous innermost dim, 16-byte-aligned base pointers and rows (vector loads, cp.async, TMA),
// divisibility of some dims, outputs that do not overlap inputs or themselves, and for a strided
// parameter rows at least as far apart as they are long (a leading dimension at least the row). A violated assumption on the
// device is silent wrong output or a fault far from its cause, so each one is a rule here, and
// each violated rule gives one diagnostic that names the argument and the rule, with what to do:
//
//   argument 'A': pointer 0x1002 is not aligned to 16 bytes (required for 16-byte vector loads);
//   allocate with cudaMalloc or pad the offset
//
// The KernelSignature comes from the compiler; an inconsistent one (a shape naming an undeclared
// dim, an `order` that is not a permutation) is a compiler bug and aborts through KILN_ICE. The
// LaunchArgs come from the user; nothing in them can crash this code.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kiln/ir/diagnostics.h"
#include "kiln/ir/types.h"

namespace kiln::runtime {

struct TensorParam {
  std::string name;
  ir::ScalarType dtype = ir::ScalarType::F32;
  ir::Shape shape;             // symbolic or constant extents, e.g. {M, K}
  std::vector<int64_t> order;  // dims fastest-varying first; empty = row-major
  int alignBytes = 16;         // the base pointer and every row start are aligned to this
  bool output = false;
  // A strided tensor: each axis's element stride, a dim (given at launch like any dim: a leading
  // dimension, a batch stride) or a constant; exactly one is the constant 1. Empty: dense in `order`.
  ir::Shape strides = {};
  std::vector<int64_t> block = {};  // a block tensor's block per axis (its extents are ceil(shape / block)); empty: none
};

struct ScalarParam {
  std::string name;
  ir::ScalarType dtype = ir::ScalarType::F32;
};

struct KernelSignature {
  std::vector<std::string> dims;  // symbolic dims, e.g. M, N, K, G
  std::vector<TensorParam> tensors;
  std::vector<ScalarParam> scalars;
  std::map<std::string, int64_t> dimMultipleOf;  // e.g. K % 8 == 0 for 16-byte bf16 rows
};

struct TensorArg {
  uint64_t ptr = 0;
  ir::ScalarType dtype = ir::ScalarType::F32;
  std::vector<int64_t> shape;
  // Elements; empty = what the parameter says at the launch's dims: contiguous in its `order`, or
  // its strides evaluated (paramStrides).
  std::vector<int64_t> strides;
};

struct LaunchArgs {
  std::vector<TensorArg> tensors;  // in the order of KernelSignature::tensors
  std::vector<double> scalars;     // in the order of KernelSignature::scalars
  std::map<std::string, int64_t> dims;
};

// Checks everything before anything runs; each violated rule gives one diagnostic naming the
// argument and the rule. Returns true when there was none.
bool validateLaunch(const KernelSignature& sig, const LaunchArgs& args, ir::DiagnosticEngine& diag);

// The bytes [begin, end) each tensor of `args` covers (1 + sum (extent-1) * stride elements from
// its pointer), in the order of sig.tensors. Call after validateLaunch succeeded.
struct ByteSpan {
  uint64_t begin = 0, end = 0;
};
std::vector<ByteSpan> tensorByteSpans(const KernelSignature& sig, const LaunchArgs& args);

// What libcuda says about a pointer (cuPointerGetAttribute), as plain data so that the rule is
// testable without a GPU.
struct PointerAttributes {
  enum class Status { Known, NotCuda, Unavailable };  // NotCuda: CUDA_ERROR_INVALID_VALUE
  enum class Memory { Device, Host, Array, Unified };
  Status status = Status::Unavailable;
  Memory memory = Memory::Device;
  bool managed = false;
  uint64_t context = 0;  // the CUcontext it was allocated in (0 for managed memory)
  uint64_t rangeStart = 0, rangeSize = 0;  // the allocation holding the pointer
};

class Driver;
// Asks libcuda (cuPointerGetAttribute) about `ptr`. Needs a current context.
PointerAttributes queryPointerAttributes(const Driver& driver, uint64_t ptr);

// Checks that a tensor's bytes `span` lie in device (or managed) memory of the current context,
// inside one allocation; each violation is one diagnostic naming the argument. Unavailable
// attributes (an old or fake driver) check nothing.
bool checkPointerAttributes(const std::string& name, ByteSpan span, const PointerAttributes& attrs,
                            uint64_t currentContext, ir::DiagnosticEngine& diag);

// A kernel parameter's bytes as the PTX declares it (.f32, .u32 or .u64): `size` bytes of `bits`.
struct PackedParam {
  uint64_t bits = 0;
  int size = 0;
};
// A scalar of `type` (validateLaunch checked its range): f32 as an IEEE single, i64 as 8 bytes of
// two's complement, i32 / index / i1 as 4 bytes. Aborts (KILN_ICE) on a type no kernel takes.
PackedParam packScalar(ir::ScalarType type, double value);
// A dim: an int32 (validated to be at most INT32_MAX). Aborts when it is out of range.
PackedParam packDim(int64_t value);

// The dims of `param` fastest-varying first: `order` when given, else rank-1 ... 0 (row-major).
// Aborts (KILN_ICE) when `order` is not a permutation of the dims.
std::vector<int64_t> dimOrder(const TensorParam& param);

// The element strides a strided parameter has at these dims (its constant strides, and its stride
// dims' values; 0 for one not given, which validateLaunch reports). Empty for a dense parameter.
std::vector<int64_t> paramStrides(const TensorParam& param, const std::map<std::string, int64_t>& dims);

// The element strides of a tensor of `shape` stored densely in `order` (fastest first).
std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& shape,
                                       const std::vector<int64_t>& order);

}  // namespace kiln::runtime
