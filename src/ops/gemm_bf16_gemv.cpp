// gemm_bf16's gemv variants (strategy=gemv, docs/gemv-strategy.md) and their rules: a GEMM of at
// most 16 rows reads B once, so its time is B's bytes over the memory's bandwidth. The gemv kernel
// streams B in 16-byte loads and sums on the CUDA cores; tensor cores gain nothing while the FMAs
// per byte of B (M / 2 for 16-bit B) stay under what the SM issues per byte the memory delivers.
// On an H100 (132 SMs x 4 schedulers x ~1.75 GHz, 3.35 TB/s) that is about 9 instructions per B
// element, the FMAs of M rows and an unpack: M <= 8 leaves room, M = 16 would be bound by issue,
// so the family prefers gemv up to M = 8 and the tensor-core variants above it (gemv stays
// eligible up to 16, for a forced pick and the benchmark's comparison).
#include <algorithm>

#include <fmt/format.h>

#include "ops/gemm_bf16.h"

namespace kiln::ops {

namespace {

constexpr int kMaxRows = 16;  // the strategy's bm limit
constexpr int kPreferredRows = 8;

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

double gemvPreference(const GemmVariant& v, const GemmProblem& p, const Target&) {
  if (p.m > kPreferredRows) return 0.05;  // below every tensor-core variant's score
  // The variant whose bm is M rounded up to a power of two: one block row along M, no sums wasted.
  if (v.config.bm == ceilPow2(p.m)) return 4.0;
  return v.config.bm > p.m ? 3.0 / v.config.bm : 0.5 / ceilDiv(p.m, v.config.bm);
}

Config gemvConfigFor(const Config& variant, const GemmProblem& p, int sms) {
  Config c = variant;
  // A load never straddles a row's end: B's contiguous dim (N, or K when K-major) and, for A's
  // vectors along K, K bound the widths too (p's alignments are the leading dimensions' for
  // strided operands, which may be longer than the rows).
  c.alignA = std::min({c.alignA, p.alignA, rowAlignment(p.k, 2)});
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
