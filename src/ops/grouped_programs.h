#pragma once
// Ragged grouped GEMMs (MoE), written once with the DSL (tile_ops.h, "Ragged groups";
// docs/grouped-gemm.md), for the benchmarks, the tests and the Python ops:
//  * Layout::Offsets, groups along M (MoE forward, torch._grouped_mm's 2D x 3D case):
//      C[offs[g-1]:offs[g], :] = A[offs[g-1]:offs[g], :] · B[g]
//    A [M, K] (K contiguous), B [G, K, N] stored K-major ([G][N][K], torch's mat_b.transpose(-2, -1)
//    of a contiguous [G, N, K]), offsets i32 [G] (cumulative ends), C [M, N]. Rows past
//    offs[G-1] are not written.
//  * Layout::Masked, DeepGEMM's masked layout for CUDA graphs: A [G, M, K], B [G, K, N] K-major,
//    counts i32 [G], C [G, M, N]: C[g, :counts[g]] = A[g, :counts[g]] · B[g]; rows past a group's
//    count are not written.
//  * Layout::GroupsAlongK, the weight gradient (torch._grouped_mm's 2D x 2D case):
//      C[g] = A[:, offs[g-1]:offs[g]] · B[offs[g-1]:offs[g], :]
//    BF16: A [M, K] with M contiguous (order [0, 1]: x.t() of activations x [K, M] row-major) and
//    B [K, N] row-major (gradients); FP8: both K-major (A [M][K], B [N][K]). offsets i32 [G],
//    C f32 [G, M, N]; an empty group gives zeros.
// Operands are bf16, or FP8 with DeepSeek-V3's block scales (fp8_programs.h): groups along M take
// scale_a [M, K] in blocks of [1, 128] (stored [ceil(K/128)][M]) and scale_b [G, K, N] in blocks
// of [1, 128, 128] (stored [G][ceil(N/128)][ceil(K/128)]); the masked layout scale_a [G, M, K]
// ([G][ceil(K/128)][M]); groups along K take 1x128 x 1x128 (scale_a [M, K] blocks [1, 128],
// scale_b [K, N] blocks [128, 1]).
// The arguments are (A, B, [scale_a, scale_b,] offsets or counts, C) and the dims G, M, N, K.
#include <memory>
#include <string>

#include "kiln/ir/operation.h"

namespace kiln::ops {

struct GroupedGemmSpec {
  enum class Layout { Offsets, Masked, GroupsAlongK };
  Layout layout = Layout::Offsets;
  ir::ScalarType operands = ir::ScalarType::BF16;  // bf16, or f8e4m3 with block scales
  ir::ScalarType out = ir::ScalarType::BF16;       // bf16 or f32 (GroupsAlongK: f32)
};

std::unique_ptr<ir::Module> groupedGemmProgram(const GroupedGemmSpec& spec, const std::string& name);

}  // namespace kiln::ops
