#pragma once
// The Hopper part of the gemm_bf16 family: sm90_ws_persistent schedules (TMA + mbarrier ring,
// warp-specialized producer / wgmma consumers, persistent tile loop; docs/sm90-strategy.md).
//
// Variants "bf16_gemm_sm90_<bm>x<bn>x64_s<stages>[_tma][_pp][_c2][_cn2][_stsm][_sk<S>][_rs][_g<G>]
// [_streamk1][_1slot][_swap]" (table in gemm_bf16_sm90_table.cpp, preference in
// gemm_bf16_sm90.cpp): 128x128, 128x192, 128x256, 256x128 and 128x64 with two consumer warpgroups
// (setmaxnreg 40 / 232); 192x192 with three (40 / 152); 64x64, 64x128 and 64x256 with one, and
// deep-ring 64x64 s13 / 64x128 s9 for memory-bound small M. "_tma" stores the output through shared
// memory with TMA (epilogue=tma); "_pp" alternates whole tiles between the consumer warpgroups
// (consumers=pingpong); "_c2" runs clusters of two with B multicast (cluster_m=2: 128x256, 128x192,
// 192x192 and 128x128 ping-pong for the large shapes, where B's rows off 32-byte sectors slow the
// lone tile, 64x128 s8 for M = 128, where the pair reads B once and streams it); "_cn2" clusters of
// two along N with A multicast (cluster_n=2: 128x256, 128x192 and 192x192, where A's rows are off
// sectors); "_c2_cn2" clusters of 2 x 2 sharing both (128x256, where both operands' rows are off
// sectors); "_stsm" stages the output with stmatrix (stage_store=stmatrix); "_sk<S>" computes each
// tile's K in S slices on separate blocks and sums them through the runtime's workspace (split_k=S:
// 128x128 s6 tma for M = 128, 64x64 s13 for few-tile memory-bound shapes); "_rs" stages the boxes
// past the two slots in the ring stage the tile read last (reuse_stage=true); "_g<G>" walks groups
// of G tile rows (group_m=G; 8 otherwise); "_streamk1" shares the last partial wave's K steps out
// over all SMs (stream_k=1: 128x256 and 128x192 s4 tma, alone and in pairs, for compute-bound
// shapes whose tiles quantize badly into waves; it loses to its twin where the waves fill);
// "_1slot" stages the output in one slot per warpgroup, which leaves 192x192 room for a fourth
// stage (store_slots=1); "_swap" computes the tile transposed, its rows as wgmma's N, staged by
// stmatrix .trans (swap_ab=true: 208x128, 224x128 and 240x128 two warpgroups, for the shapes whose
// M those heights fit); "_row" walks the tiles row by row (raster=row), stored from registers,
// without clusters (the ragged walk's first measured form). Every variant without a cluster or
// split-K walks ragged groups of rows (GemmProblem::ragged, MoE), the stream-K ones included. Every variant loads a read-once operand L2 evict_first (l2_hint=reuse)
// through 128-byte L2 fills.
//  * eligible: the problem checks every variant makes (commonEligible), then: the target has wgmma
//    + TMA (sm_90a); A's and B's rows 16-byte aligned (a dense A's K or M, B's K or N, or their
//    leading dimensions: TMA's global strides), no stride 0; a column-major A, or an output whose
//    rows are not 16-byte aligned, only without swap_ab (configFor gives the latter the direct
//    epilogue); shared memory fits.
//  * preference (higher is better): the sm80 heuristic's tile shape terms (tileShapeScore: useful
//    * waves * intensity) times 2 (wgmma's rate is twice mma.sync's, so on sm_90a a Hopper schedule
//    beats any sm80 one), times 0.97 for row raster (unmeasured: the "_row" variants stay
//    behind their grouped-raster twins), times factors measured on the H200
//    (docs/performance.md): 0.97 for the
//    direct store against the TMA store, 0.97 for a ring shallower than the deepest registered for
//    the same tile, 0.99 for clusters (times the share of their sub-tiles inside M x N, and with
//    their waves counted as cluster tiles on SMs / cluster size slots; a cluster gains only
//    through what it lets stream or share, counted below) and 0.98 for stmatrix
//    staging (which does not beat its twin; a swapped tile counts only that), a tie-break of at most 2% for bytes in flight; and for memory-bound problems (fewer flops per
//    byte than the H200's balance) one wave counts the blocks streaming (coverage: the square root
//    of their share of the SMs, linear below the ~37.5% that keep DRAM busy), more waves the
//    last wave's fill; a variant that streams an operand evict_first for the
//    problem gets 1.1 and drops its tile-intensity term (it reads the bulk from DRAM once, whatever
//    its tile), as (without the 1.1) does one whose bulk operand at most two tiles re-read; a
//    cluster that does not stream but shares the bulk operand counts the intensity of the
//    cluster's tile where that tile lies within M x N (it reads L2 as one such tile would), and one
//    that shares the small operand 0.97; a split_k=S variant counts 0.5 past one wave;
//    compute-bound, K steps / (K steps / S + 10) (the hand-over costs ~10 K steps); memory-bound,
//    0.93 for the hand-over times the coverage of its units over its tiles' (of a streamer: up to
//    the saturation, scaled by the small operand's box bytes over the streamed one's); stream_k=1
//    compute-bound replaces the last-wave fill with tiles / SMs over tiles / SMs + 20 / K steps
//    (cluster tiles over cluster slots in clusters), times 0.97 (0.9 memory-bound); compute-bound,
//    the square root of the tile's intensity instead of the intensity itself, 0.8 for a
//    variant that does not share B where B's rows are off 32-byte sectors and 1 - 0.25 x A's share
//    of the tile's rows (bm / (bm + bn)) for one that does not share A where A's are; 0.9 for three
//    consumer warpgroups; 1.01 for
//    reuse_stage; between twins that differ only in group_m, the smaller footprint of the first
//    wave of tiles (the operand bytes it reads), ties to group_m 8; groups along K (the weight
//    gradient), the units' waves and each tile's busy share, steps / (steps + zeroing + the store
//    cooperative consumers leave exposed; ping-pong, measured slower there, adds to it)
//    (kGroupedTerm: its group's K steps are few). Against the recorded H200 runs
//    it was fitted on (30 shapes) every pick is within 5% of the fastest registered variant
//    measured (a unit test); on 180 more shape runs whose pick was timed
//    (bench/results/2026-11-30-h200-unseen/, -tile-192/, -three-warpgroups/, -narrow-tiles/ and
//    -swap-ab/, each measured after the change it checked; 296 by 5a07409) the picks
//    are at 0.984 of it in geometric mean, the worst 0.85 (another unit test: 0.80 and 0.95).
#include "ops/gemm_bf16.h"
