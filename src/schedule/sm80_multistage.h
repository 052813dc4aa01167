#pragma once
// The sm80_multistage strategy: a GEMM-family tile program to one kern.kernel using mma.sync
// m16n8k16 (bf16/f16) or m16n8k32 (FP8, sm_89+) fed by ldmatrix from a multistage cp.async
// shared-memory ring (sm_80 and newer). Grouped (MoE) programs read one group id per block.
//
// Launch contract of the kernel it produces (also carried as attributes of the kern.kernel and
// returned by kiln::compile as data):
//  * parameters: the program's tensor arguments in declaration order (64-bit global addresses),
//    then its f32/i32 scalar arguments, then its dims (32-bit signed integers), in dims order;
//  * block: warps_m * warps_n * 32 threads (1-D); dynamic shared memory: stages * (bm*bk + bk*bn)
//    * sizeof(elem) bytes (the kernel needs the opt-in attribute when this exceeds 48 KB);
//  * grid: raster=row: (ceil(N / bn), ceil(M / bm), 1); raster=grouped: (ceil(M / bm) * ceil(N /
//    bn), 1, 1);
//  * requirements: K % 8 == 0, K % 16 == 0 for FP8 (rows of A, and of K-major B, are 16-byte
//    aligned); N % 8 == 0 for row-major B; N % 2 == 0 for the paired output stores; A and B
//    16-byte aligned, C aligned to two elements;
//  * grouped: the group id tensor is a parameter like any tensor, G (the group axis of B) a dim;
//    the grid does not change. Each block uses ids[m0]; bm must divide the tile.group_index
//    {align}. An id outside [0, G) reads no B (its rows come out as the epilogue of a zero
//    product) -- the interpreter reports such ids as errors.
#include <memory>

#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"
#include "kiln/target.h"
#include "schedule/config.h"

namespace kiln {

// Lowers one tile.program; nullptr after diagnostics.
std::unique_ptr<ir::Operation> lowerSm80Multistage(const ir::Operation& program, const Target& target,
                                                   const Config& config, ir::DiagnosticEngine& diag);

// The pass (`lower-sm80-multistage`): every tile.program of the module becomes a kern.kernel; the
// program's optional {target, config} attributes choose the target and the schedule.
bool lowerSm80MultistagePass(ir::Module& m, ir::DiagnosticEngine& diag);

}  // namespace kiln
