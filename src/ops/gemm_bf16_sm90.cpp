// The sm90 variants' preference: the heuristic that ranks them (contract in gemm_bf16_sm90.h;
// the table and eligibility are in gemm_bf16_sm90_table.cpp).
#include "ops/gemm_bf16_sm90.h"

#include <algorithm>
#include <cmath>

#include "ops/gemm_bf16.h"
#include "ops/ragged_waves.h"

namespace kiln::ops {

namespace {

// Dense BF16 flops per byte of DRAM traffic at which the H200 is balanced (shared/BENCH.md: 989
// TFLOP/s, ~4.0 TB/s measured copy).
constexpr double kH200FlopsPerByte = 989.0 / 4.0;

// The share of the SMs that, streaming an operand from a deep ring (200+ KB in flight each), keep
// the H200's DRAM busy: past it, more SMs streaming a read-once operand do not read faster
// (sm90Preference's memory and split terms).
constexpr double kStreamingSmsToSaturate = 0.375;
// stream_k=1's extra cost per block, in K steps of 64: the pipeline fill of a run that starts
// inside a tile and the hand-over of its partial sums (fitted on eight shapes of
// bench/results/2026-11-30-h200-unseen/waves_*, where it puts each one on the measured side of
// its data-parallel twin: 1536x1536x6144 +25%, 2560x2560x4096 +10%, 2048^3 -17%, 1000^3 -22%).
constexpr double kStreamKOverheadSteps = 20.0;
// split_k's hand-over of partial sums, in K steps of 64, compute-bound (the same fit for the
// sums of the last slice: 1000^3's 16 K steps in two slices lose 12%, 128 in two gain).
constexpr double kSplitKOverheadSteps = 10.0;

// Groups along K (kGroupedTerm), in the tile's own K steps of 64: the f32 tile's store that a
// cooperative tile does not overlap (GPU run 10, H100: 128x256 s4 tma at the MoE weight gradient,
// ~12 of the ~13 steps a tile takes past its K loop), the zeroing of a group's token tail (~1),
// and what ping-pong adds on top of the store it does not hide (GPU run 11, H100: 128x128 s5 tma
// pp 1.840 ms against 128x256 s4 tma cooperative 1.397 ms at the MoE weight gradient, fitted).
constexpr double kKGroupedStoreSteps = 12.0;
constexpr double kKGroupedZeroSteps = 1.0;
constexpr double kKGroupedPingPongSteps = 5.5;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The share of the slots that n units fill over their waves, `per` slots a wave (1: whole waves).
double waveFill(int64_t n, int64_t per) { return double(n) / double(ceilDiv(n, per) * per); }

// What the persistent loop walks (kern_ops.h): cluster tiles (tiles without clusters), one per
// slot of SMs / cluster size; clusters of four have the target's own count of slots
// (Target::referenceClustersOf4) where it gives one.
struct ClusterWalk {
  int64_t units, slots;
};
ClusterWalk clusterWalk(const Config& c, const GemmProblem& p, int64_t sms, int64_t clustersOf4) {
  int64_t cs = int64_t(c.clusterM) * c.clusterN;
  int64_t slots = cs == 4 && clustersOf4 > 0 ? clustersOf4 : sms / cs;
  return {ceilDiv(p.m, int64_t(c.bm) * c.clusterM) * ceilDiv(p.n, int64_t(c.bn) * c.clusterN),
          std::max<int64_t>(1, slots)};
}

// Tile rows and columns the first wave of tiles (min(tiles, SMs) consecutive tiles of the raster)
// covers, in elements: the operand bytes it reads per K step are proportional. raster=grouped walks
// groups of group_m tile rows column by column, so a wave spans ceil(W / g) columns (at most the
// tile columns) and the rows of as many groups as it wraps through; raster=row walks W tiles along N.
double waveFootprint(const Config& c, const GemmProblem& p, const Target& t) {
  int64_t tm = ceilDiv(p.m, c.bm), tn = ceilDiv(p.n, c.bn);
  int64_t w = std::min(tm * tn, int64_t(std::max(1, t.referenceSms))), rows, cols;
  if (c.raster == Raster::Grouped) {
    int64_t g = std::min<int64_t>(c.groupM, tm);
    cols = std::min(tn, ceilDiv(w, g));
    rows = std::min(tm, g * ceilDiv(w, g * tn));
  } else {
    cols = std::min(tn, w);
    rows = ceilDiv(w, tn);
  }
  return double(rows * c.bm + cols * c.bn);
}

// What the memory, split-K and stream-K terms share: one variant's tiles on one problem.
struct TileWork {
  const Config& c;
  const GemmProblem& p;
  int64_t tiles, sms;
  double saturated;  // blocks streaming that keep DRAM busy (kStreamingSmsToSaturate of the SMs)
  bool memoryBound;  // fewer flops per byte than the H200's balance
  Sm90Streams streams;
  int64_t clustersOf4;  // Target::referenceClustersOf4
  bool streamsAny() const { return streams.a || streams.b; }
  double kSteps() const { return double(ceilDiv(p.k, c.bk)); }
  // In one wave, below the saturation each block streaming counts in full: coverage(n) is the
  // square root of n's share of the SMs times its share of the saturation (linear below it, the
  // square root above).
  double coverage(double n) const { return std::sqrt(n / double(sms) * std::min(1.0, n / saturated)); }
};

double intensity(double bm, double bn) { return bm * bn / (bm + bn); }

// Between twins: the epilogue's store, the ring's depth, clusters' handshakes and padding,
// stmatrix staging, reuse_stage, group_m's first-wave footprint, and bytes in flight.
double twinTerms(const Config& c, const GemmProblem& p, const Target& t) {
  // Between variants of one tile shape (bench/results/2026-11-29-h200-sm90-pp/ and -final/): the TMA-store
  // epilogue beats the direct one on every large shape (it overlaps the global writes with the next
  // tile), and the deepest registered ring wins where the operand stream is memory-bound (64x64
  // s13 over s8 on the small-M shapes, 64x128 s9 over s8).
  double epilogue = c.epilogue == EpilogueStore::Tma ? 1.0 : 0.97;
  int deepest = 0;
  for (const auto& w : gemmBf16Variants()) {
    Config d = w.config;
    d.stages = c.stages;
    if (d == c) deepest = std::max(deepest, w.config.stages);
  }
  double depth = c.stages == deepest ? 1.0 : 0.97;
  // Clusters (cluster_m=2) stay behind their single-CTA twins: with CTA-scope handshakes they run
  // as fast as the twin, not faster (0.95-1.00x of it; bench/results/2026-11-29-h200-hint/c2_bench.json).
  // cluster_n=2 gains where it lets B stream (the memory term's 1.1 below; 64x64 s13 at
  // 64x5120x5120: 21.2 us against 23.3 alone, bench/results/2026-11-30-h200-cluster-n/), and no more.
  // A cluster also computes its sub-tiles past M or N (zero-filled, clipped): their share of the
  // cluster tiles is work no SM needed to do (half at N = 64 with cluster_n=2).
  // And its waves are those of its cluster tiles on SMs / cluster size slots, not those of the
  // sub-tiles on the SMs that tileShapeScore counts (4932x1736x2168: 390 128x192 tiles fill three
  // waves of 132, but their 200 pairs take four of 66).
  double cluster = c.clusterM * c.clusterN > 1 ? 0.99 : 1.0;
  {
    int64_t tiles = ceilDiv(p.m, c.bm) * ceilDiv(p.n, c.bn), sms = std::max(1, t.referenceSms);
    ClusterWalk walk = clusterWalk(c, p, sms, t.referenceClustersOf4);
    cluster *= double(tiles) / double(walk.units * c.clusterM * c.clusterN);
    cluster *= waveFill(walk.units, walk.slots) / waveFill(tiles, sms);
    // Clusters of four leave the SMs out that their slots do not cover (12 of the H200's 132).
    cluster *= std::min(1.0, double(walk.slots * c.clusterM * c.clusterN) / double(sms));
  }
  // stage_store=stmatrix: one stmatrix per 16 x 16 block instead of four st.shared per thread,
  // and yet 1-2% slower than its twin on the long-K shapes, the same on short K
  // (bench/results/2026-11-29-h200-hint/sm90_bench_stmatrix*.json against sm90_bench*.json).
  double stageStore = c.stageStore == StageStore::Stmatrix ? 0.98 : 1.0;
  // reuse_stage: the epilogue stages the boxes past its two slots in the ring stage it read last
  // and so never waits for a TMA store to read a slot: +1.0% geomean over the seven large shapes
  // against its twin, two runs in one call, +2% at K = 1024 (bench/results/2026-11-29-h200-reuse/).
  double reuse = c.reuseStage ? 1.01 : 1.0;
  // Between twins that differ only in group_m: the first wave's footprint (waveFootprint), so the
  // bytes it reads from DRAM. group_m=16 squares the wave of 128x256 tiles where N has more than
  // 16 tile columns (4096^3: 16 x 9 tiles, not 8 x 16 + 4; 18% fewer DRAM bytes at 8192^3 by ncu,
  // +0.3-1.0% at 4096^3, 4096x14336x4096, 4096x4096x14336); where both cover the same rows and
  // columns the first registered (group_m=8) stays the pick (2048^3: 3% faster than 16, measured).
  double fpMin = waveFootprint(c, p, t);
  for (const auto& w : gemmBf16Variants()) {
    Config d = w.config;
    d.groupM = c.groupM;
    if (d == c) fpMin = std::min(fpMin, waveFootprint(w.config, p, t));
  }
  double group = 1.0 / (1.0 + 0.01 * (waveFootprint(c, p, t) / fpMin - 1.0));
  // Bytes in flight per SM, a tie-breaker of at most 2%: between tiles of equal shape terms the
  // larger ring feeds a memory-bound shape better (128x8192x8192: 64x128 s9, 216 KB, 0.98x cuBLAS;
  // 128x64 s8, 192 KB, 0.93x).
  double inflight = 1.0 + 0.02 * double(c.stages) * double(c.bm + c.bn) * c.bk * 2 / double(t.maxSmemPerBlock);
  // Three consumer warpgroups (192-row tiles): 192x192 ran 4.6% behind 128x256 per SM-wave where
  // both fill their waves (8192^3 0.965x cuBLAS against 1.012x, 4096x14336x4096 0.943x against
  // 0.989x; bench/results/2026-11-30-h200-three-warpgroups/tile192.*), where the intensity term
  // counts it 6% ahead. With four stages its pairs are still 4.6% behind at 8192^3 (slot1.*), but
  // ahead by 3-7% at some shapes where 128x256 is picked (fresh6.*: 3742x8656x4176 0.99x against
  // 0.92x). The 0.9 was fitted on the three-stage ring. The four-stage pairs with one staging slot
  // (store_slots=1) count 0.96, refitted at 387b373 on the 84 shape runs that measured
  // them (bench/results/2026-11-30-h200-narrow-tiles/refit.* and the runs named in
  // Sm90HeuristicOnMoreShapes): 0.976 of the best measured variant with 0.9, 0.982 with 0.96; at the
  // 28 shapes where some factor from 0.9 to 1.0 moves a pick, 0.954x cuBLAS -> 0.960x (3000^3
  // 0.82x -> 0.92x, 3742x8656x4176 0.90x -> 0.98x; 3000x6144x512 1.04x -> 0.99x). No BENCH.md pick moves.
  double warpgroups = c.warpsM == 3 ? (c.storeSlots == 1 ? 0.96 : 0.9) : 1.0;
  // swap_ab (always stage_store=stmatrix) counts that 0.98 and nothing more. A swapped tile runs at
  // the speed of its wgmma shape: 256x128 swapped as fast as unswapped (two m64n128 each), 128x256
  // swapped (four m64n64) 2.8% behind its twin (one m64n256); the registered ones, two m64n1xx,
  // run like unswapped 256x128, about 0.98 of 128x256. A further 0.99 moved one recorded pick
  // where none moves 25, 22 of them measured faster (bench/results/2026-11-30-h200-swap-ab/).
  // Swapped and split along N with two m64 blocks per warpgroup (160x256): the square root of its
  // intensity counts it 7% ahead of 128x256, where it runs even with it or 1-3% behind when both
  // fill their waves (8192^3 1.00-1.06x cuBLAS against 1.02-1.03x; bench/results/2026-11-30-h200-
  // coop-swap/). 0.96 was fitted on the 68 shape runs that measured it (the picks 0.968x -> 0.971x
  // cuBLAS; 1.0 picked it where it ran 6-9% behind, 0.92 and below gave back what it wins).
  double wide = c.swapAB && c.warpsN > 1 && c.bn / c.warpsN > 64 ? 0.96 : 1.0;
  return epilogue * depth * cluster * stageStore * reuse * group * inflight * warpgroups * wide;
}

// Memory-bound problems (fewer flops per byte than the H200's balance, 989 TFLOP/s over the 4.0
// TB/s copy ceiling): bandwidth bounds the time more than the count of busy SMs, so in one wave
// idle SMs cost less than in tileShapeScore's waves term (coverage replaces it); and a variant
// that streams its read-once operand L2 evict_first (l2_hint=reuse) gains 11-20% over its twin
// without the hint (64x128 s9 at 64x{4096,5120,8192}; 64x64 s13 streaming A at 8192x64x4096 or
// B at 64x5120x5120, 12-17%). Fitted on bench/results/2026-11-29-h200-hint/: any exponent near
// 0.5 and any bonus from 1.1 to 1.3 gives the same picks.
double memoryTerm(const TileWork& w) {
  const Config& c = w.c;
  const GemmProblem& p = w.p;
  if (!w.memoryBound) return 1.0;
  double waves = waveFill(w.tiles, w.sms);
  // With more tiles than SMs the last wave's fill counts in full, as compute-bound: the blocks
  // with one tile more set the time (32x11008x4096: one wave of 86 64x128 tiles is 16% faster
  // than 1.3 waves of 64x64; it was the square root of the fill until 94c0c30).
  double memory = w.tiles <= w.sms ? w.coverage(double(w.tiles)) / waves : 1.0;
  // The bulk operand re-read by at most two tiles along the small dimension, both whole (below).
  int64_t tileRows = ceilDiv(p.m, c.bm), tileCols = ceilDiv(p.n, c.bn);
  bool twoWholeTiles = std::min(tileRows, tileCols) <= 2 && (tileRows <= tileCols ? p.m % c.bm : p.n % c.bn) == 0;
  // A variant that streams its read-once operand reads that bulk from DRAM once at DRAM's pace,
  // whatever its tile: the tile's intensity (the L2 traffic of re-reading the small operand) no
  // longer orders the variants (8192x128x4096: 64x128 s9 1.16x cuBLAS, 128x128 split in two 1.05x;
  // 128x8192x8192: the 64x128 pair 1.06x, 128x64 s8 1.02x, 128x128 split 1.01x;
  // bench/results/2026-11-30-h200-stream-fill/family.* and small_extra.*), so it drops out.
  if (w.streamsAny()) memory *= 1.1 * 64.0 / intensity(c.bm, c.bn);
  // Nor does it where at most two tiles re-read each line of the bulk operand (two tile rows of B,
  // or columns of A): the raster walks them one after the other, so the second read hits L2 and
  // DRAM reads the bulk once, without the hint's 1.1 (64x64 s13 at M = 128: 0.91x cuBLAS at
  // 128x3072x4096 where the 64x128 pair along M, which streams B, is 0.82x;
  // bench/results/2026-11-30-h200-few-tiles/few_tiles*). Only where both are whole tiles: at
  // 12288x96x4096 the second 64-column tile re-reads all of A for 32 columns, and 64x64 s13 is
  // 0.73x cuBLAS where 128x128 tiles, reading A once, are 1.0x (bench/results/2026-11-30-h200-unseen/).
  else if (twoWholeTiles) memory *= 64.0 / intensity(c.bm, c.bn);
  // Otherwise, with the DRAM bytes fixed, what a cluster changes is L2's output: the cluster reads each
  // shared operand tile once and multicasts it, as one tile of the cluster's shape would. So where
  // the cluster's tile lies within M x N, and the operand it shares is the bulk of the bytes (B,
  // shared along M, where N >= M; A, shared along N, where M >= N), the intensity term is the
  // cluster tile's (a 64x128 pair along M reads L2 like a 128x128 tile: 42.0 us at 128x8192x8192
  // against 44.1 for 128x128 split in two, 45.4 for 64x128 alone;
  // bench/results/2026-11-30-h200-cluster-n/m128_c2.*). Where it lies outside, the pair shares
  // little and pads much (64x128 pairs at 8192x64x4096: 0.62x cuBLAS); where the shared operand is
  // the small one, sharing it saves little (64x64 pairs along N at 64x5120x5120: 21.3 us against
  // 19.5 for 64x64 alone; bench/results/2026-11-30-h200-stream-fill/).
  bool sharesBulk = (c.clusterM > 1 && p.n >= p.m) || (c.clusterN > 1 && p.m >= p.n);
  if (!w.streamsAny() && sharesBulk && p.m >= int64_t(c.bm) * c.clusterM && p.n >= int64_t(c.bn) * c.clusterN)
    memory *= intensity(double(c.bm) * c.clusterM, double(c.bn) * c.clusterN) / intensity(c.bm, c.bn);
  // A cluster that shares the small operand pays its handshakes for nothing: 3-4% behind the lone
  // tile (the 64x64 pair along N at 64x5120x5120, 1.08x cuBLAS against 1.11x; the 64x128 pair along
  // M at 8192x128x4096, 1.11x against 1.16x for 64x128 s9; same files).
  if (c.clusterM * c.clusterN > 1 && !sharesBulk) memory *= 0.97;
  return memory;
}

// split_k=S: a problem with fewer tiles than SMs keeps S times as many SMs busy, at the cost of
// handing the partial sums over through L2 (stores, a GPU-scope release, the finishing slice's
// acquire and loads); with more units than SMs a second wave of slices costs more than it gains
// (0.5). Compute-bound, a unit takes K steps / S plus the hand-over's ~kSplitKOverheadSteps.
// Memory-bound, the hand-over costs 0.93 and the units count in the coverage instead of the
// tiles, and where the variant streams its bulk operand, only up to the saturation: 64x64 s13 in
// two slices (bench/results/2026-11-30-h200-few-tiles/few_tiles*, two runs) gains +21% to +40% at
// 16 to 40 tiles of M = 64 or N = 64, loses 2-3% at 48 and 60 and 3-7% at 64; where it cannot
// stream (M = 128: two tile rows read B) it gains at 64 tiles too (+14% at 128x2048x4096, +25% at
// 128x2048x8192). Hence the saturation at 37.5% of the SMs (49.5 of 132): split wins below ~46
// tiles of a streamer. Other than for a memory-bound streamer, the gain is counted only for full
// tiles (M >= bm, N >= bn), where it was measured: at 64x5120x5120 a 128-row tile is half padding
// and its split loses to 64x128 s9 (0.77x against 1.00x cuBLAS) though it beats its own unsplit
// twin (0.72x).
double splitTerm(const TileWork& w) {
  const Config& c = w.c;
  const GemmProblem& p = w.p;
  if (c.splitK <= 1) return 1.0;
  int64_t units = w.tiles * c.splitK;
  bool full = p.m >= c.bm && p.n >= c.bn;
  if (units > w.sms) return 0.5;
  if (!full && !(w.memoryBound && w.streamsAny())) return 0.93;
  if (!w.memoryBound) {
    // Worth it on long K, not at 1000^3 (16 K steps: 128x128 s6 tma in two slices 0.75x cuBLAS
    // against 0.83-0.85x unsplit; bench/results/2026-11-30-h200-unseen/).
    return w.kSteps() / (w.kSteps() / double(c.splitK) + kSplitKOverheadSteps);
  }
  // The saturation was measured with the small operand filling its box (M = 64 or N = 64),
  // whose re-reads from L2 double each block's intake. A box mostly past M (or N) reads
  // little, and its blocks stream further before DRAM is busy: the saturation scales by the
  // small box's bytes over the streamed one's (1x4096x4096: the split 0.97x cuBLAS against
  // 0.82x; 16x4096x4096 1.02x against 0.93x; bench/results/2026-11-30-h200-unseen/).
  double smallShare = w.streams.b ? double(std::min<int64_t>(p.m, c.bm)) / c.bn
                                  : double(std::min<int64_t>(p.n, c.bn)) / c.bm;
  double saturatedHere = w.saturated / std::clamp(smallShare, 0.01, 1.0);
  double busy = w.streamsAny() ? std::min(double(units), std::max(double(w.tiles), saturatedHere)) : double(units);
  return w.coverage(busy) / w.coverage(double(w.tiles)) * 0.93;
}

// stream_k=1: the data-parallel waves but the last, whose tiles' K steps are shared out in runs
// over all SMs, so each SM works tiles / SMs tile-times plus the runs' overhead
// (kStreamKOverheadSteps) instead of ceil(tiles / SMs) tile-times: this replaces
// tileShapeScore's last-wave fill. Where the tiles fill whole waves nothing is shared. On
// memory-bound shapes it was slower than the lone 64-row tiles everywhere measured (4-29%,
// bench/results/2026-11-30-h200-stream-k-tma-store/), hence 0.9 there.
// In clusters the walkers are the clusters, over cluster tiles.
double streamKTerm(const TileWork& w) {
  if (!w.c.streamK) return 1.0;
  if (w.memoryBound) return 0.9;
  if (w.p.ragged && !w.p.raggedK) return 0.97;  // its waves: raggedTerm
  auto [units, slots] = clusterWalk(w.c, w.p, w.sms, w.clustersOf4);
  double dataParallel = double(ceilDiv(units, slots));
  double shared = units % slots == 0 ? dataParallel
                                     : double(units) / double(slots) + kStreamKOverheadSteps / w.kSteps();
  // 0.97: where the waves fill it gives nothing back for running without reuse_stage and
  // group_m 16 (1-3% behind the 128x256 twin on the long-K BENCH.md shapes, bench/results/2026-11-29-h200-stream-k/).
  // The group_m 16 stream-K twin is registered for ragged groups (whose bands stop at group ends,
  // docs/grouped-gemm.md) and was never timed on a dense shape, where its group_m 8 twin was: 0.99
  // keeps it behind that twin there (the footprint term puts it 0.4% ahead).
  const double unmeasured = w.c.groupM == 16 ? 0.99 : 1.0;
  return 0.97 * unmeasured * dataParallel / shared;
}

// Ragged groups of rows, compute-bound: the tile count is the groups' (read on the device), which
// the host can only expect (ragged_waves.h: M / bm + G / 2 tile rows). tileShapeScore counted the
// dense problem's useful work over ceil(tiles / SMs) waves; this replaces those waves by the
// expected time, data-parallel or stream-K (so stream-K's own wave count is not in streamKTerm).
// The MoE shape (12416 rows in 8 groups, N = 4096, K = 7168) at 128x256: 1616 tiles, 12.24 waves;
// data-parallel 13 (8 x 16 tiles of rounding are under a wave: the tail is predictable),
// stream-K 12.42, so `_tma_streamk1` (0.97 x 13 / 12.42 = 1.015) passes `_tma_rs_g16` (1.01), and
// its group_m 16 twin `_tma_g16_streamk1` passes it by twinTerms' smaller first-wave footprint
// (over ragged groups a band stops at its group's end, so 16-row bands read each B about once).
double raggedTerm(const TileWork& w) {
  if (!w.p.ragged || w.p.raggedK || w.memoryBound) return 1.0;
  const int64_t dense = ceilDiv(w.tiles, w.sms);  // tileShapeScore's waves
  RaggedWaves r = raggedWaves(w.p.m, w.p.n, w.c.bm, w.c.bn, w.p.groups, w.sms, w.c.streamK != 0,
                              kStreamKOverheadSteps, w.kSteps());
  return double(dense) / r.time;
}

// Groups along K (the weight gradient, tile.for_tiles {ragged = K}: C [G, M, N], f32 in the MoE
// programs), compute-bound: the problem is scored as the dense M x N x T one, but the units are G
// times the dense tiles and each runs only its group's K steps, about T / (G bk) + 1/2 (24.75 at
// the MoE shape: 8 groups of 1168-2016 tokens, bk = 64), so what a tile does besides its K loop
// weighs ~8x more than in the dense GEMM. GPU run 10 (H100, bench/results/2026-12-06-h100-s4)
// timed 128x256 s4 (cooperative, TMA store) at 1.391 ms where its K loops take ~0.91 ms (the
// busiest SM's 55 tiles of ~24.6 steps at the 0.673 us a step the same kernel runs the ragged
// forward's 12416 x 4096 x 7168 in 0.904 ms at), so 8.7 us a tile, ~13 of its K steps: the token
// tail's zeroing (~1) and the 128 KB f32 tile's store, not overlapped (both consumer warpgroups
// stage and store, then start the next tile). A store whose rate per byte does not depend on the
// tile costs the same number of the tile's own K steps at any bm x bn (both scale with bm bn):
// kKGroupedStoreSteps x (output bytes / 4) x (64 / bk). Ping-pong was predicted to hide the store
// under the other warpgroup's K loop (docs/grouped-gemm.md, "Ping-pong for groups along K"); GPU
// run 11 measured it 1.32x slower than the cooperative 128x256 instead, so it keeps the whole
// store exposed plus kKGroupedPingPongSteps. The term is the units' waves over the dense tiles'
// (which tileShapeScore counted) times the tile's busy share, steps / (steps + zeroing + exposed
// store). The direct store keeps twinTerms' 0.97 (run 10: 1.456 ms against 1.391).
double kGroupedTerm(const TileWork& w) {
  const Config& c = w.c;
  const GemmProblem& p = w.p;
  if (!p.raggedK || w.memoryBound) return 1.0;
  const int64_t groups = std::max<int64_t>(1, p.groups);
  const double steps = double(p.k) / double(groups * c.bk) + 0.5;
  const double store = kKGroupedStoreSteps * p.cElemBytes / 4.0 * 64.0 / c.bk;
  const double exposed = c.consumers == Consumers::Pingpong ? store + kKGroupedPingPongSteps : store;
  const double waves = waveFill(w.tiles * groups, w.sms) / waveFill(w.tiles, w.sms);
  return waves * steps / (steps + kKGroupedZeroSteps + exposed);
}

// B's rows off 32-byte sectors (row-major B, N * 2 bytes not a multiple of 32): each 128-byte box
// row spans five sectors on two L2 lines, and the lone tile's B loads run the SM ~20% slower
// (3072x3000x3072: 128x192 0.79x cuBLAS, its pair along M, which loads each B box once for both
// CTAs, 0.97x; 3000^3 0.62x against 0.82x; 1456x3000x1000 0.62x against 0.75x; 128x256 the same;
// 768x3000x8192, under a wave, 0.74x against 0.94x with stream-K; rows on lines, at 3072^3, the
// pair is 1.5% behind). Rows on sectors but off lines cost less and not everywhere: nothing at
// 2304x2000x8192 or 6000^3, 5-12% at 3265x4688x808, 4000x1200x3000 and 12000x4000x1000, but 0.9
// for them lost more picks than it won (604x2640x6688: the lone 128x128 tile 0.95x, its pair
// 0.64x). A's rows off lines cost every variant alike (3-5%). bench/results/2026-11-30-h200-tile-192/.
//
// A's rows off sectors (K * 2 bytes not a multiple of 32) cost less and less evenly: pairs along N,
// which load each A box once for both CTAs, ran against the same tile alone from -9% (8192x2048x3000)
// to +31% (5457x1072x6696), +5% in the median over ten such shapes and three tiles, where with A's
// rows on sectors they were 1-10% behind (bench/results/2026-11-30-h200-three-warpgroups/a_pitch.*).
// A variant that does not share A counts 1 - 0.25 x A's share of the rows each K step loads (bm /
// (bm + bn): 0.92 for 128x256, 0.83 for 256x128, whose 256 A rows make it 22% slower than 192x192
// pairs along N at 8798x1376x5560). A flat 0.92 picked 256x128 there (0.78 of the best; over the
// recorded runs 0.980 of the best in geometric mean against 0.983 with the share).
double pitchTerm(const TileWork& w) {
  if (w.memoryBound) return 1.0;
  bool bOffSectors = !w.p.bKMajor && (w.p.n * 2) % 32 != 0;
  bool aOffSectors = (w.p.k * 2) % 32 != 0;
  double aShare = double(w.c.bm) / double(w.c.bm + w.c.bn);  // A's share of the rows a K step loads
  double b = bOffSectors && w.c.clusterM == 1 ? 0.8 : 1.0;
  double a = aOffSectors && w.c.clusterN == 1 ? 1.0 - 0.25 * aShare : 1.0;
  // 2 x 2 clusters escape both terms; where both apply, that is what they are for (they ran 5-16%
  // ahead of the same tile in pairs along M at four such shapes with several waves of tiles). Where
  // at most one does, a pair shares that operand as well, and the four blocks' handshakes cost
  // 8-16% (8192^3, 4096^3; bench/results/2026-11-30-h200-narrow-tiles/square.*): 0.88.
  double square = w.c.clusterM > 1 && w.c.clusterN > 1 && !(aOffSectors && bOffSectors) ? 0.88 : 1.0;
  return a * b * square;
}

// Compute-bound, a larger tile's lower L2 traffic per flop buys less than tileShapeScore's linear
// intensity term says: 128x256 runs 3-7% more per SM-wave than 128x128 on the large shapes, not
// 33% (bench/results/2026-11-30-h200-tile-192/family.* and heldout.*), so that term overrode the
// waves. Counted here as its square root: at 23 shapes where the two exponents pick differently
// the square root's picks ran at 0.971 of the fastest variant in geometric mean, the linear term's
// at 0.882 (ab.*: 19 better, 4 worse).
double computeIntensityTerm(const TileWork& w) {
  if (w.memoryBound) return 1.0;
  return 1.0 / std::sqrt(intensity(w.c.bm, w.c.bn) / 64.0);
}

}  // namespace

double sm90Preference(const GemmVariant& v, const GemmProblem& p, const Target& t) {
  const Config& c = v.config;
  double flops = 2.0 * double(p.m) * double(p.n) * double(p.k);
  double bytes = 2.0 * (double(p.m) * p.k + double(p.k) * p.n + double(p.m) * p.n);
  int64_t sms = std::max(1, t.referenceSms);
  Sm90Streams streams = sm90Streams(c, p.m, p.n, p.k, p.bKMajor, 2, 2);
  if (!p.aRowMajor) streams.a = false;  // a column-major A never streams (sm90/kernel.cpp)
  TileWork w{c,
             p,
             ceilDiv(p.m, c.bm) * ceilDiv(p.n, c.bn),
             sms,
             kStreamingSmsToSaturate * double(sms),
             flops / bytes < kH200FlopsPerByte,
             streams,
             t.referenceClustersOf4};
  // The row-raster variants stay behind their grouped-raster twins, dense or ragged: those keep a
  // wave's tiles of B in L2 (unmeasured: a tie-break).
  const double raster = c.raster == Raster::Row ? 0.97 : 1.0;
  return 2.0 * tileShapeScore(c, p, t) * twinTerms(c, p, t) * memoryTerm(w) * splitTerm(w) * streamKTerm(w) *
         raggedTerm(w) * kGroupedTerm(w) * pitchTerm(w) * computeIntensityTerm(w) * raster;
}

}  // namespace kiln::ops
