#pragma once
// The Hopper part of the gemm_bf16 family: sm90_ws_persistent schedules (TMA + mbarrier ring,
// warp-specialized producer / wgmma consumers, persistent tile loop; docs/sm90-strategy.md).
//
// Variants "bf16_gemm_sm90_<bm>x<bn>x64_s<stages>[_tma][_pp][_c2]" (table in gemm_bf16_sm90.cpp):
// 128x128, 128x256, 256x128 and 128x64 with two consumer warpgroups (setmaxnreg 40 / 232); 64x64,
// 64x128 and 64x256 with one, and deep-ring 64x64 s13 / 64x128 s9 for memory-bound small M; "_tma"
// stores the output through shared memory with TMA (epilogue=tma), "_pp" alternates whole tiles
// between the consumer warpgroups (consumers=pingpong), "_c2" runs clusters of two with B
// multicast (cluster_m=2).
//  * eligible: the problem checks every variant makes (commonEligible), then: the target has wgmma
//    + TMA (sm_90a); N % 8 == 0 (16-byte global strides for TMA, for either B layout); shared
//    memory fits.
//  * preference (higher is better): the sm80 heuristic's tile shape terms (tileShapeScore: useful
//    * waves * intensity) times 2 (wgmma's rate is twice mma.sync's, so on sm_90a a Hopper schedule
//    beats any sm80 one), times factors measured on the H200 (docs/perf-notes.md): 0.97 for the
//    direct store against the TMA store, 0.97 for a ring shallower than the deepest registered for
//    the same tile, 0.99 for clusters (their twins win until the cluster build is measured), and a
//    tie-break of at most 2% for bytes in flight. The result is the fastest measured variant on
//    every BENCH.md shape (a unit test against the recorded run).
#include "ops/gemm_bf16.h"
