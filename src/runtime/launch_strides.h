#pragma once
// Internal to launch_args.cpp: the launch rules of a strided tensor parameter (TensorParam::strides).
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "kiln/runtime/launch_args.h"

namespace kiln::runtime::detail {

struct ByteRange {
  uint64_t begin = 0, end = 0;  // [begin, end)
};

// Checks the strides of a strided parameter's argument whose extents match (the pointer, dtype and
// rank were checked before; `ok` says whether they passed) and returns the bytes it covers when
// everything holds. The rules, each reported with the argument and the stride's name:
//  * strides the caller gave (TensorArg::strides) must be the ones the dims say;
//  * a stride dim must have been given (checkDims reports a missing or bad one);
//  * the rows of a matrix may not overlap: the smallest nonzero stride of an axis of extent > 1
//    is at least the extent of the contiguous axis (BLAS's lda >= rows' length);
//  * an output's elements may not share storage at all (no stride 0, no overlapping batches);
//  * every nonzero stride of an axis of extent > 1 is a multiple of the bytes the kernel's accesses
//    assume rows are aligned to (p.alignBytes).
std::optional<ByteRange> checkStridedTensor(const TensorParam& p, const TensorArg& a,
                                            const std::map<std::string, int64_t>& dims, bool ok,
                                            ir::DiagnosticEngine& diag);

}  // namespace kiln::runtime::detail
