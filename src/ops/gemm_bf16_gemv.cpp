// gemm_bf16's gemv variants (strategy=gemv, docs/gemv-strategy.md) and their rules: a GEMM of at
// most 16 rows reads B once, so its time is B's bytes over the memory's bandwidth. The gemv kernel
// streams B in 16-byte loads and sums on the CUDA cores; tensor cores gain nothing while the FMAs
// per byte of B (M / 2 for 16-bit B) stay under what the SM issues per byte the memory delivers.
// On an H100 (132 SMs x 4 schedulers x ~1.75 GHz, 3.35 TB/s) that is about 9 instructions per B
// element, the FMAs of M rows and an unpack: M = 16 would be bound by issue. Measured, the budget
// is far smaller than that peak (gemvPreferredRows): where Hopper's tensor-core variants can run
// the problem the family prefers gemv up to M = 2 only (M = 1 with a column-major A), elsewhere up
// to M = 8; gemv stays eligible up to 16, for a forced pick, kiln tune and the benchmark.
#include <algorithm>

#include <fmt/format.h>

#include "ops/gemm_bf16.h"

namespace kiln::ops {

namespace {

constexpr int kMaxRows = 16;  // the strategy's bm limit
// Rows up to which the family prefers gemv where only the mma.sync variants compete (sm_80): the
// issue budget above (docs/gemv-strategy.md); sm80_multistage ran M = 1 at 0.17-0.75x cuBLAS
// (H100, 2026-12-06), and no run has measured it against gemv at M = 2..8.
constexpr int kPreferredRows = 8;
// Rows up to which the family prefers gemv over the sm90 tensor-core variants (refit here from
// kiln_layouts_bench --set gemv's M = 2 and M = 4 rows). H100 run of 2026-12-06 at aa54445
// (bench/results/2026-12-06-h100-s4: gemv.md, tune_m1.json): the sm90 64x64x64 s13 variant (split_k 2 under a wave) takes
// ~20 us at 4096 x 4096 whatever M (20.3 us tuned at M = 1, 19.6-21.0 at M = 16, 1.03-1.11x
// cuBLAS): memory-bound, its MMAs' empty rows cost nothing. gemv is read-bound at M = 1
// (20.2-22.3 us) but at M = 8 took 41.5 us NN / 32.1 NT / 41.2 TN (105.8 / 95.4 / 103.4 at
// 14336 x 4096): about 5.2 us a row of M at 4096 x 4096 (13 at 14336 x 4096), 2x the read time
// and 6-8x under the FP32 peak's 8 FMAs + unpack per element (the sums' registers, the A loads,
// the reductions). Cost per element ~ M + 2 slots (FMAs, unpack, A and address): M = 4 is 6 of
// M = 8's 10, ~25 us at 4096 x 4096 (at least 21 even linear in M) against ~20: the tensor cores.
// M = 2 is 4 slots, ~17 us of issue under ~20.5 us of reading: read-bound like M = 1, a tie with
// the tensor cores; gemv keeps it (it is M = 1's kernel with two rows).
constexpr int kPreferredRowsOverWgmma = 2;
// A column-major A over a K-major B (TT) at M > 1: the K path loads A element by element, M
// loads per B element at a quarter of the FMA rate (163.5 us at M = 8 against NT's 32.1); TN on
// the N path broadcasts A (41.2 us, as NN). At M = 2 TN/TT gain nothing over the tensor cores'
// ~21 us (TN/TT at M = 16: 21.0), so a column-major A keeps gemv at M = 1 only. (A dense one has
// rows of 2M bytes, which TMA addresses only at M = 8, 16: below that no sm90 variant runs it.)
constexpr int kPreferredRowsOverWgmmaColumnMajorA = 1;

int ceilPow2(int64_t m) {
  int p = 1;
  while (p < m) p *= 2;
  return p;
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Loads of B per thread issued before their FMAs: enough bytes in flight at few rows, fewer as
// the bm x (columns or N rows) sums take the registers (at bm = 16 two spill on sm_80 with a
// column-major A: the gates).
int loadsInFlight(int bm) { return bm <= 2 ? 8 : bm <= 8 ? 4 : 1; }

// Slices of K per block tile (split_k, docs/gemv-strategy.md "Split-K"). Three blocks of 256
// threads fit an SM at once (72 registers a thread at M = 1 on sm_90a), each with 256 x vectors
// 16-byte loads in flight: the tiles alone fill the GPU from about three per SM (the H100 run of
// 2026-12-06: 448 tiles of 28672 x 8192 ran at 0.94 of the read ceiling, 128 of 4096 x 4096 at
// 0.53). Below that, K is split so that tiles x slices is about three blocks per SM, all resident
// in one wave; every slice gets the same whole number of K steps (none past K at the problem's
// own K), and at most 16 slices (their partial sums and the finishing block's stay small beside B).
int gemvSplits(const Config& c, const GemmProblem& p, int V, int sms) {
  const int64_t tiles = ceilDiv(p.n, c.bn) * ceilDiv(p.m, c.bm);
  const int64_t resident = 3 * int64_t(sms);
  if (sms <= 0 || tiles >= resident) return 1;
  const int64_t step = p.bKMajor ? int64_t(c.rowThreads) * V * c.vectors : int64_t(c.blockThreads / (c.bn / V)) * c.vectors;
  const int64_t steps = ceilDiv(p.k, step);
  int64_t s = std::min<int64_t>({(resident + tiles / 2) / tiles, steps, 16});
  if (s <= 1) return 1;
  return int(ceilDiv(steps, ceilDiv(steps, s)));
}

// Split-K in ONE wave, at 16-byte loads (docs/gemv-strategy.md, "One wave"): a split block keeps
// 4 loads of B in flight per thread (4 rows of one column strip on the N path; 4 / R K vectors of
// each of its R N rows on the K path), which takes 55-60 registers at M = 1 on sm_80 and sm_90a:
// four 256-thread blocks per SM (72 at M = 2 on the N path: three). The slices are as many as fit
// in one wave of those resident blocks (tiles x slices <= resident): a partial second wave leaves
// its few blocks reading alone (the H100 run of 2026-12-06, d015204: 14336 x 4096 NN split 2 ways
// into 448 blocks for 396 places ran at 0.80 of the read ceiling), and each slice gets the same
// whole number of steps, as gemvSplits. Too many tiles for two slices a tile: unsplit, with the
// variant's loads. Returns false where this rule does not apply (gemvSplits' then).
bool oneWaveSplit(Config& c, const GemmProblem& p, int V, int sms) {
  const int rows = p.bKMajor ? c.bn / (c.blockThreads / 32) : 1;  // N rows per warp (K path)
  if (V != 8 || c.bm > (p.bKMajor ? 1 : 2) || rows > 4 || c.rowThreads != 32) return false;
  const int64_t tiles = ceilDiv(p.n, c.bn) * ceilDiv(p.m, c.bm);
  const int64_t resident = int64_t(c.bm == 1 ? 4 : 3) * std::max(0, sms);
  c.splitK = 1;
  if (tiles * 2 > resident) return true;
  const int vectors = 4 / rows;
  const int64_t step = p.bKMajor ? int64_t(c.rowThreads) * V * vectors : int64_t(c.blockThreads / (c.bn / V)) * vectors;
  const int64_t steps = ceilDiv(p.k, step);
  const int64_t s = std::min<int64_t>({resident / tiles, steps, 16});
  if (s <= 1) return true;
  c.vectors = vectors;
  c.splitK = int(ceilDiv(steps, ceilDiv(steps, s)));
  return true;
}

}  // namespace

std::vector<GemmVariant> gemmBf16GemvVariants() {
  std::vector<GemmVariant> t;
  for (int bm : {1, 2, 4, 8, 16}) {
    GemmVariant v;
    v.name = fmt::format("bf16_gemv_m{}", bm);
    v.config = *defaultConfig("gemv");
    v.config.bm = bm;
    v.config.bn = 32;
    v.config.vectors = loadsInFlight(bm);
    t.push_back(std::move(v));
  }
  return t;
}

bool gemvEligible(const GemmVariant& v, const GemmProblem& p, const Target&, std::string* why) {
  auto no = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return false;
  };
  if (p.m > kMaxRows) return no(fmt::format("gemv runs M up to {} (the sums of bm rows sit in registers); M={}", kMaxRows, p.m));
  if (p.grouped) return no("gemv does not lower grouped GEMMs (tile.group_index)");
  (void)v;
  return true;
}

int gemvPreferredRows(const GemmProblem& p, const Target& t) {
  // The sm90 variants run it (sm_90a, TMA-aligned rows, no stride 0): they win above a few rows.
  bool wgmma = false;
  for (const GemmVariant& v : gemmBf16Variants())
    if (v.config.strategy == "sm90_ws_persistent" && v.eligible(p, t, nullptr)) {
      wgmma = true;
      break;
    }
  if (!wgmma) return kPreferredRows;
  return p.aRowMajor ? kPreferredRowsOverWgmma : kPreferredRowsOverWgmmaColumnMajorA;
}

double gemvPreference(const GemmVariant& v, const GemmProblem& p, const Target& t) {
  // The variant whose bm is M rounded up to a power of two: one block row along M, no sums wasted.
  const double own = v.config.bm == ceilPow2(p.m) ? 4.0
                     : v.config.bm > p.m         ? 3.0 / v.config.bm
                                                 : 0.5 / ceilDiv(p.m, v.config.bm);
  // Above the preferred rows: below every tensor-core variant's score, in the same order.
  if (p.m > gemvPreferredRows(p, t)) return 0.05 * own / 4.0;
  return own;
}

Config gemvConfigFor(const Config& variant, const GemmProblem& p, int sms) {
  Config c = variant;
  // A load never straddles a row's end: B's contiguous dim (N, or K when K-major) and A's (K, or M
  // for a column-major A, whose vectors run along M) bound the widths too (p's alignments are the
  // leading dimensions' for strided operands, which may be longer than the rows).
  c.alignA = std::min({c.alignA, p.alignA, rowAlignment(p.aRowMajor ? p.k : p.m, 2)});
  // A strided row-major B is the exception: its rows are as aligned as its leading dimension, and
  // the lowering loads the columns past N's last whole vector one at a time (gemv.cpp, nTail).
  const bool nTail = !p.bKMajor && p.bStrided;
  c.alignB = std::min({c.alignB, p.alignB, nTail ? 16 : rowAlignment(p.bKMajor ? p.k : p.n, 2)});
  c.alignC = std::min(c.alignC, p.alignC);
  // B's elements per load, as the lowering derives them (gemv.cpp, accessBytes).
  int bytes = 16;
  while (bytes > 2 && bytes > c.alignB) bytes /= 2;
  const int V = bytes / 2;
  // The widest block (longest contiguous runs of B per row on the N path, most N rows per group on
  // the K path) whose grid still fills about a wave of the SMs: no K split across blocks is needed
  // for N of a few thousand and up (docs/gemv-strategy.md, "Grid").
  const int warps = c.blockThreads / 32;
  if (!p.bKMajor && V == 8 && c.bm <= 2) {
    // 64 columns (128-byte runs of each B row: 64-byte runs, bn = 32, read at 0.72-0.78 of the
    // read ceiling on the H100 where 128-byte runs read at 0.89-0.95, run of 2026-12-06 d015204),
    // at most N rounded up to a power of two; split-K, not narrower blocks, fills the GPU.
    c.bn = 8;
    while (c.bn < 64 && c.bn < p.n) c.bn *= 2;
    c.vectors = loadsInFlight(c.bm);
    if (oneWaveSplit(c, p, V, sms)) return c;
  }
  std::vector<int> widths = p.bKMajor ? std::vector<int>{4 * warps, 2 * warps, warps} : std::vector<int>{64, 32, 16, 8};
  c.bn = widths.back();
  for (int bn : widths) {
    if (!p.bKMajor && (bn % V || bn / V > 32)) continue;
    if (ceilDiv(p.n, bn) * 10 >= int64_t(sms) * 9) {
      c.bn = bn;
      break;
    }
  }
  if (!p.bKMajor && c.bn / V > 32) c.bn = 32 * V;
  const int rows = p.bKMajor ? c.bn / warps : 1;  // N rows per warp on the K path
  c.vectors = std::max(1, loadsInFlight(c.bm) / rows);
  if (oneWaveSplit(c, p, V, sms)) return c;
  c.splitK = gemvSplits(c, p, V, sms);
  return c;
}

}  // namespace kiln::ops
