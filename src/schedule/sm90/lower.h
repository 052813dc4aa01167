#pragma once
// The sm90_ws_persistent strategy: a GEMM-family tile program to one warp-specialized, persistent
// kern.kernel for sm_90a. One producer warpgroup (one elected thread) streams A and B tiles with TMA
// into a ring of `stages` shared-memory stages guarded by full/empty mbarriers; one to three consumer
// warpgroups (warps_m along the tile's rows, and with swap_ab warps_n along its columns) multiply
// them with wgmma.mma_async m64nNk16 straight from shared memory and run the fused elementwise
// epilogue from registers (shared with sm80: sm80_epilogue.cpp). A grid of at most one CTA per SM
// walks the output tiles (kern.tile_loop; raster and group_m from the Config). Design notes:
// docs/sm90-strategy.md.
//
// Launch contract of the kernel it produces (carried as kernel attributes and returned by
// kiln::compile as data):
//  * parameters: the program's tensor arguments in declaration order (64-bit global addresses),
//    then one tensor map per operand (A, then B: 128-byte CUtensorMaps by value, 128B swizzle, zero
//    fill; box 64 x bm for A, 64 x bn for K-major B, 64 x 64 for row-major B, a third box dim of 1
//    when batched), then f32/i32 scalars, then dims (s32) in the program's dims order;
//  * block: 128 * (1 + warps_m * warps_n) threads; dynamic shared memory: stages * (bm + bn) * 128 bytes of
//    operand stages plus 16 * stages bytes of mbarriers (opt-in attribute above 48 KB);
//  * grid: (min(tiles, SMs), 1, 1) with tiles = ceil(M/bm) * ceil(N/bn) * batches ("persistent");
//    with cluster_m=2, clusters of (2, 1, 1) blocks (.reqnctapercluster) and 2 * min(pairs, SMs / 2)
//    blocks, pairs = ceil(M / 2bm) * ceil(N/bn) * batches; B's box is then half of the B stage
//    (64 x bn/2 K-major, 64 x bk/2 row-major);
//  * requirements: K % 8 == 0 and N % 8 == 0 (16-byte global strides for TMA; N even for the
//    paired output stores); A and B 16-byte aligned; C aligned to two elements.
#include <memory>

#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"
#include "kiln/target.h"
#include "schedule/config.h"

namespace kiln {

// Lowers one tile.program; nullptr after diagnostics.
std::unique_ptr<ir::Operation> lowerSm90WsPersistent(const ir::Operation& program, const Target& target,
                                                     const Config& config, ir::DiagnosticEngine& diag);

// The pass (`lower-sm90-ws-persistent`): every tile.program of the module becomes a kern.kernel;
// the program's optional {target, config} attributes choose the target and the schedule.
bool lowerSm90WsPersistentPass(ir::Module& m, ir::DiagnosticEngine& diag);

}  // namespace kiln
