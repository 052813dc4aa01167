#pragma once
// The rowwise strategy: a memory-bound tile program (elementwise math, reductions along a row and
// their fusions; schedule/rowwise/row_program.h draws the shape) to one kern.kernel for sm_80 and
// later (docs/rowwise-strategy.md).
//
// The kernel walks row groups: block b takes rows_per_block rows at a time, row group b, then
// b + gridDim.x, ... (one iteration per block unless blocks_per_sm makes the grid persistent).
// Each row is shared by row_threads threads. When the row fits on chip (its length at most
// row_threads * vectors * V, a test made per launch) every thread reads its vectors of the row
// once, with 16-byte loads, keeps them in registers through the program's passes and writes the
// results once: one pass over global memory. A longer row is read once per pass, `vectors`
// vectors per thread and step; the online softmax form keeps that to two reads for softmax and
// one for cross-entropy.
//
// Launch contract (kiln/compile.h; also the kern.kernel's attributes):
//  * parameters: the tensor arguments in declaration order, the f32 / i32 scalars, the dims;
//  * block: block_threads threads; dynamic shared memory: 4 bytes per partial per warp (padded to
//    128-byte rows) when a row spans several warps, else none;
//  * grid: ceil(R / rows_per_block) blocks along x, persistent (at most blocks_per_sm per SM) when
//    blocks_per_sm > 0;
//  * requirements: with 16-byte vectors, the row length C a multiple of V = 16 / (the narrowest
//    row element's bytes), so every row starts 16-byte aligned; tensors 16-byte aligned (their
//    element size with scalar=true).
#include <memory>

#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"
#include "schedule/config.h"
#include "target/target.h"

namespace kiln {

// Lowers one tile.program; nullptr after diagnostics.
std::unique_ptr<ir::Operation> lowerRowwise(const ir::Operation& program, const Target& target, const Config& config,
                                            ir::DiagnosticEngine& diag);

// The pass (`lower-rowwise`): every tile.program of the module becomes a kern.kernel; the program's
// optional {target, config} attributes choose the target and the schedule.
bool lowerRowwisePass(ir::Module& m, ir::DiagnosticEngine& diag);

}  // namespace kiln
