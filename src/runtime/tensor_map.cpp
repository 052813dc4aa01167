#include "kiln/runtime/tensor_map.h"

#include <fmt/format.h>

namespace kiln::runtime {

namespace {

constexpr uint64_t kMaxGlobalDim = uint64_t(1) << 32;
constexpr uint64_t kStrideLimit = uint64_t(1) << 40;
constexpr uint32_t kMaxBoxDim = 256;
constexpr uint32_t kMaxElementStride = 8;
constexpr size_t kMaxRank = 5;

}  // namespace

std::optional<CUtensorMapDataType> tensorMapDataType(ir::ScalarType t) {
  using ir::ScalarType;
  switch (t) {
    case ScalarType::I1:
      return std::nullopt;
    case ScalarType::I32:
      return CU_TENSOR_MAP_DATA_TYPE_INT32;
    case ScalarType::I64:
    case ScalarType::Index:
      return CU_TENSOR_MAP_DATA_TYPE_INT64;
    case ScalarType::F32:
      return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case ScalarType::F16:
      return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case ScalarType::BF16:
      return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case ScalarType::F8E4M3:
    case ScalarType::F8E5M2:
      return CU_TENSOR_MAP_DATA_TYPE_UINT8;
  }
  return std::nullopt;
}

int swizzleSpanBytes(TmaSwizzle s) {
  switch (s) {
    case TmaSwizzle::None:
      return 0;
    case TmaSwizzle::B32:
      return 32;
    case TmaSwizzle::B64:
      return 64;
    case TmaSwizzle::B128:
      return 128;
  }
  return 0;
}

bool validateTensorMap(const TensorMapDesc& d, ir::DiagnosticEngine& diag) {
  const size_t before = diag.errorCount();
  auto error = [&]() -> ir::InFlightDiagnostic {
    auto e = diag.error(ir::Location::unknown());
    e << "tensor map '" << d.name << "': ";
    return e;
  };
  const size_t rank = d.globalDims.size();
  const bool interleaved = d.interleave != TmaInterleave::None;
  const bool interleave32 = d.interleave == TmaInterleave::B32;

  if (rank < 1 || rank > kMaxRank) {
    error() << "rank " << rank << " is not supported; TMA tensors have rank 1 to 5";
    return false;  // the per-dim rules below would only repeat the problem
  }
  if (interleaved && rank < 3)
    error() << "rank " << rank
            << " is too small for an interleaved layout; interleave needs rank 3 or more";

  const auto elemType = tensorMapDataType(d.dtype);
  if (!elemType) error() << "dtype " << ir::scalarName(d.dtype) << " cannot be copied by TMA";
  const int elemBytes = std::max(1, ir::bitWidth(d.dtype) / 8);

  const uint64_t addrAlign = interleave32 ? 32 : 16;
  if (d.globalAddress == 0)
    error() << "global address is null";
  else if (d.globalAddress % addrAlign != 0)
    error() << fmt::format(
        "global address {:#x} is not {}-byte aligned (TMA requires {}-byte "
        "alignment{})",
        d.globalAddress, addrAlign, addrAlign, interleave32 ? " with 32-byte interleave" : "");

  for (size_t i = 0; i < rank; ++i) {
    const uint64_t g = d.globalDims[i];
    if (g == 0 || g > kMaxGlobalDim)
      error() << "global dim " << i << " is " << g << "; TMA dims must be between 1 and 2^32";
  }

  if (d.globalStrides.size() != rank - 1) {
    error() << d.globalStrides.size() << " global strides given for rank " << rank
            << "; TMA takes rank - 1 = " << rank - 1 << " (dim 0 is contiguous)";
  } else {
    const uint64_t strideAlign = interleave32 ? 32 : 16;
    for (size_t i = 0; i + 1 < rank; ++i) {
      const uint64_t s = d.globalStrides[i];
      if (s % strideAlign != 0)
        error() << fmt::format(
            "global stride of dim {} is {} bytes, not a multiple of {} (TMA "
            "requires every row to start {}-byte aligned)",
            i + 1, s, strideAlign, strideAlign);
      if (s >= kStrideLimit)
        error() << fmt::format(
            "global stride of dim {} is {} bytes; TMA strides must be below 2^40", i + 1, s);
    }
  }

  if (d.boxDims.size() != rank) {
    error() << d.boxDims.size() << " box dims given for rank " << rank;
  } else {
    for (size_t i = 0; i < rank; ++i) {
      const uint32_t b = d.boxDims[i];
      if (b == 0 || b > kMaxBoxDim)
        error() << "box dim " << i << " is " << b << "; TMA boxes have 1 to 256 elements per dim";
    }
    const uint64_t innerBytes = uint64_t(d.boxDims[0]) * elemBytes;
    if (!interleaved && innerBytes % 16 != 0)
      error() << fmt::format(
          "inner box dim {} x {} bytes = {} bytes is not a multiple of 16 "
          "(required without interleave)",
          d.boxDims[0], elemBytes, innerBytes);
    const int span = swizzleSpanBytes(d.swizzle);
    if (!interleaved && span != 0 && innerBytes > uint64_t(span))
      error() << fmt::format(
          "inner box dim {} x {} bytes = {} bytes exceeds the {}-byte swizzle "
          "span; use at most {} elements in box dim 0",
          d.boxDims[0], elemBytes, innerBytes, span, span / elemBytes);
  }

  if (!d.elementStrides.empty()) {
    if (d.elementStrides.size() != rank) {
      error() << d.elementStrides.size() << " element strides given for rank " << rank;
    } else {
      for (size_t i = 0; i < rank; ++i) {
        const uint32_t e = d.elementStrides[i];
        if (e == 0 || e > kMaxElementStride)
          error() << "element stride of dim " << i << " is " << e
                  << "; TMA element strides are 1 to 8";
      }
    }
  }

  if (interleave32 && d.swizzle != TmaSwizzle::B32)
    error() << "32-byte interleave requires the 32-byte swizzle";
  return diag.errorCount() == before;
}

CUtensorMap encodeTensorMap(const Context& ctx, const TensorMapDesc& d) {
  ir::DiagnosticEngine diag;
  if (!validateTensorMap(d, diag)) throw ir::Error(diag.diagnostics());
  const Driver& drv = ctx.driver();
  if (!drv.tensorMapEncodeTiled)
    throw ir::Error(
        ir::Location::unknown(),
        fmt::format("tensor map '{}': TMA needs a CUDA 12.0 driver or newer; this one is "
                    "CUDA {}",
                    d.name, versionString(drv.version())));
  const size_t rank = d.globalDims.size();
  std::vector<cuuint64_t> dims(d.globalDims.begin(), d.globalDims.end());
  std::vector<cuuint64_t> strides(d.globalStrides.begin(), d.globalStrides.end());
  std::vector<cuuint32_t> box(d.boxDims.begin(), d.boxDims.end());
  std::vector<cuuint32_t> estrides(rank, 1);
  if (!d.elementStrides.empty()) estrides.assign(d.elementStrides.begin(), d.elementStrides.end());

  // The enums are listed in the driver's order, so the casts are exact.
  static_assert(int(TmaSwizzle::B128) == CU_TENSOR_MAP_SWIZZLE_128B);
  static_assert(int(TmaInterleave::B32) == CU_TENSOR_MAP_INTERLEAVE_32B);
  static_assert(int(TmaL2Promotion::B256) == CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  CUtensorMap map{};
  ctx.makeCurrent();
  CUresult r = drv.tensorMapEncodeTiled(
      &map, *tensorMapDataType(d.dtype), static_cast<cuuint32_t>(rank),
      reinterpret_cast<void*>(static_cast<uintptr_t>(d.globalAddress)), dims.data(),
      strides.empty() ? nullptr : strides.data(), box.data(), estrides.data(),
      static_cast<CUtensorMapInterleave>(d.interleave), static_cast<CUtensorMapSwizzle>(d.swizzle),
      static_cast<CUtensorMapL2promotion>(d.l2Promotion), CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  drv.checkCu(r, fmt::format("cuTensorMapEncodeTiled for tensor map '{}'", d.name));
  return map;
}

}  // namespace kiln::runtime
