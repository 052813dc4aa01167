// The gemv option space of kiln tune (contract in gemv_space.h): generated around the family's
// pick, pruned by the strategy's rules and the resources a block takes, scored by its distance
// from the pick.
#include "tune/gemv_space.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "ops/gemm_bf16.h"

namespace kiln::tuning {
namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
bool pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

// B's elements per load, as the lowering derives them from align_b (gemv.cpp, accessBytes).
int vectorElems(const Config& c, const GemmShape& g) {
  int bytes = 16;
  while (bytes > g.elemBytes && bytes > c.alignB) bytes /= 2;
  return std::max(1, bytes / g.elemBytes);
}

// N rows each group of row_threads lanes owns (K path); 1 on the N path.
int rowsPerGroup(const Config& c, const GemmShape& g) {
  return g.bKMajor ? std::max(1, c.bn / std::max(1, c.blockThreads / c.rowThreads)) : 1;
}

// K elements one step of a block covers (as ops/gemm_bf16_gemv.cpp's split rule counts them).
int64_t kStep(const Config& c, const GemmShape& g) {
  const int V = vectorElems(c, g);
  if (g.bKMajor) return int64_t(c.rowThreads) * V * c.vectors;
  return int64_t(std::max(1, c.blockThreads / std::max(1, c.bn / V))) * c.vectors;
}

// A gemv thread's registers (the gates: 40 to 72 at M = 1 on sm_90a): what an SM's blocks are
// counted at.
constexpr int kRegistersPerThread = 64;

// A thread's registers, estimated: its sums (bm x its columns or N rows), the loads of B in
// flight (V / 2 registers each for 16-bit elements), A's values for them, and addresses and
// indices (about 24).
int registersNeeded(const Config& c, const GemmShape& g) {
  const int V = vectorElems(c, g), R = rowsPerGroup(c, g);
  const int loadRegs = std::max(1, V * g.elemBytes / 4);
  if (g.bKMajor) return c.bm * R + c.vectors * R * loadRegs + c.bm * V + 24;
  return c.bm * V + c.vectors * loadRegs + c.bm * c.vectors + 24;
}

// Options changed from the pick (the score's distance).
int changed(const Config& c, const Config& pick) {
  return (c.bn != pick.bn) + (c.blockThreads != pick.blockThreads) + (c.rowThreads != pick.rowThreads) +
         (c.vectors != pick.vectors) + (c.splitK != pick.splitK);
}

}  // namespace

int gemvMaxSplits(const Config& c, const GemmShape& g, const Target& t) {
  const int64_t tiles = ceilDiv(g.n, c.bn) * ceilDiv(g.m, c.bm) * std::max<int64_t>(1, g.batch);
  const int64_t perSm = std::max(1, t.registersPerSm / (c.blockThreads * kRegistersPerThread));
  const int64_t twoWaves = 2 * perSm * std::max(1, g.sms);
  const int64_t steps = ceilDiv(g.k, kStep(c, g));
  return int(std::clamp<int64_t>(std::min(ceilDiv(twoWaves, tiles), steps), 1, 16));
}

std::string gemvRefusal(const Config& c, const GemmShape& g, const Target& t) {
  ir::DiagnosticEngine quiet;
  if (!validate(c, t, {g.elemBytes, g.elemBytes}, quiet)) {
    std::string s = quiet.str();
    s = s.substr(0, s.find('\n'));
    const size_t at = s.find("error: ");
    return at == std::string::npos ? s : s.substr(at + 7);
  }
  const int V = vectorElems(c, g);
  if (!g.bKMajor && (c.bn % V || !pow2(c.bn / V) || c.bn / V > 32))
    return fmt::format("bn={} is not {} columns (one load) times a power of two up to 32", c.bn, V);
  if (g.bKMajor && c.bn % (c.blockThreads / c.rowThreads))
    return fmt::format("bn={} N rows do not share evenly among {} groups of row_threads={}", c.bn,
                       c.blockThreads / c.rowThreads, c.rowThreads);
  // Shared memory: the block's sums, [bm][bn rounded up to 32] f32, and on the N path one copy per
  // warp of its partial sums (gemv_loops.h, Geometry::smemBytes).
  const int64_t sums = int64_t(c.bm) * ((c.bn + 31) / 32 * 32) * 4;
  const int64_t smem = sums + (g.bKMajor ? 0 : int64_t(c.blockThreads / 32) * sums);
  if (smem > t.maxSmemPerBlock)
    return fmt::format("needs {} bytes of shared memory, over the {} a block has on {}", smem, t.maxSmemPerBlock,
                       t.name);
  const int cap = std::min(t.maxRegistersPerThread, t.registersPerSm / c.blockThreads);
  const int need = registersNeeded(c, g);
  if (need > cap)
    return fmt::format("needs about {} registers a thread (bm={} rows of sums, {} loads of B in flight), over the {} "
                       "that block_threads={} leaves each",
                       need, c.bm, c.vectors * rowsPerGroup(c, g), cap, c.blockThreads);
  const int64_t steps = ceilDiv(g.k, kStep(c, g));
  if (c.splitK > steps)
    return fmt::format("split_k={} is more slices than K's {} steps of {}", c.splitK, steps, kStep(c, g));
  return "";
}

std::vector<Candidate> gemvSpace(const GemmShape& g, const Config& pick, double pickScore, const Target& t, int limit,
                                 SpaceStats* stats) {
  SpaceStats local;
  SpaceStats& st = stats ? *stats : local;
  std::vector<Candidate> out;
  std::set<std::string> seen;
  auto add = [&](const Config& c, bool always) {
    if (!seen.insert(c.str()).second) return;
    ++st.generated;
    if (!always) {
      if (std::string why = gemvRefusal(c, g, t); !why.empty()) {
        ++st.invalid;
        st.refused.emplace_back(c.str(), why);
        return;
      }
    }
    out.push_back({c, "space: gemv", pickScore * std::pow(kNeighbourDiscount, changed(c, pick))});
  };
  add(pick, true);
  // The family's rule at the device's SM count (the pick is sized at the target's reference count).
  ops::GemmProblem p{g.m, g.n, g.k};
  p.bKMajor = g.bKMajor;
  p.alignA = pick.alignA, p.alignB = pick.alignB, p.alignC = pick.alignC;
  add(ops::gemvConfigFor(pick, p, g.sms), true);
  const int loadsPick = pick.vectors * rowsPerGroup(pick, g);
  const int V = vectorElems(pick, g);
  for (int threads : {128, 256, 512})
    for (int rowThreads : g.bKMajor ? std::vector<int>{16, 32} : std::vector<int>{pick.rowThreads}) {
      const int groups = threads / rowThreads;
      const std::vector<int> widths =
          g.bKMajor ? std::vector<int>{groups, 2 * groups, 4 * groups} : std::vector<int>{8, 16, 32, 64};
      for (int bn : widths) {
        if (!g.bKMajor && (bn % V || bn / V > 32)) continue;
        for (int loads : {loadsPick / 2, loadsPick, loadsPick * 2}) {
          Config c = pick;
          c.blockThreads = threads;
          c.rowThreads = rowThreads;
          c.bn = bn;
          c.vectors = std::clamp(loads / rowsPerGroup(c, g), 1, 8);
          c.splitK = 1;
          const int most = gemvMaxSplits(c, g, t);
          for (int s : {1, 2, 3, 4, 6, 8, 12, 16}) {
            if (s > most) break;
            c.splitK = s;
            add(c, false);
          }
        }
      }
    }
  // The pick first, the rest by distance from it; cut to the limit.
  std::stable_sort(out.begin() + 1, out.end(), [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
  if (int(out.size()) > limit) {
    st.pruned += int(out.size()) - std::max(0, limit);
    out.resize(std::max(0, limit));
  }
  st.kept += int(out.size());
  return out;
}

}  // namespace kiln::tuning
