#include "kiln/runtime/launch_args.h"
#include "runtime/launch_strides.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <set>

namespace kiln::runtime {

namespace {

using ir::DiagnosticEngine;
using ir::InFlightDiagnostic;

// Bytes per element in memory; i1 is stored as a byte.
int elemBytes(ir::ScalarType t) { return std::max(1, ir::bitWidth(t) / 8); }

std::string joinNames(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + names[i];
  return s;
}

InFlightDiagnostic argError(DiagnosticEngine& diag, const std::string& name) {
  InFlightDiagnostic d = diag.error(ir::Location::unknown());
  d << "argument '" << name << "': ";
  return d;
}

// The signature is compiler output: an inconsistent one is a compiler bug, not a user error.
void checkSignature(const KernelSignature& sig) {
  std::set<std::string> dims;
  for (const auto& d : sig.dims)
    KILN_ASSERT(dims.insert(d).second, "kernel signature declares dim '" + d + "' twice");
  for (const auto& t : sig.tensors) {
    for (const auto& e : t.shape)
      KILN_ASSERT(!e.isSymbolic() || dims.count(e.sym),
                  "tensor '" + t.name + "' uses undeclared dim '" + e.sym + "'");
    KILN_ASSERT(t.alignBytes > 0 && (t.alignBytes & (t.alignBytes - 1)) == 0,
                "tensor '" + t.name + "' has alignment " + std::to_string(t.alignBytes) +
                    ", not a power of two");
    dimOrder(t);  // aborts on a bad order
    if (t.strides.empty()) continue;
    KILN_ASSERT(t.strides.size() == t.shape.size() && t.order.empty(),
                "tensor '" + t.name + "' has strides that do not match its rank, or an order beside them");
    int units = 0;
    for (const auto& e : t.strides) {
      KILN_ASSERT(!e.isSymbolic() || dims.count(e.sym), "tensor '" + t.name + "' uses undeclared stride dim '" + e.sym + "'");
      units += !e.isSymbolic() && e.value == 1;
    }
    KILN_ASSERT(units == 1, "tensor '" + t.name + "' has no single unit-stride axis");
  }
  for (const auto& [d, m] : sig.dimMultipleOf) {
    KILN_ASSERT(dims.count(d), "dimMultipleOf names undeclared dim '" + d + "'");
    KILN_ASSERT(m >= 1, "dimMultipleOf for '" + d + "' is " + std::to_string(m));
  }
}

// Writes "the kernel expects 2 tensor arguments (A, B) but 1 was given" when the counts differ.
template <typename Param>
bool checkCount(const std::vector<Param>& params, size_t given, const char* kind,
                DiagnosticEngine& diag) {
  if (params.size() == given) return true;
  std::vector<std::string> names;
  for (const auto& p : params) names.push_back(p.name);
  diag.error(ir::Location::unknown()) << fmt::format(
      "kernel expects {} {} argument{}{} but {} {} given", params.size(), kind,
      params.size() == 1 ? "" : "s", names.empty() ? "" : " (" + joinNames(names) + ")", given,
      given == 1 ? "was" : "were");
  return false;
}

// Returns the dims whose values are usable (given, positive); the others are reported.
std::map<std::string, int64_t> checkDims(const KernelSignature& sig, const LaunchArgs& args,
                                         DiagnosticEngine& diag) {
  std::map<std::string, int64_t> valid;
  const std::set<std::string> declared(sig.dims.begin(), sig.dims.end());
  for (const auto& d : sig.dims) {
    auto it = args.dims.find(d);
    if (it == args.dims.end()) {
      diag.error(ir::Location::unknown())
          << "dimension '" << d << "' was not given; the kernel needs " << joinNames(sig.dims);
      continue;
    }
    // Zero is refused too: CUDA rejects an empty grid and TMA an empty tensor, and an empty
    // problem has nothing to compute. The caller can skip the launch instead.
    if (it->second <= 0) {
      diag.error(ir::Location::unknown())
          << "dimension '" << d << "' is " << it->second << "; dimensions must be positive"
          << (it->second == 0
                  ? " (skip the launch when a dimension is 0: there is nothing to compute)"
                  : "");
      continue;
    }
    // Dims are kernel parameters of type int32 (packDim): a larger one would wrap on the device.
    if (it->second > std::numeric_limits<int32_t>::max()) {
      diag.error(ir::Location::unknown()) << fmt::format(
          "dimension '{}' is {}, over the limit of {} (the kernel takes its dims as int32); split the "
          "problem along {}",
          d, it->second, std::numeric_limits<int32_t>::max(), d);
      continue;
    }
    valid[d] = it->second;
  }
  for (const auto& [d, v] : args.dims) {
    if (declared.count(d)) continue;
    auto e = diag.error(ir::Location::unknown());
    e << "unknown dimension '" << d << "'; ";
    if (sig.dims.empty())
      e << "the kernel has no dimensions";
    else
      e << "the kernel's dimensions are " << joinNames(sig.dims);
  }
  for (const auto& [d, m] : sig.dimMultipleOf) {
    auto it = valid.find(d);
    if (it == valid.end() || it->second % m == 0) continue;
    const int64_t padded = (it->second / m + 1) * m;
    diag.error(ir::Location::unknown()) << fmt::format(
        "dimension '{}' is {}, not a multiple of {} (the kernel was compiled for "
        "{} % {} == 0); pad {} to {}",
        d, it->second, m, d, m, d, padded);
  }
  return valid;
}

// "dim 1 (K)" for a symbolic extent, "dim 1" for a constant one.
std::string dimLabel(const TensorParam& p, size_t i) {
  return p.shape[i].isSymbolic() ? fmt::format("dim {} ({})", i, p.shape[i].sym)
                                 : fmt::format("dim {}", i);
}

using detail::ByteRange;

// Checks one tensor; returns its byte range when the tensor is fully valid (for the alias check).
std::optional<ByteRange> checkTensor(const TensorParam& p, const TensorArg& a,
                                     const std::map<std::string, int64_t>& dims,
                                     DiagnosticEngine& diag) {
  bool ok = true;
  if (a.ptr == 0) {
    argError(diag, p.name) << "pointer is null";
    ok = false;
  } else if (a.ptr % static_cast<uint64_t>(p.alignBytes) != 0) {
    argError(diag, p.name) << fmt::format(
        "pointer {:#x} is not aligned to {} bytes (required for {}-byte vector loads); allocate "
        "with cudaMalloc or pad the offset",
        a.ptr, p.alignBytes, p.alignBytes);
    ok = false;
  }
  if (a.dtype != p.dtype) {
    argError(diag, p.name) << "dtype is " << ir::scalarName(a.dtype)
                           << " but the kernel was compiled for " << ir::scalarName(p.dtype);
    ok = false;
  }
  const size_t rank = p.shape.size();
  if (a.shape.size() != rank) {
    argError(diag, p.name) << fmt::format(
        "rank is {} (shape [{}]) but the kernel expects rank {} ({})", a.shape.size(),
        fmt::join(a.shape, ", "), rank, ir::shapeStr(p.shape));
    return std::nullopt;  // extents and strides cannot be matched up
  }
  bool extentsKnown = true;
  for (size_t i = 0; i < rank; ++i) {
    const ir::Extent& e = p.shape[i];
    int64_t expected = e.value;
    if (e.isSymbolic()) {
      auto it = dims.find(e.sym);
      if (it == dims.end()) {  // already reported as missing or invalid
        extentsKnown = false;
        continue;
      }
      expected = it->second;
    }
    const int64_t block = i < p.block.size() ? p.block[i] : 1;
    if (a.shape[i] == ir::storedExtent(expected, block)) continue;
    extentsKnown = false;
    if (block > 1)
      argError(diag, p.name) << fmt::format(
          "extent {} is {} but the kernel expects {}: one element per block of {} of {} {} (shape {} in blocks of "
          "[{}])",
          i, a.shape[i], ir::storedExtent(expected, block), block, e.isSymbolic() ? "dimension '" + e.sym + "' =" : "extent",
          expected, ir::shapeStr(p.shape), fmt::join(p.block, ", "));
    else if (e.isSymbolic())
      argError(diag, p.name) << fmt::format(
          "extent {} is {} but dimension '{}' is {} (the kernel expects shape {})", i, a.shape[i],
          e.sym, expected, ir::shapeStr(p.shape));
    else
      argError(diag, p.name) << fmt::format("extent {} is {} but the kernel expects {} (shape {})",
                                            i, a.shape[i], expected, ir::shapeStr(p.shape));
  }
  if (!a.strides.empty() && a.strides.size() != rank) {
    argError(diag, p.name) << fmt::format("{} stride{} given for a rank-{} tensor",
                                          a.strides.size(), a.strides.size() == 1 ? "" : "s", rank);
    return std::nullopt;
  }
  if (!extentsKnown) return std::nullopt;
  if (!p.strides.empty()) return detail::checkStridedTensor(p, a, dims, ok, diag);

  // Strides are checked in the kernel's order, fastest dim first. A dim of extent 1 is always
  // indexed at 0, so its stride is never used and any value is accepted (as PyTorch does).
  const std::vector<int64_t> order = dimOrder(p);
  const bool contiguous = a.strides.empty();
  const std::vector<int64_t> strides = contiguous ? contiguousStrides(a.shape, order) : a.strides;
  const int bytes = elemBytes(p.dtype);
  const char* layout = contiguous ? " (contiguous layout)" : "";
  int64_t span = 1;  // elements covered by the dims checked so far: 1 + sum (extent-1) * stride
  for (size_t k = 0; k < order.size(); ++k) {
    const size_t d = static_cast<size_t>(order[k]);
    const int64_t extent = a.shape[d], stride = strides[d];
    if (extent == 1) continue;
    if (k == 0 && stride != 1) {
      // A stride-1 dim elsewhere usually means a transposed view; say so.
      std::string hint;
      for (size_t j = 0; j < rank && hint.empty(); ++j)
        if (j != d && strides[j] == 1 && a.shape[j] > 1)
          hint = fmt::format(" ({} has stride 1: is it transposed?)", dimLabel(p, j));
      argError(diag, p.name) << fmt::format(
          "stride of {}, the innermost, is {} but must be 1; the kernel reads it contiguously: "
          "pass a contiguous tensor{}",
          dimLabel(p, d), stride, hint);
      return std::nullopt;  // the other strides are measured from this one: no use checking them
    } else if (k > 0 && stride < span) {
      argError(diag, p.name) << fmt::format(
          "stride of {} is {}{}, but the dims inside it span {} elements; its rows would overlap",
          dimLabel(p, d), stride, layout, span);
      ok = false;
    } else if (k > 0 && (static_cast<__int128>(stride) * bytes) % p.alignBytes != 0) {
      int64_t strideBytes = 0;
      const bool huge = __builtin_mul_overflow(stride, int64_t(bytes), &strideBytes);
      argError(diag, p.name) << fmt::format(
          "stride of {} is {} elements = {} bytes{}, not a multiple of {} bytes; every row must "
          "start {}-byte aligned (TMA and {}-byte vector loads): pad rows to a multiple of {} "
          "elements",
          dimLabel(p, d), stride, huge ? "over 2^63" : std::to_string(strideBytes), layout,
          p.alignBytes, p.alignBytes, p.alignBytes, std::max(1, p.alignBytes / bytes));
      ok = false;
    }
    int64_t reach = 0;
    if (stride < 0 || __builtin_mul_overflow(extent - 1, stride, &reach) ||
        __builtin_add_overflow(span, reach, &span)) {
      if (ok) argError(diag, p.name) << "shape and strides address more than 2^63 elements";
      return std::nullopt;
    }
  }
  uint64_t spanBytes = 0, end = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(span), static_cast<uint64_t>(bytes),
                             &spanBytes) ||
      __builtin_add_overflow(a.ptr, spanBytes, &end)) {
    if (ok)
      argError(diag, p.name) << fmt::format(
          "the tensor at {:#x} reaches past the end of the address space", a.ptr);
    return std::nullopt;
  }
  if (!ok) return std::nullopt;
  return ByteRange{a.ptr, end};
}

// Outputs must not overlap inputs or other outputs. Overlap is decided on byte ranges: exact for
// dense tensors and conservative for strided views that interleave without sharing elements.
void checkAliasing(const KernelSignature& sig, const std::vector<std::optional<ByteRange>>& ranges,
                   DiagnosticEngine& diag) {
  for (size_t o = 0; o < sig.tensors.size(); ++o) {
    if (!sig.tensors[o].output || !ranges[o]) continue;
    for (size_t t = 0; t < sig.tensors.size(); ++t) {
      if (t == o || !ranges[t]) continue;
      const bool otherIsOutput = sig.tensors[t].output;
      if (otherIsOutput && t < o) continue;  // the pair was reported from the other side
      const ByteRange a = *ranges[o], b = *ranges[t];
      if (a.begin >= b.end || b.begin >= a.end) continue;
      const std::string& on = sig.tensors[o].name;
      const std::string& tn = sig.tensors[t].name;
      argError(diag, on) << fmt::format(
          "output overlaps {} '{}' (bytes [{:#x}, {:#x}) and [{:#x}, {:#x})); {}",
          otherIsOutput ? "output" : "input", tn, a.begin, a.end, b.begin, b.end,
          otherIsOutput
              ? "both are written, so the result would depend on timing: use separate buffers"
              : fmt::format(
                    "the kernel would read '{}' while writing '{}': use a separate output buffer",
                    tn, on));
    }
  }
}

void checkScalar(const ScalarParam& p, double v, DiagnosticEngine& diag) {
  if (p.dtype == ir::ScalarType::F32) return;  // passed rounded to nearest, inf and nan included
  if (ir::isFloat(p.dtype)) {
    // No kernel parameter holds a narrow float (the PTX declares .f32, .u32 or .u64 only).
    argError(diag, p.name) << "the kernel takes a " << ir::scalarName(p.dtype)
                           << " scalar, which cannot be passed as a kernel parameter; declare the scalar f32 "
                              "and cast it inside the program";
    return;
  }
  if (std::isnan(v) || std::trunc(v) != v) {
    argError(diag, p.name) << fmt::format("value {} is not an integer, but the kernel takes {}", v,
                                          ir::scalarName(p.dtype));
    return;
  }
  // Bounds as doubles, exact: [lo, hiExclusive). 2^31 and 2^63 are representable. The range is
  // the one packScalar writes: i64 in 8 bytes, i32 and index in 4 (the PTX's .u32), i1 as 0 or 1.
  double lo = 0, hiExclusive = 2;
  if (p.dtype == ir::ScalarType::I32 || p.dtype == ir::ScalarType::Index) {
    lo = -2147483648.0;
    hiExclusive = 2147483648.0;
  } else if (p.dtype == ir::ScalarType::I64) {
    lo = -9223372036854775808.0;
    hiExclusive = 9223372036854775808.0;
  }
  if (v < lo || v >= hiExclusive)
    argError(diag, p.name) << fmt::format("value {} is out of range for {}", v, ir::scalarName(p.dtype));
}

const char* memoryName(PointerAttributes::Memory m) {
  switch (m) {
    case PointerAttributes::Memory::Device: return "device memory";
    case PointerAttributes::Memory::Host: return "host memory";
    case PointerAttributes::Memory::Array: return "a CUDA array";
    case PointerAttributes::Memory::Unified: return "unified memory";
  }
  return "unknown memory";
}

}  // namespace

std::vector<int64_t> dimOrder(const TensorParam& p) {
  const int64_t rank = static_cast<int64_t>(p.shape.size());
  std::vector<int64_t> order = p.order;
  if (order.empty()) {
    for (int64_t d = rank - 1; d >= 0; --d) order.push_back(d);
    return order;
  }
  std::vector<int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  bool permutation = sorted.size() == static_cast<size_t>(rank);
  for (int64_t i = 0; permutation && i < rank; ++i) permutation = sorted[i] == i;
  KILN_ASSERT(permutation,
              "tensor '" + p.name + "' has an order that is not a permutation of its dims");
  return order;
}

std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& shape,
                                       const std::vector<int64_t>& order) {
  std::vector<int64_t> strides(shape.size(), 1);
  int64_t s = 1;
  for (int64_t d : order) {
    strides[d] = s;
    // Saturate rather than overflow: the span check then reports the tensor as too large.
    if (__builtin_mul_overflow(s, std::max<int64_t>(shape[d], 1), &s))
      s = std::numeric_limits<int64_t>::max();
  }
  return strides;
}

std::vector<ByteSpan> tensorByteSpans(const KernelSignature& sig, const LaunchArgs& args) {
  std::vector<ByteSpan> spans;
  for (size_t i = 0; i < sig.tensors.size() && i < args.tensors.size(); ++i) {
    const TensorArg& a = args.tensors[i];
    const TensorParam& p = sig.tensors[i];
    const std::vector<int64_t> strides = !a.strides.empty()  ? a.strides
                                         : p.strides.empty() ? contiguousStrides(a.shape, dimOrder(p))
                                                             : paramStrides(p, args.dims);
    uint64_t elems = 1;
    for (size_t d = 0; d < a.shape.size(); ++d) elems += uint64_t(a.shape[d] - 1) * uint64_t(strides[d]);
    // validateLaunch proved these fit in the address space.
    spans.push_back({a.ptr, a.ptr + elems * uint64_t(elemBytes(sig.tensors[i].dtype))});
  }
  return spans;
}

bool checkPointerAttributes(const std::string& name, ByteSpan span, const PointerAttributes& a,
                            uint64_t currentContext, DiagnosticEngine& diag) {
  using Status = PointerAttributes::Status;
  using Memory = PointerAttributes::Memory;
  if (a.status == Status::Unavailable) return true;
  if (a.status == Status::NotCuda) {
    argError(diag, name) << fmt::format(
        "pointer {:#x} is not memory CUDA knows (a host pointer, or freed memory); allocate the "
        "tensor on the device (cuMemAlloc, cudaMalloc, a CUDA tensor) and pass its device pointer",
        span.begin);
    return false;
  }
  bool ok = true;
  if (a.memory != Memory::Device && !(a.memory == Memory::Unified || a.managed)) {
    argError(diag, name) << fmt::format("pointer {:#x} is {}, not device memory; copy the tensor to the device first",
                                        span.begin, memoryName(a.memory));
    ok = false;
  }
  // Managed memory is reachable from every context; device memory only from its own.
  if (!a.managed && a.context != currentContext) {
    argError(diag, name) << fmt::format(
        "pointer {:#x} was allocated in another CUDA context ({:#x}) than the one the kernel runs in "
        "({:#x}); allocate it on the kernel's device and context",
        span.begin, a.context, currentContext);
    ok = false;
  }
  const uint64_t allocEnd = a.rangeStart + a.rangeSize;
  if (a.rangeSize > 0 && (span.begin < a.rangeStart || span.end > allocEnd)) {
    argError(diag, name) << fmt::format(
        "the tensor covers bytes [{:#x}, {:#x}), {} bytes, but its allocation is [{:#x}, {:#x}), {} bytes: "
        "it ends {} bytes short; allocate at least {} bytes from the tensor's pointer",
        span.begin, span.end, span.end - span.begin, a.rangeStart, allocEnd, a.rangeSize,
        span.end > allocEnd ? span.end - allocEnd : 0, span.end - span.begin);
    ok = false;
  }
  return ok;
}

PackedParam packScalar(ir::ScalarType type, double value) {
  PackedParam p;
  switch (type) {
    case ir::ScalarType::F32: {
      float f = static_cast<float>(value);
      uint32_t bits = 0;
      std::memcpy(&bits, &f, sizeof f);
      return {bits, 4};
    }
    case ir::ScalarType::I64: {
      // 2^63 itself is refused by checkScalar; the cast is exact below it.
      int64_t x = static_cast<int64_t>(value);
      std::memcpy(&p.bits, &x, sizeof x);
      p.size = 8;
      return p;
    }
    case ir::ScalarType::I32:
    case ir::ScalarType::Index:
    case ir::ScalarType::I1: {
      int32_t x = static_cast<int32_t>(value);
      uint32_t bits = 0;
      std::memcpy(&bits, &x, sizeof x);
      return {bits, 4};
    }
    default: KILN_ICE("a " + std::string(ir::scalarName(type)) + " scalar reached packScalar; checkScalar refuses it");
  }
}

PackedParam packDim(int64_t value) {
  KILN_ASSERT(value > 0 && value <= std::numeric_limits<int32_t>::max(), "packDim: an unvalidated dim");
  return {static_cast<uint32_t>(value), 4};
}

bool validateLaunch(const KernelSignature& sig, const LaunchArgs& args, DiagnosticEngine& diag) {
  checkSignature(sig);
  const size_t before = diag.errorCount();
  const bool tensorsOk = checkCount(sig.tensors, args.tensors.size(), "tensor", diag);
  const bool scalarsOk = checkCount(sig.scalars, args.scalars.size(), "scalar", diag);
  const std::map<std::string, int64_t> dims = checkDims(sig, args, diag);
  // Arguments are matched by position, so with the wrong number of them every per-argument
  // message would be about the wrong argument: report the count alone.
  if (tensorsOk) {
    std::vector<std::optional<ByteRange>> ranges;
    for (size_t i = 0; i < sig.tensors.size(); ++i)
      ranges.push_back(checkTensor(sig.tensors[i], args.tensors[i], dims, diag));
    checkAliasing(sig, ranges, diag);
  }
  if (scalarsOk)
    for (size_t i = 0; i < sig.scalars.size(); ++i)
      checkScalar(sig.scalars[i], args.scalars[i], diag);
  return diag.errorCount() == before;
}

}  // namespace kiln::runtime
