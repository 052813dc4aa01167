// The gemm_fp8 family: table, eligibility, preference and selection (contract in gemm_fp8.h).
#include "ops/gemm_fp8.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "kiln/program_builder.h"
#include "ops/ragged_waves.h"
#include "ops/select_variant.h"
#include "schedule/config.h"
#include "schedule/gemm_analysis.h"

namespace kiln::ops {

namespace {

// Dense FP8 flops per byte of DRAM traffic at which the H200 is balanced: the rate FP8 GEMMs
// reach (~1200 TFLOP/s, not the datasheet's 1979) over the measured copy (~4.0 TB/s, shared/BENCH.md).
// With 1979 / 4.0 = 495, shapes between 300 and 495 flops per byte took the memory-bound branch
// and its deep 64-row rings where 128-row tiles ran 5-30% faster: at ten held-out shapes there the
// picks went from 0.858 to 0.908 of the fastest variant with fast accumulation and from 0.911 to
// 0.940 promoted (bench/results/2026-12-01-h200-promote-turnaround/balance_*).
constexpr double kH200Fp8FlopsPerByte = 1200.0 / 4.0;
// The share of the SMs that, streaming from deep rings, keep DRAM busy: fitted on the FP8 run
// (at M = 128, 56 blocks of 128x128 ran 8% slower than 112 of 64x128), above BF16's 0.375.
constexpr double kStreamingSmsToSaturate = 0.5;
// The 64-row rings (one consumer warpgroup) whose block scales all come from the stage
// (blockScalesFromStage) stream as BF16's do: in GPU run 13 (bench/results/2026-12-07-h100-run13/
// fp8_block.json) 56 blocks of 64x128 ran 4-6% ahead of 112 (64x64, or 64x128 in two K slices) at
// 64x7168x16384 in both block modes, at 94% of the read ceiling.
constexpr double kStreamingSmsToSaturateFromStage = 0.375;
// stream_k=1's cost per block, in K steps of 128 (the fill of a run that starts inside a tile and
// the hand-over of its partial sums): fitted on 3072x1536x7168, where stream-K ran 1.15x its
// data-parallel twin, not the 1.34x that BF16's 20 steps would predict.
constexpr double kStreamKOverheadSteps = 40.0;
// Promoting each K step's sums costs a wait for that step's wgmma (0.95 against fast accumulation);
// with two steps in flight (promote_pairs) the tensor cores run one while the other's sums are
// added, which earns back 2% of it. Without this term the preference put 128x160 `promote` a hair
// ahead of 128x128 `promote_pairs` wherever their waves fill alike (8192^3: 0.994), where 31
// recorded runs had the pairs a median 1.4% ahead. At eight shapes from that band, measured after
// the prediction and before the term, the pairs ran 0.5-3.0% ahead at every one
// (bench/results/2026-12-02-h200-closing/pairs_heldout.json): they need more than 1.4%, and
// 4608x9216x2304, where 128x160 ran 2% ahead, less than 2.1%.
constexpr double kPromoteTerm = 0.95, kPromotePairsTerm = 0.95 * 1.02;
// Rowwise and tensorwise scales, promoted sums, two consumer warpgroups, compute-bound: refitted on
// the H100, the GPU of every run since 2026-12-06 (bench/results/2026-12-06-h100-fp8/fp8_bench.json;
// each variant's time per wave of tiles fitted as ksteps x s + e over the six compute-bound shapes,
// in both modes, max error 2-7%). 128x128 promote_pairs: s = 0.440 us a K step, e ~ 0 (tensorwise
// -0.27 us, rowwise +0.39 before its scales moved before the K loop): the K loop runs at the
// operand feed's rate, and its six-stage ring, filled during the epilogue, lets the next tile's
// first steps run at the tensor cores' rate, which hides the epilogue. 128x160 promote: s = 0.451 us
// for 1.25x the work, 1.22x the pairs' rate per flop (kPromotedSingleStepRate, with the intensity
// term's 2%), and e = 2.1-2.2 us, 4.8 of its steps (kPromotedEpilogueSteps): its four stages do not
// hide it; its pair along M alike (1.7-2.1 us). The direct-store "_row" twins expose theirs too
// (2.3-4.7 us). So 128x160 leads from ~21 K steps on: measured 3-11% ahead at 8192^3, 4096x4096x14336,
// 4096x14336x4096 and 4096x7168x16384, 5-7% behind at K <= 2048 (4096x7168x2048,
// 4096x24576x1536), where the H200's terms (kPromoteTerm, kPromotePairsTerm, a 2-step epilogue)
// had the pairs at the first two (0.85x cuBLASLt tensorwise, 0.96x rowwise) and 128x160 at
// 4096x7168x2048. On the H200 the pairs had run 0.5-3% ahead where both fill their waves alike.
constexpr double kPromotedSingleStepRate = 1.22 / 1.0213, kPromotedEpilogueSteps = 4.8;
// Block scales (1x128 x 128x128, 1x128 x 1x128) multiply each K step's sums by their factors
// before adding them (blockScaleStepTerm). A K step of a bm x bn tile keeps one SM's tensor cores
// busy bm bn / 32 cycles (2 x bm x bn x 128 FP8 flops at 8192 a cycle); the promotion adds, per
// step, a wait the warpgroups cannot hide (the step's wgmma drained, its scales multiplied) and the
// scale work each consumer thread issues besides its FFMAs (loads and FMULs of the scales: a few at
// 1x128 x 128x128; at 1x128 x 1x128 one FMUL per row-block and column pair and one 8-byte load per
// 8 columns of the tile, one per 4 in the measured kernels), so a step costs bm bn / 32 + wait +
// kBlockScaleCyclesPerInstr x consumers x instructions.
// Fitted on the H100 run of every registered variant in both modes (bench/results/
// 2026-12-06-h100-final/fp8_block.json, 10 shapes each): the pick within 2.1% of the fastest
// measured at every shape (0.979 at the worst two, 0.995 / 1.000 in geometric mean); the terms
// before (a flat 0.4 for single steps, fitted when 128x160 made 22 scale loads a step) picked the
// 128x128 pairs at 0.75-0.86 of 128x160 at the compute-bound shapes and 64x64 at small M.
//  * The wait: 150 cycles, 100 with two consumer warpgroups taking single steps (one's wait runs
//    under the other's wgmmas). It is what puts the 64x128 rings 6-13% ahead of 64x64 at M = 64
//    (twice the work per wait), and 128x160 ahead of 128x128 at the compute-bound shapes.
//  * 4 cycles of a step per scale instruction of a thread and consumer: with 1x128 x 1x128's 122
//    a thread a step at 128x160 (80 FMUL, 42 loads, as measured) the step costs 2.4x its tensor
//    work, which is the measured 0.48 of the same tile with 128x128 B blocks; 64x128's 98 on one
//    consumer cost it less, so it stays ahead up to M = 128 (1.11x 128x160 at 128x7168x2048). With
//    the loads paired (102 and 82) the picks at the file's shapes stay the same.
constexpr double kBlockScaleWaitCycles = 150.0, kBlockScaleWaitCyclesTwoConsumers = 100.0;
constexpr double kBlockScaleCyclesPerInstr = 4.0;
// The pair along M sharing B through multicast (_c2), with block scales, compute-bound: measured
// 0.98-1.11x the lone 128x160 (geomean 1.04 over 12 shapes in both modes; rowwise on the H200 it
// only gained where K is off 32-byte sectors, pitchTerm). Its B tile reaches two SMs in one L2 read
// while both wait on each step's promotion; replaces the 0.99 tie-break in blockwise problems.
constexpr double kBlockScalesClusterTerm = 1.05;
// Memory-bound with block scales, K in slices (blockScaleSplitRelief): DRAM bytes the read ceiling
// moves in the time of one modelled cycle of a block's promoted K step (blockScaleStepCycles).
// Fitted on the H100 run bench/results/2026-12-06-h100-s5/fp8_1x1.json: 64x128 promote, 1x128 x
// 1x128 at 64x7168x16384, ran 90.1 us for 128 K steps of 734 modelled cycles (0.959 ns each: the
// promotion's chain in each of its 56 blocks, at 0.46 of the copy bandwidth, where the same ring
// with rowwise scales ran 52 us), beside a read ceiling of 2573 GB/s: 0.959 x 2573 = 2467.
constexpr double kChainBytesPerStepCycle = 2467.0;
// A slice's hand-over in K steps of its chain: the f32 partial sums stored and read back by the
// slice that finishes the tile (bm x bn x 4 bytes each way: 32 KB at 64x128, beside a step's
// 24 KB of A and B) and the flag between them. Keeps the split off where a slice has few steps.
constexpr double kSplitHandOverSteps = 2.0;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct Shape {
  int bm, bn, consumers, stages;
  bool tmaStore = false;
  bool pingpong = false;
  int clusterM = 1;
  int splitK = 1;
  bool streamK = false;
  Fp8Accum accum = Fp8Accum::PromotePairs;
  // Where scale_a and scale_b are loaded: before the K loop (early), or in the epilogue with their
  // lines prefetched into L1 before it (prefetch).
  EpilogueLoads loads = EpilogueLoads::Early;
  // raster=row ("_row"): with the direct epilogue and no cluster or split, the ragged walk's first
  // measured form (every variant without a cluster or split walks ragged groups).
  bool row = false;
};

constexpr Fp8Accum kFast = Fp8Accum::Fast, kPromote = Fp8Accum::Promote, kPairs = Fp8Accum::PromotePairs;
constexpr EpilogueLoads kPrefetch = EpilogueLoads::Prefetch;

// Measured on the H200 (bench/results/2026-11-30-h200-fp8/). Promoting each K step's sums (the
// default, as cuBLASLt's and torch._scaled_mm's), two steps in flight ("_pairs": the tensor
// cores run one step while the other's sums are added): 128x128 with two consumer warpgroups,
// and deep rings of 64-row tiles for the memory-bound small M (64x64 s13, 64x128 s8 staged through
// TMA), where the pairs run 7-25% faster than single steps; 128x160 one step at a time (80 + 80
// accumulators per thread; pairs would need 240), the fastest where its waves fill. With the
// tensor cores' own accumulation ("_fastacc", cuBLASLt's FAST_ACCUM): 128x256 alone, in pairs
// along M and with stream-K for the last wave; ping-pong 128x128, which overlaps one warpgroup's
// epilogue with the other's wgmma and wins where the K loop is short (K <= 4096: FP8's K loop runs
// twice as fast as BF16's, so the epilogue weighs twice as much); 128x128 and the small-M rings
// (64x128 s8 stores through TMA: up to 11% ahead of a 64x128 s9 ring stored from registers at ten
// of twelve small-M shapes, tied at two; bench/results/2026-12-01-h200-promote-turnaround/lone_tma*).
// 128x160 in pairs along M (sharing B through multicast) where K is off 32-byte sectors: 1.17-1.32x
// the lone tile at seven such shapes (pitchTerm; bench/results/2026-12-01-h200-early-loads/promote_c2.*).
// The scales are loaded before the K loop (epilogue_loads=early) except where that measured slower
// or spills (bench/results/2026-12-01-h200-early-loads/): 128x256 with stream-K (spills), and
// 128x160 promote (1.5-3% slower at K >= 4096, its shapes). The promoted 128x160 ones prefetch the
// scales' lines into L1 instead (epilogue_loads=prefetch): 1-4% ahead of loading late at K <= 4096,
// never behind (bench/results/2026-12-02-h200-prefetch/); where early loads fit they stay, 2-7%
// ahead of prefetching. 128x128 promote_pairs (192 sums) spilled with early loads when that was
// measured; with the descriptors on the uniform datapath and scale_b's column pairs its 36 scale
// values a thread fit beside them (0 spills, ptxas), so it loads early too (2026-12-06): on the
// H100 its rowwise epilogue, loading in the epilogue, cost 0.39 us a tile more than the
// tensorwise one (a fit over the six compute-bound shapes of bench/results/2026-12-06-h100-fp8/,
// where the tensorwise epilogue is hidden under the ring's six stages), 14.5% at 4096x24576x1536.
// A program whose epilogue loads more (a bias) or stores f32 keeps prefetching
// (ops/default_schedule.cpp, forEpilogueLoads).
constexpr Shape kShapes[] = {
    {128, 128, 2, 6, true, false, 1, 1, false, kPairs, EpilogueLoads::Early},
    {128, 160, 2, 4, true, false, 1, 1, false, kPromote, kPrefetch},
    {128, 160, 2, 4, true, false, 2, 1, false, kPromote, kPrefetch},
    {64, 64, 1, 13},
    {64, 128, 1, 8, true},
    {128, 256, 2, 4, true, false, 1, 1, false, kFast},
    {128, 256, 2, 4, true, false, 2, 1, false, kFast},
    {128, 256, 2, 4, true, false, 1, 1, true, kFast, EpilogueLoads::Late},
    {128, 128, 2, 5, true, true, 1, 1, false, kFast},
    {128, 128, 2, 6, true, false, 1, 1, false, kFast},
    {64, 64, 1, 13, false, false, 1, 1, false, kFast},
    {64, 128, 1, 8, true, false, 1, 1, false, kFast},
    {64, 128, 1, 8, true, false, 2, 1, false, kFast},
    // Ragged groups (MoE, DeepSeek-V3's block scales): the promoted 128x128 pairs and 128x160 from
    // registers, and a 64x128 ring for groups of few rows (not yet measured).
    {128, 128, 2, 6, false, false, 1, 1, false, kPairs, kPrefetch, true},
    {128, 160, 2, 4, false, false, 1, 1, false, kPromote, kPrefetch, true},
    {64, 128, 1, 8, false, false, 1, 1, false, kPromote, EpilogueLoads::Early, true},
    // Block scales at small M (2026-12-06): the 64x128 ring in two K slices, single steps (the only
    // ones 1x128 x 1x128 runs) and pairs. At M = 64 a row of 64x128 tiles is N / 128 blocks (56 at
    // N = 7168), each waiting on its promotion every K step; two slices put twice the blocks on the
    // SMs, each with half the steps (blockScaleSplitRelief). The pairs first: where both run (1x128
    // x 128x128) the preference ties them, and unsplit at M = 64 the pairs ran 1.24x the single
    // steps (bench/results/2026-12-06-h100-s3/fp8_block.json: 52.3 against 65.1 us).
    {64, 128, 1, 8, true, false, 1, 2, false, kPairs},
    {64, 128, 1, 8, true, false, 1, 2, false, kPromote},
};

Fp8GemmVariant make(const Shape& s) {
  Fp8GemmVariant v;
  v.name = fmt::format("fp8_gemm_sm90_{}x{}x128_s{}{}{}{}{}{}{}{}", s.bm, s.bn, s.stages, s.tmaStore ? "_tma" : "",
                       s.pingpong ? "_pp" : "", s.clusterM == 2 ? "_c2" : "",
                       s.splitK > 1 ? fmt::format("_sk{}", s.splitK) : "", s.streamK ? "_streamk1" : "",
                       s.accum == kFast ? "_fastacc" : s.accum == kPromote ? "" : "_pairs", s.row ? "_row" : "");
  Config& c = v.config;
  c.strategy = "sm90_ws_persistent";
  c.bm = s.bm;
  c.bn = s.bn;
  c.bk = 128;
  c.stages = s.stages;
  c.warpsM = s.consumers;
  c.warpsN = 1;
  c.raster = s.row ? Raster::Row : Raster::Grouped;
  c.groupM = 8;
  c.epilogue = s.tmaStore ? EpilogueStore::Tma : EpilogueStore::Direct;
  c.consumers = s.pingpong ? Consumers::Pingpong : Consumers::Cooperative;
  c.clusterM = s.clusterM;
  c.splitK = s.splitK;
  c.streamK = s.streamK ? 1 : 0;
  c.l2Hint = L2Hint::Reuse;
  c.fp8Accum = s.accum;
  c.epilogueLoads = s.loads;
  return v;
}

}  // namespace

std::unique_ptr<ir::Module> fp8ScaledGemmProgram(const std::string& name, ir::ScalarType bType) {
  ProgramBuilder p(name);
  auto [M, N, K] = p.dims("M", "N", "K");
  auto A = p.input("A", f8e4m3, {M, K});
  auto B = p.input("B", bType, {K, N}, /*order=*/{0, 1});
  auto scaleA = p.input("scale_a", f32, {M});
  auto scaleB = p.input("scale_b", f32, {N});
  auto C = p.output("C", bf16, {M, N});
  p.tile({M, N}, [&](Coord m, Coord n) {
    Tile acc = p.zeros(f32, {m, n});
    p.reduce(K, [&](Coord k) { acc = dot(A(m, k), B(k, n), acc); });
    C(m, n) = cast(bf16, scale(scale(acc, scaleA(m)), scaleB(n)));
  });
  return p.finish();
}

const std::vector<Fp8GemmVariant>& gemmFp8Variants() {
  static const std::vector<Fp8GemmVariant> table = [] {
    std::vector<Fp8GemmVariant> t;
    for (const Shape& s : kShapes) t.push_back(make(s));
    return t;
  }();
  return table;
}

const Fp8GemmVariant* findGemmFp8Variant(std::string_view name) {
  for (const auto& v : gemmFp8Variants())
    if (v.name == name) return &v;
  return nullptr;
}

bool Fp8GemmVariant::eligible(const Fp8GemmProblem& p, const Target& t, std::string* why) const {
  auto no = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return false;
  };
  using S = ir::ScalarType;
  const bool blockwise = p.scaling == Fp8Scaling::Block1x128x128x128 || p.scaling == Fp8Scaling::Block1x128x1x128;
  if (blockwise && config.fp8Accum == Fp8Accum::Fast)
    return no(fmt::format("it sums K steps in the tensor cores (fast accumulation); {} scales apply as each K step's "
                          "sums are promoted",
                          fp8ScalingName(p.scaling)));
  // wgmma names each 8-bit operand's format, so e4m3 and e5m2 mix freely (the same tiles and rates).
  auto fp8 = [](S t) { return t == S::F8E4M3 || t == S::F8E5M2; };
  if (!fp8(p.a) || !fp8(p.b))
    return no(fmt::format("A and B must be f8e4m3 or f8e5m2, not {} and {}", ir::scalarName(p.a), ir::scalarName(p.b)));
  if (p.c != S::BF16) return no(fmt::format("the output must be bf16, not {}", ir::scalarName(p.c)));
  if (p.m <= 0 || p.n <= 0 || p.k <= 0) return no("M, N and K must be positive");
  if (p.strided) return no("a tensor is strided; the FP8 variants address dense tensors");
  if (p.k % 16 != 0) return no(fmt::format("K = {} is not a multiple of 16 (16-byte FP8 rows for TMA)", p.k));
  if (p.n % 8 != 0) return no(fmt::format("N = {} is not a multiple of 8 (16-byte rows of the bf16 output)", p.n));
  if (!t.wgmma || !t.tma) return no(t.name + " has no wgmma / TMA (the FP8 variants need sm_90a)");
  if (p.ragged)
    if (std::string need = raggedWalkConflict(config, p.raggedK); !need.empty())
      return no("the problem has ragged groups, which it cannot walk: they need " + need);
  // 1x128 x 1x128: a scale of B per column. Two steps in flight spill where two consumer
  // warpgroups split the registers (setmaxnreg; sm90 sharedColumnScales, 2026-12-06: 240 bytes of
  // spill at 128x128 tma_pairs, 16 at pairs_row): step k's 64 factors are made while step k + 1's
  // 64 sums and the 64 accumulators and step k's sums are live. One consumer warpgroup keeps the
  // whole file: 64x128 pairs assemble in 218 registers, 64x64 in 117, no spills (the gates test).
  if (p.scaling == Fp8Scaling::Block1x128x1x128 && config.fp8Accum == Fp8Accum::PromotePairs &&
      config.warpsM * config.warpsN > 1)
    return no("it keeps two K steps in flight on two consumer warpgroups, and with a scale of B per column (1x128 x "
              "1x128) both steps' scales do not fit in their registers; it needs single steps (fp8_accum=promote) or "
              "one consumer warpgroup");
  if ((config.fp8Accum == Fp8Accum::Fast) != p.fastAccum && !blockwise)
    return no(p.fastAccum ? "it promotes each K step's sums (the problem asks for fast accumulation)"
                          : "it accumulates in the tensor cores across K steps (fast accumulation, not asked for)");
  int64_t smem = sm90Shape(config, 1).smemBytes;
  if (smem > t.maxSmemPerBlock)
    return no(fmt::format("needs {} bytes of shared memory; {} allows {}", smem, t.name, t.maxSmemPerBlock));
  return true;
}

// Higher is better: the expected speed, relative, from terms fitted on the H200 run above.
//  * Memory-bound (fewer flops per byte than the H200's FP8 balance): the blocks streaming the
//    bytes, as the square root of their share of the half of the SMs that keeps DRAM busy (capped
//    at 1), times the last wave's fill past one wave, 0.93 for a K slice's hand-over, 0.99 for a
//    cluster (ties go to the lone tile), and the useful share of the tiles.
//  * Compute-bound: the useful share, the waves' fill (one tile per SM at a time, ping-pong too;
//    stream-K spreads the last wave at a cost of 40 K steps per block), the tile's intensity to
//    the power 0.2 (128x256 over 128x128: +6%, as measured at 8192^3), and the epilogue: a
//    cooperative tile's costs 2 K steps of its K loop (K steps / (K steps + 2)); a ping-pong one
//    overlaps the other warpgroup's wgmma; promoting the sums (a wait for each K step's wgmma)
//    0.95, two steps in flight 0.969 (kPromotePairsTerm); a cluster 0.99 (blockwise: kBlockScalesClusterTerm);
//    one consumer warpgroup 0.65. Promoted cooperative tiles with rowwise or tensorwise scales take
//    the H100's terms instead: single steps 1.17 of pairs, the epilogue 0 steps behind a six-stage
//    ring and a TMA store, else 4.8 (kPromotedSingleStepRate, kPromotedEpilogueSteps).
//  * Block scales, both branches: the share of each K step the tensor cores work
//    (blockScaleStepTerm), and a cluster pair counts its rows as one tile of bm x 2 rows;
//    memory-bound in K slices, the unsplit tiles' terms times blockScaleSplitRelief.
// A's and B's rows off 32-byte sectors (K bytes each, K not a multiple of 32): each 128-byte box
// row spans five sectors, as for gemm_bf16's operands (its pitchTerm, fitted on many BF16 shapes),
// so each operand a block loads alone costs 1 - 0.5 x its share of the rows a K step loads, and
// an operand a cluster pair shares through multicast (B along M, A along N) escapes. BF16's 0.25
// was refitted on seven FP8 shapes with K = 16 mod 32, where the lone tiles ran at 0.55-0.70 of
// the pairs along M (ping-pong 128x128, the pick before, at 0.53-0.68x cuBLASLt), and held out on
// six more (bench/results/2026-12-01-h200-early-loads/pitch*_*, sectors_*). Compute-bound only:
// small M (the memory-bound branch) loses differently (docs/history/2026-12-01.md, 4478ece).
//
// Rows on sectors but off 128-byte lines (K a multiple of 32, not of 128) cost less, and not by
// operand: pairs gain nothing there, but tiles with more rows per flop lose more. 1 - 0.35 x
// 64 (bm + bn) / (bm bn) (128x128: 0.65, 128x256: 0.74) was fitted on six such shapes where
// 128x256 ran 7-16% ahead of ping-pong 128x128 unless its waves filled badly (lines_*).
static double pitchTerm(const Config& c, const Fp8GemmProblem& p) {
  if (p.k % 128 == 0) return 1.0;
  if (p.k % 32 == 0) return 1.0 - 0.35 * 64.0 * double(c.bm + c.bn) / (double(c.bm) * double(c.bn));
  double aShare = double(c.bm) / double(c.bm + c.bn);
  double a = c.clusterN > 1 ? 1.0 : 1.0 - 0.5 * aShare;
  double b = c.clusterM > 1 ? 1.0 : 1.0 - 0.5 * (1.0 - aShare);
  return a * b;
}

// Whether a block-scaled K step reads every scale from its stage (sm90 slice_scales.cpp:
// sharedRowScales for scale_a, sharedBlockScales or sharedColumnScales for scale_b, copied by TMA
// with the operands): where the rings of stages x bm floats of scale_a and scale_b's boxes or
// columns fit the shared memory after the pipeline's (its output's staging). 128x128 s6 with a BF16
// output's TMA store does not, and keeps its scale_a loads. BlockwiseVariantsAssembleSpillFree
// holds this to the lowering's own decision for every registered variant.
bool blockScalesFromStage(const Config& c, const Fp8GemmProblem& p, const Target& t) {
  const Fp8Scaling mode = p.scaling;
  if (mode != Fp8Scaling::Block1x128x128x128 && mode != Fp8Scaling::Block1x128x1x128) return false;
  if (p.ragged || p.raggedK || p.strided) return false;  // the lowering keeps their scales in global memory
  if (c.swapAB || c.bm > 224 || c.bm % 32 != 0 || c.warpsN != 1 || c.blocksPerSm > 1 || c.bk != 128) return false;
  const int64_t pipeline = (sm90Shape(c, 1, ir::bitWidth(p.c) / 8).smemBytes + 127) / 128 * 128;
  const int64_t boxes = 128 % c.bn == 0 ? 1 : c.bn % 128 == 0 ? c.bn / 128 : 2;  // 128x128 blocks a tile spans
  const int64_t ringB = mode == Fp8Scaling::Block1x128x1x128 ? int64_t(c.stages) * c.bn * 4 : int64_t(c.stages) * 128 * boxes;
  return pipeline + ringB + int64_t(c.stages) * (c.bm + 32) * 4 <= t.maxSmemPerBlock;  // scale_a's rows of bm + 32
}

// A 64-row ring with one consumer warpgroup whose block scales all come from its stage: nothing
// of the promotion waits on a global load, and no other warpgroup's wgmmas hide its wait.
static bool stagedRing(const Config& c, const Fp8GemmProblem& p, const Target& t) {
  return c.warpsM * c.warpsN == 1 && blockScalesFromStage(c, p, t);
}

// The share of the SMs whose streaming keeps DRAM busy, for config c on problem p.
static double streamingShare(const Config& c, const Fp8GemmProblem& p, const Target& t) {
  return stagedRing(c, p, t) ? kStreamingSmsToSaturateFromStage : kStreamingSmsToSaturate;
}

// A promoted K step with block scales, in cycles of one SM: the tensor work, the wait and the
// scale instructions (kBlockScaleWaitCycles; none for a staged ring, stagedRing: run 13's 64x64
// rings ran 4% behind 64x128 at 64x7168x16384 and 9% ahead at 64x4096x7168, where the 150-cycle
// wait had put them 6-13% behind before the scales came from the stage).
static double blockScaleStepCycles(const Config& c, const Fp8GemmProblem& p, const Target& t) {
  const Fp8Scaling mode = p.scaling;
  const int consumers = c.warpsM * c.warpsN, blocks = std::max(1, c.bm / c.warpsM / 64);
  // The 128-column blocks of B one tile's columns can touch (160 columns: two).
  const int spans = (c.bn + 127) / 128 + (c.bn % 128 != 0 && 128 % c.bn != 0 ? 1 : 0);
  const double instr = mode == Fp8Scaling::Block1x128x1x128
                           ? blocks * c.bn / 2.0 + c.bn / 8.0 + 2.0 * blocks  // FMUL per row-block and column pair, loads
                           : 2.0 * blocks + spans + 2.0 * blocks * spans;      // scale_a / scale_b loads, FMULs
  const double wait = stagedRing(c, p, t)                                          ? 0.0
                      : consumers > 1 && c.fp8Accum == Fp8Accum::Promote ? kBlockScaleWaitCyclesTwoConsumers
                                                                           : kBlockScaleWaitCycles;
  return double(c.bm) * double(c.bn) / 32.0 + wait + kBlockScaleCyclesPerInstr * consumers * instr;
}

// The share of a K step the tensor cores work when block scales are promoted.
static double blockScaleStepTerm(const Config& c, const Fp8GemmProblem& p, const Target& t) {
  return double(c.bm) * double(c.bn) / 32.0 / blockScaleStepCycles(c, p, t);
}

// Memory-bound, block scales, split_k = S: how much sooner the S slices finish than the unsplit
// tiles, each time the longer of DRAM's (1 / coverage of the blocks streaming, as in preference)
// and the promotion's chain (a block's K steps one after another, blockScaleStepCycles each, in
// units of the problem's bytes at the read ceiling: kChainBytesPerStepCycle). The unsplit terms
// (fitted on measured unsplit kernels) then stand for the tiles, so a split ranks by this ratio
// against its twin: at 64x7168x16384 with 1x128 x 1x128 the 56 tiles of 64x128 take 1.94 (their
// chain; DRAM alone 1.09), the 112 slices 1.0 (DRAM; chain 1.0 with the hand-over). Where the
// chain is short (rowwise and tensorwise scales: no term), a slice has few K steps (the hand-over
// outweighs them) or the slices need more waves, it gives nothing.
static double blockScaleSplitRelief(const Config& c, const Fp8GemmProblem& p, const Target& t, int64_t tiles,
                                    int64_t slots, int64_t sms, double bytes) {
  auto time = [&](int64_t splits) {
    const int64_t units = tiles * splits;
    const double active = double(std::min(units, slots));
    const double memory = 1.0 / std::min(1.0, std::sqrt(active / (streamingShare(c, p, t) * double(sms))));
    const double steps = (double(ceilDiv(ceilDiv(p.k, c.bk), splits)) + (splits > 1 ? kSplitHandOverSteps : 0.0)) *
                         double(ceilDiv(units, slots));
    // A staged ring's chain runs under the stream (run 13: the unsplit 64x128 rings at 94% of the
    // read ceiling in both modes), so only DRAM's coverage tells the slices apart.
    if (stagedRing(c, p, t)) return memory;
    return std::max(memory, steps * blockScaleStepCycles(c, p, t) * kChainBytesPerStepCycle / bytes);
  };
  return time(1) / time(c.splitK);
}

double Fp8GemmVariant::preference(const Fp8GemmProblem& p, const Target& t) const {
  const Config& c = config;
  const int64_t sms = std::max(1, t.referenceSms);
  const double flops = 2.0 * double(p.m) * double(p.n) * double(p.k);
  const double bytes = double(p.m) * double(p.k) + double(p.k) * double(p.n) + 2.0 * double(p.m) * double(p.n);
  const bool pingpong = c.consumers == Consumers::Pingpong;
  const int64_t cm = c.clusterM;
  const int64_t tiles = ceilDiv(p.m, int64_t(c.bm) * cm) * ceilDiv(p.n, c.bn);
  // Units of the persistent loop and the slots of one wave: a cluster takes cm SMs. A ping-pong
  // block holds two tiles at once but shares one SM's tensor cores between them, so its waves
  // count one tile per SM too.
  const int64_t units = tiles * c.splitK, slots = sms / cm;
  // A cluster pair along M covers bm x cm rows: at M = 128 a pair of 128-row tiles leaves one idle.
  const double useful = double(p.m) * double(p.n) /
                        (double(ceilDiv(p.m, int64_t(c.bm) * cm) * c.bm * cm) * double(ceilDiv(p.n, c.bn) * c.bn));
  const double waves = double(units) / double(ceilDiv(units, slots) * slots);
  // The "_row" variants stay behind their grouped-raster twins, dense or ragged (the grouped walk
  // keeps a wave's tiles of B in L2; unmeasured: a tie-break).
  const double raster = c.raster == Raster::Row ? 0.97 : 1.0;
  const bool blockwise = p.scaling == Fp8Scaling::Block1x128x128x128 || p.scaling == Fp8Scaling::Block1x128x1x128;
  const double blockScales = blockwise ? blockScaleStepTerm(c, p, t) : 1.0;
  const bool computeBound = flops / bytes >= kH200Fp8FlopsPerByte;
  const double cluster = cm == 1 ? 1.0 : blockwise && computeBound ? kBlockScalesClusterTerm : 0.99;
  if (!computeBound) {
    // Block scales in K slices: the unsplit tiles' terms, times how much sooner the slices finish.
    const bool relieved = blockwise && c.splitK > 1;
    const int64_t streams = relieved ? tiles : units;
    double active = double(std::min(streams, slots) * cm);
    double coverage = std::min(1.0, std::sqrt(active / (streamingShare(c, p, t) * double(sms))));
    double fill = ceilDiv(streams, slots) > 1 ? double(streams) / double(ceilDiv(streams, slots) * slots) : 1.0;
    double relief = relieved ? blockScaleSplitRelief(c, p, t, tiles, slots, sms, bytes) : 1.0;
    return blockScales * raster * coverage * fill * relief * (c.splitK > 1 ? 0.93 : 1.0) * cluster * useful;
  }
  const double ksteps = double(ceilDiv(p.k, c.bk)) / c.splitK;
  double fill = waves;
  if (c.streamK) {
    double perSlot = double(units) / double(slots);
    fill = perSlot / (perSlot + kStreamKOverheadSteps / ksteps) * 0.97;
  }
  // Ragged groups of rows: the expected waves of the groups' tiles (ragged_waves.h; the tile count
  // is on the device), data-parallel or stream-K, over the dense problem's work.
  if (p.ragged && !p.raggedK && cm == 1) {
    RaggedWaves r = raggedWaves(p.m, p.n, c.bm, c.bn, p.groups, slots, c.streamK != 0, kStreamKOverheadSteps, ksteps);
    fill = double(units) / double(slots) / r.time * (c.streamK ? 0.97 : 1.0);
  }
  double intensity = std::pow((double(c.bm) * c.bn / (c.bm + c.bn)) / 64.0, 0.2);
  double epilogue = pingpong ? 1.0 : ksteps / (ksteps + 2.0);
  double promote = c.fp8Accum == Fp8Accum::Fast      ? 1.0
                   : c.fp8Accum == Fp8Accum::Promote ? kPromoteTerm
                                                     : kPromotePairsTerm;
  // The H100 fit of the promoted cooperative tiles with epilogue scales (above): only promoted
  // variants compete for such a problem, so the terms are relative among them.
  if (!blockwise && c.fp8Accum != Fp8Accum::Fast && !pingpong && c.warpsM * c.warpsN >= 2) {
    promote = c.fp8Accum == Fp8Accum::Promote ? kPromotedSingleStepRate : 1.0;
    const bool hidden = c.epilogue == EpilogueStore::Tma && c.stages >= 6;
    epilogue = ksteps / (ksteps + (hidden ? 0.0 : kPromotedEpilogueSteps));
  }
  double split = c.splitK > 1 ? 0.9 : 1.0;
  // One consumer warpgroup issues every wgmma and waits on every barrier itself: compute-bound,
  // 64x128 ran at 0.60 of 128x256 per SM at 8192^3, where the intensity term gives 0.87.
  double lone = c.warpsM * c.warpsN == 1 ? 0.65 : 1.0;
  return blockScales * raster * useful * fill * intensity * epilogue * promote * split * cluster * lone * pitchTerm(c, p);
}

std::optional<CompileResult> Fp8GemmVariant::compile(const Target& t, ir::DiagnosticEngine& diag) const {
  return kiln::compile(*fp8ScaledGemmProgram(name), t, config, diag);
}

std::optional<Fp8GemmSelection> selectGemmFp8(const Fp8GemmProblem& p, const Target& t, ir::DiagnosticEngine& diag,
                                              std::string_view forced) {
  return selectVariant<Fp8GemmSelection>(gemmFp8Variants(), p, t, diag, forced, "gemm_fp8",
                                         "fp8_gemm_sm90_128x256x128_s4_tma_fastacc");
}

}  // namespace kiln::ops
