#pragma once
// Recognises a GEMM-family tile program and describes it for a strategy.
//
// The shape the sm80 strategies lower (anything else gets a diagnostic that says what differs):
//
//   tile.program {dims = [...]} {
//     %A = tile.input : tensor<bf16|f16, [M, K]>          (row-major: K contiguous; sm80 also
//                                                          column-major, order = [0, 1])
//     %B = tile.input : tensor<bf16|f16, [K, N]>          (row-major, or K-major with order = [0, 1])
//     ...other inputs/outputs/scalars used by the epilogue...
//     tile.for_tiles {dims = [M, N]} {
//     ^bb0(%m: coord<[M]>, %n: coord<[N]>):
//       %acc0 = tile.constant {value = 0.0} : tile<f32, [M, N]>
//       %acc = tile.reduce(%acc0) {dim = K} {
//       ^bb0(%k, %c):  %a = tile.load(%A, %m, %k)  %b = tile.load(%B, %k, %n)
//                      %d = tile.dot(%a, %b, %c)  tile.yield(%d) }
//       ...elementwise epilogue on %acc...
//       tile.store(%C, %m, %n, %v)                         (C row-major [M, N])
//       tile.yield()
//     }
//   }
//
// Batched: tile.for_tiles {batch = "Bt"} with a leading index argument %bi; the batched tensors
// are [Bt, ...] with the batch axis outermost (slowest), accessed as tile.load(%A, %bi, %m, %k).
//
// Grouped (MoE): before the tile.reduce, %g = tile.group_index(%ids, %m) {align = A} with %ids a
// rank-1 i32/i64 input [M]; B is [G, K, N] (or K-major, order = [1, 2, 0]) with the group axis
// outermost, loaded as tile.load(%B, %g, %k, %n). A is never indexed by the group. Not batched.
//
// FP8: A and B both f8e4m3 / f8e5m2; A row-major and B K-major (ldmatrix has no 8-bit .trans;
// wgmma reads 8-bit operands K-major only; cuBLASLt's FP8 layouts on Hopper are the same "TN").
//
// Ragged (sm90_ws_persistent): tile.for_tiles(%bounds) {batch = G, ragged = M, bounds} with offsets
// (A [M, K] and C [M, N] by rows, B [G, K, N] by the group) or counts (A, B, C batched by the group).
//
// Block-scaled (sm90_ws_persistent): tile.dot_scaled(%a, %sa, %b, %sb, %c) {block_k} in place of
// the dot, %sa and %sb loaded from block-tensor inputs at A's and B's indices (gemm_scales.cpp).
//
// Strided operands (tensor<..., strides = [...]>, dialects/tile/tensor_layout.h): sm80_multistage
// addresses A, B, C and the epilogue's tensors through their strides (a leading dimension, a batch
// or group stride, 0 for one matrix shared by every batch); sm90_ws_persistent through its tensor
// maps' strides (no stride 0).
#include <optional>
#include <string>
#include <vector>

#include "kiln/config.h"
#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"

namespace kiln {

struct GemmProgram {
  const ir::Operation* program = nullptr;
  const ir::Operation* forTiles = nullptr;
  const ir::Operation* reduce = nullptr;
  const ir::Operation* loadA = nullptr;
  const ir::Operation* loadB = nullptr;
  const ir::Operation* dot = nullptr;
  const ir::Value* tensorA = nullptr;
  const ir::Value* tensorB = nullptr;
  std::string dimM, dimN, dimK;
  std::string dimBatch;                 // "" when the tile loop is not batched
  const ir::Value* batchArg = nullptr;  // the loop's batch index argument
  ir::ScalarType abType = ir::ScalarType::BF16;  // A's element type (and B's, except FP8 e4m3 x e5m2)
  ir::ScalarType bType = ir::ScalarType::BF16;   // B's element type
  bool fp8 = false;      // both operands FP8: mma.sync m16n8k32
  bool bKMajor = false;  // B stored [N][K] (order = [0, 1])
  bool aColMajor = false;  // A stored [K][M] (M contiguous: order = [0, 1], or strides [1, lda])
  // How A and B are addressed (matrixAccess below).
  struct Access {
    bool strided = false;
    ir::Extent ld;  // elements between consecutive lines of the matrix (its leading dimension)
    // Batched or grouped (rank 3): elements between consecutive matrices; unset for a dense tensor,
    // whose matrices lie back to back.
    std::optional<ir::Extent> matrixStride;
  };
  Access accessA, accessB;
  // Grouped GEMM: the tile.group_index (null when there is none), its result, its id tensor and
  // its align; bGrouped when B's matrix is selected by the group ([G, K, N]).
  const ir::Operation* groupIndex = nullptr;
  const ir::Value* groupValue = nullptr;
  const ir::Value* groupIds = nullptr;
  int64_t groupAlign = 0;
  bool bGrouped = false;
  // A ragged tile loop (gemm_ragged.cpp, tile.for_tiles {ragged = M}): its bounds tensor, and
  // whether it holds offsets (groups of rows of A and C, B's matrix picked by the group: the loop's
  // leading index is then the group value, not a batch) or counts (DeepGEMM's masked layout: A, B
  // and C batched by the group, each group's rows its count).
  const ir::Value* raggedBounds = nullptr;
  bool raggedOffsets = false;
  // Groups along K (tile.for_tiles {ragged = K}, the weight gradient): group g's K range is
  // [offsets[g-1], offsets[g]); A and B are not batched, C (and the epilogue) is, by the group,
  // which stays the loop's batch (dimBatch, batchArg).
  bool raggedK = false;
  std::string dimGroups;  // the groups' dim (G)
  // tile.dot_scaled (gemm_scales.cpp): the loads of A's and B's block scales, each indexed as its
  // operand's load, and the width of the K slices they scale (0: a plain tile.dot).
  const ir::Operation* loadScaleA = nullptr;
  const ir::Operation* loadScaleB = nullptr;
  int64_t blockK = 0;
  double accInit = 0.0;
  // Ops of the for_tiles body after the reduce, in order, excluding the final tile.yield.
  std::vector<const ir::Operation*> epilogue;
  // The kernel's parameters, in launch order: tensor arguments, then scalars, then dims.
  struct Param {
    std::string name;
    const ir::Operation* decl = nullptr;  // tile.input/output/scalar; null for a dim
    ir::Type type;                        // the kern type: ptr<e>, a scalar, or i32 for a dim
  };
  std::vector<Param> params;
};

// The checks and fields of a ragged tile loop (gemm_ragged.cpp), once the loop's dims are known:
// false after a diagnostic.
bool analyzeRagged(GemmProgram& g, const std::string& strategy, ir::DiagnosticEngine& diag);
// What a config lacks to walk ragged groups (sm90/ragged_walk.cpp): "" when it can, else the
// options it needs and why ("cluster_m=1 cluster_n=1: ..."). Groups of rows take stream_k, groups
// along K (alongK) neither split.
std::string raggedWalkConflict(const Config& c, bool alongK = false);
// The tile loop's coord arguments of M and N: its last two (after a batch or group index).
inline const ir::Value* coordArgM(const GemmProgram& g) {
  return g.forTiles->body().argument(g.forTiles->body().numArguments() - 2);
}
inline const ir::Value* coordArgN(const GemmProgram& g) {
  return g.forTiles->body().argument(g.forTiles->body().numArguments() - 1);
}
// The checks and fields of a tile.dot_scaled K loop (gemm_scales.cpp): false after a diagnostic.
bool analyzeScaledDot(GemmProgram& g, const std::string& strategy, ir::DiagnosticEngine& diag);

// Returns nullopt after reporting why the program is not a GEMM this strategy can lower.
std::optional<GemmProgram> analyzeGemm(const ir::Operation& program, const std::string& strategy,
                                       ir::DiagnosticEngine& diag);

// Row-major means the last axis is contiguous (no order, or the reversed axis list). For a batched
// [Bt, rows, cols] tensor the batch axis must be the slowest.
bool isRowMajor2d(const ir::Type& tensor);
// The same for the matrix of a rank-2, or batched rank-3, tensor: its last two axes.
bool isRowMajorMatrix(const ir::Type& tensor);
bool isColMajorMatrix(const ir::Type& tensor);  // the second-to-last axis contiguous

// Which of a matrix operand's two matrix axes (0: rows, 1: columns of its last two axes) is
// contiguous, for a rank-2 tensor or a rank-3 one with the batch / group axis first; nullopt when
// the layout puts the batch axis inside a matrix (dense with another order, or strided with the
// unit stride on it).
std::optional<int> contiguousMatrixAxis(const ir::Type& tensor);
// The access of a matrix operand whose contiguousMatrixAxis is known: its leading dimension (dense:
// the contiguous axis's extent; strided: the other matrix axis's stride) and its matrix stride.
GemmProgram::Access matrixAccess(const ir::Type& tensor);

}  // namespace kiln
