#pragma once
// How a tensor argument of a tile program lies in memory: its type's layout parameter, read once.
//
// A tensor<e, [extents]> is stored densely, row-major (the last axis contiguous). Two optional
// parameters say otherwise, and a type carries at most one of them:
//
//   order = [a0, a1, ...]      dense, axes listed fastest-first: tensor<bf16, [M, K], order = [0, 1]>
//                              is column-major (A^T stored row-major; BLAS's "T")
//   strides = [s0, s1, ...]    strided: element (i0, i1, ...) lies at sum(i_a * s_a) elements from
//                              the base. Each stride is an integer >= 0 or the name of one of the
//                              program's dims, whose value the launch gives like any dim's. Exactly
//                              one axis has the constant stride 1 (the contiguous one, which the
//                              kernels read in vectors); the others are the leading dimension of
//                              a matrix (its row stride, BLAS's lda) and, for a batched tensor, its
//                              batch stride. tensor<bf16, [M, K], strides = ["lda", 1]> is a
//                              row-major A whose rows are lda elements apart (a slice, a padded
//                              buffer); tensor<bf16, [Bt, K, N], strides = [0, 1, "ldb"]> is one
//                              column-major B shared by every batch.
//
// What a launch must satisfy (a stride at least the row it steps over, aligned rows, outputs that
// do not overlap themselves) is checked by the runtime (kiln/runtime/launch_args.h); this header
// only reads the parameters the tile verifier has checked.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kiln/ir/types.h"

namespace kiln::tile {

struct TensorLayout {
  std::vector<int64_t> order;       // dense: axes fastest-first (always filled, row-major by default)
  std::vector<ir::Extent> strides;  // strided: one per axis, a dim or a constant; empty when dense
  bool strided() const { return !strides.empty(); }
  // The contiguous axis: order[0], or the axis of constant stride 1.
  int64_t contiguousAxis() const;
};

// The layout of a verified tensor type.
TensorLayout tensorLayout(const ir::Type& tensor);

// Element strides of each axis at these dim values (`dim` gives a dim's value): the dense ones
// from the extents and the order, or the strided ones evaluated.
std::vector<int64_t> elementStrides(const ir::Type& tensor, const std::function<int64_t(const std::string&)>& dim);

// The elements a tensor of these extents and strides spans from its base: 1 + sum (extent - 1) *
// stride (0 when an extent is 0); nullopt when that overflows int64.
std::optional<int64_t> spanElements(const std::vector<int64_t>& extents, const std::vector<int64_t>& strides);

// Whether two positions of a tensor of these extents and strides share an element (a stride 0, or
// rows closer than they are long): harmless for an input, a race for an output.
bool selfOverlaps(const std::vector<int64_t>& extents, const std::vector<int64_t>& strides);

// Checks the `strides` parameter of a tensor argument named `name` against its rank and the
// program's dims; "" when it is well formed, else the sentence the verifier reports.
std::string stridesProblem(const ir::Type& tensor, const std::string& name, const std::vector<std::string>& dims);

}  // namespace kiln::tile
