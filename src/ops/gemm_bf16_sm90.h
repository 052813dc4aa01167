#pragma once
// The Hopper part of the gemm_bf16 family: sm90_ws_persistent schedules (TMA + mbarrier ring,
// warp-specialized producer / wgmma consumers, persistent tile loop; docs/sm90-strategy.md).
//
// Variants "bf16_gemm_sm90_<bm>x<bn>x64_s<stages>" (table in gemm_bf16_sm90.cpp): 128x128, 128x256
// and 256x128 with two consumer warpgroups (setmaxnreg 40 / 232), 64x64, 64x128 and 64x256 with
// one (small M), and 128x64; and "_tma" twins of 128x128, 128x256 and 256x128 whose epilogue
// stages the output tile in shared memory and stores it with TMA (epilogue=tma; fewer stages).
//  * eligible: the target has wgmma + TMA (sm_90a); bf16 in and out; A and C row-major; K % 8 == 0
//    and N % 8 == 0 (16-byte global strides for TMA, for either B layout); shared memory fits.
//  * preference (higher is better), the sm80 heuristic's shape terms times 2 (wgmma's rate is twice
//    mma.sync's, so on sm_90a a Hopper schedule beats any sm80 one):
//      2 * useful * waves * intensity
//    with useful and waves as in gemm_bf16.h (SMs = the target's reference count; a persistent
//    kernel still finishes with a partial wave when tiles % SMs != 0) and intensity = (bm bn / (bm
//    + bn)) / 64. The result: the biggest tile that still fills the machine; 64-row tiles for
//    small M, where filling the SMs (waves) is what counts. A "_tma" twin scores the same as its
//    direct-store variant and comes later in the table, so the heuristic keeps the direct store
//    until measurements say otherwise (force the twin by name to use it).
#include "ops/gemm_bf16.h"
