#pragma once
// TMA tensor maps (CUtensorMap) for the bulk tensor copies of sm_90+ kernels.
//
// The contract, from the CUDA driver API reference, "Tensor Map Object Management",
// cuTensorMapEncodeTiled
// (https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TENSOR__MEMORY.html, and the same text
// in CUDA 13.0's cuda.h):
//   * rank 1..5; with interleave, rank >= 3;
//   * the global address is 16-byte aligned (32-byte with 32-byte interleave);
//   * every global dim is non-zero and at most 2^32 elements;
//   * the rank-1 global strides (bytes, for dims 1..rank-1; dim 0 is contiguous) are multiples of
//     16 (of 32 with 32-byte interleave) and below 2^40;
//   * every box dim is non-zero and at most 256 elements; without interleave, the inner box dim
//     times the element size is a multiple of 16 bytes;
//   * every element stride is 1..8;
//   * without interleave and with a swizzle, the inner box dim times the element size fits in the
//     swizzle span (32, 64 or 128 bytes); with 32-byte interleave the swizzle must be 32B;
//   * the CUtensorMap itself is 64-byte aligned (cuda.h declares it alignas(128)).
// Dims are listed fastest-varying first, the reverse of a row-major shape: a row-major M x K
// matrix is globalDims {K, M}, globalStrides {K * elemBytes}.
//
// The driver answers a violation with a bare CUDA_ERROR_INVALID_VALUE, so Kiln checks every rule
// first and names the one broken. Kiln always encodes with OOB fill NONE (out-of-bounds elements
// read as zero), which the GEMM tails rely on.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/ir/diagnostics.h"
#include "kiln/ir/types.h"
#include "kiln/runtime/device.h"

namespace kiln::runtime {

enum class TmaSwizzle { None, B32, B64, B128 };
enum class TmaInterleave { None, B16, B32 };
enum class TmaL2Promotion { None, B64, B128, B256 };

struct TensorMapDesc {
  std::string name;  // names the tensor in diagnostics, e.g. "A"
  ir::ScalarType dtype = ir::ScalarType::F16;
  uint64_t globalAddress = 0;
  std::vector<uint64_t> globalDims;      // elements, fastest-varying first; rank = size
  std::vector<uint64_t> globalStrides;   // bytes, rank - 1 entries (dims 1..rank-1)
  std::vector<uint32_t> boxDims;         // elements per copy, rank entries
  std::vector<uint32_t> elementStrides;  // rank entries; empty means all 1
  TmaSwizzle swizzle = TmaSwizzle::None;
  TmaInterleave interleave = TmaInterleave::None;
  TmaL2Promotion l2Promotion = TmaL2Promotion::None;
};

// The TMA element type for a Kiln scalar type; nullopt for i1 (not addressable). FP8 types travel
// as UINT8: TMA copies bytes and does not interpret them.
std::optional<CUtensorMapDataType> tensorMapDataType(ir::ScalarType t);
// 0, 32, 64 or 128.
int swizzleSpanBytes(TmaSwizzle s);

// Checks every rule above; one diagnostic per violation, each naming the tensor and the rule.
bool validateTensorMap(const TensorMapDesc& desc, ir::DiagnosticEngine& diag);

// Validates, then calls cuTensorMapEncodeTiled. Throws kiln::ir::Error with the diagnostics when a
// rule is broken, when the driver lacks the entry point (before CUDA 12.0) or when it refuses.
CUtensorMap encodeTensorMap(const Context& ctx, const TensorMapDesc& desc);

}  // namespace kiln::runtime
