// The sm90 variants of gemm_bf16: the table of registered shapes and their eligibility (contract
// in gemm_bf16_sm90.h; their preference is in gemm_bf16_sm90.cpp).
#include "ops/gemm_bf16_sm90.h"

#include <fmt/format.h>

#include "ops/gemm_bf16.h"

namespace kiln::ops {

namespace {

struct Sm90Shape {
  int bm, bn, consumers, stages;
  bool tmaStore = false;
  bool pingpong = false;  // each consumer warpgroup owns whole bm x bn tiles, in turn
  int clusterM = 1;       // 2: pairs of CTAs along M share the B tile through TMA multicast
  bool stmatrix = false;  // the staged epilogue writes shared memory with stmatrix (stage_store)
  int splitK = 1;         // K slices of each tile on separate blocks (split_k)
  bool reuseStage = false;  // boxes past the two staging slots go to the ring stage read last (reuse_stage)
  int groupM = 8;           // raster=grouped: rows of tiles per group
  int clusterN = 1;         // 2: pairs of CTAs along N share the A tile through TMA multicast (not
                            // for 64x64 s13, whose pairs lost to the lone tile once 128-byte fills
                            // let it stream B; bench/results/2026-11-30-h200-stream-fill/)
  int streamK = 0;          // 1: the last partial wave's K steps shared out over all SMs (stream_k)
  int storeSlots = 0;       // 1: one output staging slot per warpgroup (store_slots), a ring stage more
  bool swapAB = false;      // the tile computed transposed, its rows as wgmma's N (swap_ab; stmatrix staging)
  int warpsN = 1;           // swap_ab: consumer warpgroups along N (warps_n), each one wgmma of the tile's height
  int storePieces = 0;      // swap_ab: each staged box stored in this many row pieces (store_pieces)
};
// Stages: as many as fit in 227 KB (stage = (bm + bn) * 128 bytes, plus with the TMA-store
// epilogue two 64-column slots of output staging per consumer row: bm x 256 bytes, twice that with
// ping-pong, where each warpgroup stages a whole tile's rows).
// The 64-row variants read a memory-bound operand; their deep rings (13 and 9 stages, 208 and 216
// KB) keep more bytes in flight per SM.
constexpr Sm90Shape kSm90Shapes[] = {
    {128, 128, 2, 6},       {128, 256, 2, 4},       {256, 128, 2, 4},        {128, 64, 2, 8},
    {64, 64, 1, 8},         {64, 128, 1, 8},        {64, 256, 1, 5},         {128, 128, 2, 6, true},
    {128, 256, 2, 4, true}, {256, 128, 2, 3, true}, {64, 64, 1, 13},         {64, 128, 1, 9},
    {128, 128, 2, 5, true, true}, {128, 128, 2, 7, false, true}, {64, 256, 2, 4, true, true},
    {128, 256, 2, 4, true, false, 2}, {128, 128, 2, 5, true, true, 2}, {128, 256, 2, 4, true, false, 1, true},
    {128, 128, 2, 6, true, false, 1, false, 2},
    {128, 256, 2, 4, true, false, 1, false, 1, true}, {128, 256, 2, 4, true, false, 1, false, 1, true, 16},
    {64, 128, 1, 8, true, false, 2},
    // Few-tile memory-bound shapes: 64x64 s13 in two K slices keeps twice the SMs streaming
    // (bench/results/2026-11-30-h200-few-tiles/few_tiles*: +15% to +40% below ~46 tiles).
    {64, 64, 1, 13, false, false, 1, false, 2},
    // The lone 64x64 tile with the TMA-store epilogue (221 KB): whole 128-byte lines written by one
    // bulk store instead of each thread's pairs, 2% faster than 64x64 s13 where each block has
    // several N = 64 tiles (bench/results/2026-11-30-h200-stream-k-tma-store/pingpong_*).
    {64, 64, 1, 13, true},
    // Compute-bound shapes whose tiles quantize badly into waves (a partial last wave, or fewer
    // tiles than SMs with a long K): 128x256 with the last wave's K steps shared out (stream_k=1;
    // bench/results/2026-11-30-h200-unseen/waves_*: +10% to +43% over its twin there).
    {128, 256, 2, 4, true, false, 1, false, 1, false, 8, 1, 1},
    // 128x192: a third more tiles than 128x256, where those fill the last wave better (3072^3: 384
    // tiles, 2.9 waves, 0.98x cuBLAS where 128x256's 2.2 waves run 0.77x; 1024x3072x3072 1.00x
    // against 0.84x), alone, in pairs along M sharing B (whose rows off 32-byte sectors cost the
    // lone tile 20%: 3072x3000x3072 0.97x against 0.79x), and with stream-K (1536x1536x6144 0.92x);
    // bench/results/2026-11-30-h200-tile-192/tiles.*. cuBLAS runs 192x192 tiles there.
    {128, 192, 2, 4, true},
    {128, 192, 2, 4, true, false, 2},
    {128, 192, 2, 4, true, false, 1, false, 1, false, 8, 1, 1},
    // Stream-K in pairs along M: stream-K's wave fill where B's rows off sectors make the lone tile
    // slow (pitchTerm): 2000x5000x8192 0.95x cuBLAS against the pair's 0.84x, 1472x8840x2664 0.90x
    // against 0.85x (bench/results/2026-11-30-h200-tile-192/sk_cluster.*).
    {128, 256, 2, 4, true, false, 2, false, 1, false, 8, 1, 1},
    {128, 192, 2, 4, true, false, 2, false, 1, false, 8, 1, 1},
    // 192-row tiles, three consumer warpgroups of 64 rows (warps_m=3, 152 registers each): what
    // cuBLAS runs at the mid-size shapes where 128x256 and 128x192 leave a wave part-empty (3000^3:
    // nvjet 192x192 in pairs, bench/results/2026-11-30-h200-tile-192/README.md). 192x192 holds
    // 96 accumulators per thread. With three stages and two staging slots (192 KB) it ran ~5% behind
    // 128x256 per SM-wave alone (8192^3 0.965x cuBLAS against 1.012x) and was the fastest nowhere;
    // in pairs along M it was at 3000^3 (0.88x against 0.82x), in pairs along N at 8798x1376x5560
    // (0.96x against 0.83x; bench/results/2026-11-30-h200-three-warpgroups/tile192.*, a_pitch.*).
    // ncu then had its three-stage ring run dry (ncu_192.txt): with four stages and one staging slot
    // (221 KB) the pairs are 1-4% faster at 14 of 16 shape-pairs measured (slot1.*: 3000^3 0.91x,
    // 3072x1536x8192 0.99x, 8798x1376x5560 along N 0.98x), and replace the three-stage ones.
    {192, 192, 3, 4, true, false, 2, false, 1, false, 8, 1, 0, 1},
    {192, 192, 3, 4, true, false, 1, false, 1, false, 8, 2, 0, 1},
    // Pairs along N sharing A through multicast: where A's rows are off 32-byte sectors (K * 2 bytes
    // not a multiple of 32) the lone tile's A loads cost what B's do in pitchTerm, and the pair loads
    // each A box once for both CTAs (5457x1072x6696: 128x192 0.98x cuBLAS in pairs along N, 0.76x
    // alone, 0.82x in pairs along M; a_pitch.* in the same directory).
    {128, 256, 2, 4, true, false, 1, false, 1, false, 8, 2},
    {128, 192, 2, 4, true, false, 1, false, 1, false, 8, 2},
    // 2 x 2 clusters sharing A along their rows and B along their columns: where both operands'
    // rows are off 32-byte sectors, what a pair saves on one operand it saves on both (5000^3: 0.93x
    // cuBLAS in 2 x 2, 0.80x in pairs along M; 3839x2840x2376 0.92x against 0.80x;
    // bench/results/2026-11-30-h200-narrow-tiles/square.*). Elsewhere the handshakes of four blocks
    // cost 8-16% (8192^3 0.91x against 1.00x): pitchTerm. 192x192 in 2 x 2 is not registered: the
    // fastest at 6968x6456x7384 (0.93x), but 0.71x at 3000^3 (its 64 cluster tiles take three rounds
    // of the 30 clusters of four the H200 runs) and 0.83x at 5000^3 against 128x256's 0.93x.
    {128, 256, 2, 4, true, false, 2, false, 1, false, 8, 2},
    // Swapped operands (swap_ab): each warpgroup's rows are wgmma's N, so tile heights come in
    // eights, not in 64s: 208, 224 and 240 rows, where M divides into them better than into 128 or
    // 256 (1300x11008x4096: 224x128 1.01x cuBLAS, the best unswapped 0.94x; 9000x3072x3072 208x128
    // 1.02x against 1.00x; bench/results/2026-11-30-h200-swap-ab/swap_sweep2.*). A swapped tile runs
    // at the speed of its wgmma shape: two m64n1xx per warpgroup, like unswapped 256x128 (swap_twin.*).
    // They split their warpgroups along N (warps_n=2, as cuBLAS's 208-row kernel does): one
    // m64n208 (m64n224, m64n240) each instead of two of half the height, 1% faster at 208 rows and
    // the same staging (bench/results/2026-11-30-h200-coop-swap/cols_*). 224 and 240 rows stage each
    // box in two row pieces through one slot (store_pieces=2), which keeps four stages: 1-3% ahead
    // of the split along M where 224x128 is picked, 0.8% over 29 shapes at 240 (pieces.*).
    {208, 128, 2, 4, true, false, 1, false, 1, false, 8, 1, 0, 0, true, 2},
    {224, 128, 2, 4, true, false, 1, false, 1, false, 8, 1, 0, 1, true, 2, 2},
    {240, 128, 2, 4, true, false, 1, false, 1, false, 8, 1, 0, 1, true, 2, 2},
    // 160x256, split along N: two m64n160 per warpgroup, 160 accumulators, three stages and one
    // staging slot (201 KB); cuBLAS's 256x160 kernel in its terms. A fifth more intensity than
    // 128x256, and tiles 160 rows tall: the fastest measured at 11 of 68 shape runs, by up to 5%
    // where M divides into 160s (3200^3 0.98x cuBLAS against 0.93x; 7800x4096x4096 0.99x against
    // 0.95x; 2560x4096x512 1.01x against 0.97x), 1-3% behind 128x256 where both fill their waves.
    {160, 256, 2, 3, true, false, 1, false, 1, false, 8, 1, 0, 1, true, 2},
};

}  // namespace

std::vector<GemmVariant> gemmBf16Sm90Variants() {
  std::vector<GemmVariant> t;
  for (const Sm90Shape& s : kSm90Shapes) {
    GemmVariant v;
    v.name = fmt::format("bf16_gemm_sm90_{}x{}x64_s{}{}{}{}{}{}{}{}{}{}{}{}{}{}", s.bm, s.bn, s.stages, s.tmaStore ? "_tma" : "",
                         s.pingpong ? "_pp" : "", s.clusterM > 1 ? fmt::format("_c{}", s.clusterM) : "",
                         s.clusterN > 1 ? fmt::format("_cn{}", s.clusterN) : "", s.stmatrix && !s.swapAB ? "_stsm" : "",
                         s.splitK > 1 ? fmt::format("_sk{}", s.splitK) : "", s.reuseStage ? "_rs" : "",
                         s.groupM != 8 ? fmt::format("_g{}", s.groupM) : "",
                         s.streamK ? fmt::format("_streamk{}", s.streamK) : "", s.storeSlots == 1 ? "_1slot" : "",
                         s.swapAB ? "_swap" : "", s.warpsN > 1 ? fmt::format("_wn{}", s.warpsN) : "",
                         s.storePieces > 1 ? fmt::format("_p{}", s.storePieces) : "");
    v.config.strategy = "sm90_ws_persistent";
    v.config.bm = s.bm;
    v.config.bn = s.bn;
    v.config.bk = 64;
    v.config.stages = s.stages;
    v.config.warpsM = s.consumers / s.warpsN;
    v.config.warpsN = s.warpsN;
    v.config.raster = Raster::Grouped;
    v.config.groupM = s.groupM;
    if (s.tmaStore) v.config.epilogue = EpilogueStore::Tma;
    if (s.pingpong) v.config.consumers = Consumers::Pingpong;
    v.config.clusterM = s.clusterM;
    v.config.clusterN = s.clusterN;
    v.config.l2Hint = L2Hint::Reuse;
    if (s.stmatrix || s.swapAB) v.config.stageStore = StageStore::Stmatrix;
    v.config.swapAB = s.swapAB;
    v.config.splitK = s.splitK;
    v.config.reuseStage = s.reuseStage;
    v.config.streamK = s.streamK;
    v.config.storeSlots = s.storeSlots;
    v.config.storePieces = s.storePieces;
    t.push_back(std::move(v));
  }
  return t;
}

bool sm90Eligible(const GemmVariant& v, const GemmProblem& p, const Target& t, std::string* why) {
  auto no = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return false;
  };
  // The problem checks of every variant (commonEligible) have passed.
  if (!t.wgmma || !t.tma) return no(t.name + " has no wgmma / TMA (the sm90 variants need sm_90a)");
  if (p.n % 8 != 0) return no(fmt::format("N = {} is not a multiple of 8 (16-byte TMA strides)", p.n));
  int64_t smem = sm90Shape(v.config, 2).smemBytes;
  if (smem > t.maxSmemPerBlock)
    return no(fmt::format("needs {} bytes of shared memory; {} allows {}", smem, t.name, t.maxSmemPerBlock));
  return true;
}

}  // namespace kiln::ops
