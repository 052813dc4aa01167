// Launch rules of strided tensor parameters (contract in launch_strides.h).
#include "runtime/launch_strides.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <vector>

namespace kiln::runtime {

std::vector<int64_t> paramStrides(const TensorParam& p, const std::map<std::string, int64_t>& dims) {
  std::vector<int64_t> s;
  for (const ir::Extent& e : p.strides) {
    auto it = e.isSymbolic() ? dims.find(e.sym) : dims.end();
    s.push_back(e.isSymbolic() ? (it == dims.end() ? 0 : it->second) : e.value);
  }
  return s;
}

namespace detail {
namespace {

int elemBytes(ir::ScalarType t) { return std::max(1, ir::bitWidth(t) / 8); }

ir::InFlightDiagnostic argError(ir::DiagnosticEngine& diag, const std::string& name) {
  ir::InFlightDiagnostic d = diag.error(ir::Location::unknown());
  d << "argument '" << name << "': ";
  return d;
}

// "stride 'lda' = 100 of dim 0 (M)" or "stride 0 of dim 0 (Bt)".
std::string strideLabel(const TensorParam& p, size_t axis, int64_t value) {
  std::string dim = p.shape[axis].isSymbolic() ? fmt::format("dim {} ({})", axis, p.shape[axis].sym)
                                               : fmt::format("dim {}", axis);
  return p.strides[axis].isSymbolic() ? fmt::format("stride '{}' = {} of {}", p.strides[axis].sym, value, dim)
                                      : fmt::format("stride {} of {}", value, dim);
}

size_t unitAxis(const TensorParam& p) {
  for (size_t a = 0; a < p.strides.size(); ++a)
    if (!p.strides[a].isSymbolic() && p.strides[a].value == 1) return a;
  KILN_ICE("strided parameter '" + p.name + "' has no unit-stride axis");
}

}  // namespace

std::optional<ByteRange> checkStridedTensor(const TensorParam& p, const TensorArg& a,
                                            const std::map<std::string, int64_t>& dims, bool ok,
                                            ir::DiagnosticEngine& diag) {
  const size_t rank = p.shape.size();
  for (const ir::Extent& e : p.strides)
    if (e.isSymbolic() && !dims.count(e.sym)) return std::nullopt;  // checkDims reported it
  const std::vector<int64_t> strides = paramStrides(p, dims);
  if (!a.strides.empty() && a.strides != strides) {
    argError(diag, p.name) << fmt::format("strides are [{}] but the kernel's are [{}] at these dims ({})",
                                          fmt::join(a.strides, ", "), fmt::join(strides, ", "),
                                          ir::shapeStr(p.strides));
    return std::nullopt;
  }
  const size_t unit = unitAxis(p);
  const int bytes = elemBytes(p.dtype);
  // The axes that are ever stepped (extent > 1), by stride.
  std::vector<size_t> axes;
  for (size_t d = 0; d < rank; ++d)
    if (d != unit && a.shape[d] > 1) axes.push_back(d);
  std::sort(axes.begin(), axes.end(), [&](size_t x, size_t y) { return strides[x] < strides[y]; });
  // Rows do not overlap: the row stride (the smallest nonzero one) covers the contiguous axis.
  for (size_t d : axes) {
    if (strides[d] == 0) continue;
    if (a.shape[unit] > 1 && strides[d] < a.shape[unit]) {
      argError(diag, p.name) << fmt::format(
          "{} is less than the {} elements of dim {} it steps over, so its rows would overlap; it must be at "
          "least {} (a leading dimension is at least the row's length)",
          strideLabel(p, d, strides[d]), a.shape[unit], unit, a.shape[unit]);
      ok = false;
    }
    break;
  }
  if (p.output) {
    int64_t span = a.shape[unit];
    for (size_t d : axes) {
      if (strides[d] < span) {
        argError(diag, p.name) << fmt::format(
            "{} makes two elements of the output share storage (the dims inside it span {} elements); an output "
            "is written once per element: give it its own storage",
            strideLabel(p, d, strides[d]), span);
        ok = false;
        break;
      }
      span += (a.shape[d] - 1) * strides[d];
    }
  }
  for (size_t d : axes) {
    if (strides[d] == 0 || (static_cast<__int128>(strides[d]) * bytes) % p.alignBytes == 0) continue;
    argError(diag, p.name) << fmt::format(
        "{} elements is {} bytes, not a multiple of {}: the kernel assumes every row starts {}-byte aligned; pad "
        "the rows to a multiple of {} elements, or use a kernel compiled for less alignment",
        strideLabel(p, d, strides[d]), static_cast<__int128>(strides[d]) * bytes > INT64_MAX ? -1 : strides[d] * bytes,
        p.alignBytes, p.alignBytes, std::max(1, p.alignBytes / bytes));
    ok = false;
  }
  if (!ok) return std::nullopt;
  uint64_t span = 1;
  for (size_t d = 0; d < rank; ++d) {
    uint64_t reach = 0;
    if (__builtin_mul_overflow(uint64_t(a.shape[d] - 1), uint64_t(strides[d]), &reach) ||
        __builtin_add_overflow(span, reach, &span)) {
      argError(diag, p.name) << "shape and strides address more than 2^64 elements";
      return std::nullopt;
    }
  }
  uint64_t end = 0, spanBytes = 0;
  if (__builtin_mul_overflow(span, uint64_t(bytes), &spanBytes) || __builtin_add_overflow(a.ptr, spanBytes, &end)) {
    argError(diag, p.name) << fmt::format("the tensor at {:#x} reaches past the end of the address space", a.ptr);
    return std::nullopt;
  }
  return ByteRange{a.ptr, end};
}

}  // namespace detail
}  // namespace kiln::runtime
