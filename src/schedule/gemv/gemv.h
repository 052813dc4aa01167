#pragma once
// The gemv strategy: a GEMM whose M is small (M <= 16; M = 1 is a GEMV) is bound by reading B, the
// K x N weight matrix, once. This strategy streams B exactly once with 16-byte loads, several in
// flight per thread before any is used, reads the tiny A through L1, sums in f32 on the CUDA cores
// and reduces the partial sums on chip, deterministically (docs/gemv-strategy.md).
//
// A block computes rows m0 .. m0 + bm of M and columns n0 .. n0 + bn of N, over the whole of K:
//
//   B row-major [K][N] ("N" path): a thread owns V = align_b / element-bytes consecutive columns
//     (8 bf16: one 16-byte load), bn / V threads side by side cover the block's columns and the
//     block_threads / (bn / V) rows of threads split K: in each step a thread loads `vectors` rows
//     of B, k = kb + ko + u * (block_threads / (bn / V)), then A(m, k) for m < bm, then the FMAs.
//     Partial sums: butterfly shuffles over a warp's rows of threads, then one slot per warp in
//     shared memory, summed in warp order.
//   B K-major [N][K] ("K" path, every output column a contiguous dot product): row_threads lanes
//     stride K with V-element loads (a warp reads 32 x 16 bytes of one N row), each group of
//     row_threads lanes owns bn / (block_threads / row_threads) N rows; A(m, k .. k + V) is one
//     vector load when A is row-major and aligned; a column-major A's bm rows of each k are loaded
//     along M, VM at a time (as wide as align_a), else by elements. Partial sums: butterfly
//     shuffles over the group's lanes.
//
// Then the sums, one per (m, n) of the block, are in shared memory, and the sm80 epilogue (the
// program's elementwise tail, masked stores) runs on them in the m16n8 fragment layout, a warp per
// 8-column slice: bias, activations, casts, strided and batched outputs as the GEMM strategies do.
//
// Launch contract (kiln/compile.h; also the kern.kernel's attributes):
//  * parameters: the tensor arguments in declaration order, the f32 / i32 scalars, the dims;
//  * block: block_threads threads; dynamic shared memory: 4 bytes per (m, n) of the block, times
//    the warps on the N path;
//  * grid: [ceil(N / bn), ceil(M / bm), batches]; with split_k=S one axis, S x ceil(N / bn) x
//    ceil(M / bm) x batches blocks, and the runtime's split-K workspace (ws_flags, ws_partials after
//    the tensor arguments; kern_ops.h "Split-K"): each block sums a slice of K, the last of a tile's
//    S to arrive sums their partials in slice order and runs the epilogue (gemv_split.cpp);
//  * requirements: A's and B's pointers and rows aligned to the widest access the kernel makes to
//    them (align_a, align_b, as sm80_multistage; a column-major A's rows run along M, so M a
//    multiple of its loads' VM rows), B's contiguous dim a multiple of V (not N for a
//    strided row-major B: the block over N's end loads its columns by elements), the output's
//    as the sm80 epilogue needs (align_c).
//
// split_k kernels carry .maxnreg (max_regs), so ptxas issues a step's loads before its FMAs on sm_90a.
//
// Refused, each with a sentence (tests/lit/schedule/invalid_gemv.kiln): FP8 operands, grouped and
// ragged loops, block-scaled dots, and configs whose threads do not tile the block.
#include <memory>

#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"
#include "kiln/target.h"
#include "schedule/config.h"

namespace kiln {

// Lowers one tile.program; nullptr after diagnostics.
std::unique_ptr<ir::Operation> lowerGemv(const ir::Operation& program, const Target& target, const Config& config,
                                         ir::DiagnosticEngine& diag);

// The pass (`lower-gemv`): every tile.program of the module becomes a kern.kernel; the program's
// optional {target, config} attributes choose the target and the schedule.
bool lowerGemvPass(ir::Module& m, ir::DiagnosticEngine& diag);

}  // namespace kiln
