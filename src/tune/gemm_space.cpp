// The GEMM option space of kiln tune (contract in gemm_space.h): generated, validated, scored and
// cut to a limit with a quota per class.
#include "tune/gemm_space.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "ops/bucket_reuse.h"
#include "ops/gemm_bf16.h"
#include "ops/gemm_fp8.h"
#include "schedule/gemm_analysis.h"

namespace kiln::tuning {
namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int roundUp(int64_t v, int step) { return int(ceilDiv(v, step) * step); }

// The tile sizes tried along a dim: the usual ones, and for each, the size that splits the dim
// into as many equal tiles (rounded up to `step`), so that the last tile is not mostly padding
// (M = 544: 136-row tiles, four of them, where 128-row tiles need five, the last 32 rows full).
std::vector<int> tileSizes(int64_t dim, const std::vector<int>& usual, int step, int lo, int hi) {
  std::set<int> out;
  for (int u : usual) {
    if (u < lo || u > hi) continue;
    out.insert(u);
    for (int64_t tiles : {ceilDiv(dim, u), ceilDiv(dim, u) - 1}) {
      if (tiles < 1) continue;
      int fit = roundUp(ceilDiv(dim, tiles), step);
      if (fit >= lo && fit <= hi) out.insert(fit);
    }
  }
  // A dim smaller than the smallest tile: one tile of its own size.
  if (dim < lo && roundUp(dim, step) <= hi) out.insert(std::max(step, roundUp(dim, step)));
  return {out.begin(), out.end()};
}

// The deepest ring (up to the option's 16 stages) whose shared memory fits a block, or with
// blocks_per_sm=2 two blocks in an SM (each with the 1 KB the hardware reserves); 0 when none does.
int deepestStages(Config c, const GemmShape& g, const Target& t) {
  for (int s = 16; s >= 2; --s) {
    c.stages = s;
    int64_t bytes = c.strategy == "sm90_ws_persistent" ? sm90Shape(c, g.elemBytes, g.cElemBytes).smemBytes
                                                        : c.pipelineSmemBytes(g.elemBytes, g.elemBytes);
    if (c.blocksPerSm == 2 ? 2 * (bytes + 1024) <= t.smemPerSm : bytes <= t.maxSmemPerBlock) return s;
  }
  return 0;
}

// Consumer warpgroup layouts of sm90_ws_persistent with the tile shapes each takes; `rows` and
// `cols` are one warpgroup's share of the tile.
struct Layout {
  bool swap = false, pingpong = false;
  int wm = 1, wn = 1;
};

std::vector<Config> sm90Tiles(const GemmShape& g) {
  const std::vector<int> usual = {64, 96, 128, 160, 192, 224, 256};
  std::vector<Config> out;
  Config base = *defaultConfig("sm90_ws_persistent");
  base.bk = 128 / g.elemBytes;
  base.l2Hint = L2Hint::Reuse;
  base.raster = Raster::Grouped;
  base.groupM = 8;
  if (g.fp8) base.fp8Accum = g.fp8Accum;
  // FP8 that promotes each K step's sums does so one step at a time or two (the same sums, added
  // in the same order; two in flight let the tensor cores run one while the other is added).
  std::vector<Fp8Accum> accums = {base.fp8Accum};
  if (g.fp8 && g.fp8Accum != Fp8Accum::Fast) accums = {Fp8Accum::Promote, Fp8Accum::PromotePairs};
  auto add = [&](const Layout& l, int bm, int bn) {
    Config c = base;
    c.bm = bm;
    c.bn = bn;
    c.warpsM = l.wm;
    c.warpsN = l.wn;
    c.swapAB = l.swap;
    c.consumers = l.pingpong ? Consumers::Pingpong : Consumers::Cooperative;
    for (Fp8Accum a : accums) {
      c.fp8Accum = a;
      out.push_back(c);
    }
  };
  // Unswapped: warpgroups of 64 or 128 rows (m64 wgmma blocks), the width any multiple of 16.
  const std::vector<int> widths = tileSizes(g.n, usual, 16, 64, 256);
  for (const Layout& l : {Layout{false, false, 1, 1}, Layout{false, false, 2, 1}, Layout{false, false, 3, 1},
                          Layout{false, true, 2, 1}})
    for (int rows : {64, 128})
      for (int bn : widths) {
        int bm = l.pingpong ? rows : rows * l.wm;
        if (l.wm == 3 && rows != 64) continue;
        add(l, bm, bn);
      }
  // Swapped (16-bit operands): a warpgroup's rows are wgmma's N, any multiple of 8 up to 256, so
  // the height fits M; its columns whole m64 blocks. With an f32 output the config rules refuse
  // them (stmatrix .trans stages 16-bit matrices), which the space records with their sentence.
  if (g.elemBytes == 2)
    for (const Layout& l : {Layout{true, false, 1, 1}, Layout{true, false, 2, 1}, Layout{true, false, 1, 2},
                            Layout{true, false, 1, 3}, Layout{true, false, 3, 1}})
      for (int bm : tileSizes(g.m, usual, 8 * l.wm, 8 * l.wm, std::min(256, 256 * l.wm)))
        for (int bn : {64, 128, 192, 256})
          if (bn % (64 * l.wn) == 0) add(l, bm, bn);
  return out;
}

// The epilogue's store and staging for a tile: TMA (through stmatrix when swapped) with its
// default slots, one slot or row pieces where that frees a ring stage, and (unswapped) the direct
// store from registers. The ring's depth counts the output's staged boxes (g.cElemBytes); which
// staging an f32 output may use is the config rules' to say (accept in gemmSpace).
std::vector<Config> sm90Epilogues(const Config& tile, const GemmShape& g, const Target& t) {
  std::vector<Config> out;
  auto withStages = [&](Config c) {
    c.stages = deepestStages(c, g, t);
    if (c.stages >= 2) out.push_back(c);
    return c.stages;
  };
  if (tile.bn >= 64) {
    Config c = tile;
    c.epilogue = EpilogueStore::Tma;
    c.stageStore = tile.swapAB ? StageStore::Stmatrix : StageStore::Pairs;
    int twoSlots = withStages(c);
    Config one = c;
    one.storeSlots = 1;
    if (deepestStages(one, g, t) > twoSlots) twoSlots = withStages(one);
    int rows = tile.swapAB ? tile.bm / tile.warpsM : 0;
    if (tile.swapAB && rows % 16 == 0) {
      one.storePieces = 2;
      if (deepestStages(one, g, t) > twoSlots) withStages(one);
    }
  }
  if (!tile.swapAB) {
    Config c = tile;
    c.epilogue = EpilogueStore::Direct;
    withStages(c);
  }
  // One consumer warpgroup: also two blocks per SM, each with half the ring (a shallower one), so
  // that one block's prologue and epilogue run beside the other's K loop.
  if (tile.warpsM * tile.warpsN == 1) {
    const size_t n = out.size();
    for (size_t i = 0; i < n; ++i) {
      Config c = out[i];
      c.blocksPerSm = 2;
      withStages(c);
    }
  }
  return out;
}

// The ways of sharing or splitting a tile's work, each config the tile's plain one changed:
// split-K into as many slices as fill the SMs (at most three counts: two, the most that fit in
// one wave, and the one between; whole slices of at least kMinSliceSteps K steps); stream-K over
// the last one or two waves where they are partial; and clusters where there are tiles to share
// with: a pair along M (sharing B), and where an operand's rows are off 32-byte sectors, the
// cluster that shares it (along N for A, 2 x 2 for both), which is where the registered
// clusters won (ops/data/gemm_bf16_sm90.variants).
std::vector<Config> sm90Schedules(const Config& c, const GemmShape& g) {
  std::vector<Config> out;
  const int64_t tm = ceilDiv(g.m, c.bm), tn = ceilDiv(g.n, c.bn), tiles = tm * tn * g.batch;
  const int64_t ksteps = ceilDiv(g.k, c.bk), sms = std::max(1, g.sms);
  if (c.consumers == Consumers::Cooperative) {
    int most = 1;
    while (most < 16 && tiles * (most + 1) <= sms && ksteps / (most + 1) >= kMinSliceSteps) ++most;
    for (int s : std::set<int>{2, (2 + most + 1) / 2, most}) {
      if (s < 2 || s > most) continue;
      Config x = c;
      x.splitK = s;
      out.push_back(x);
    }
    if (tiles % sms != 0 && ksteps >= 2 * kMinSliceSteps) {
      Config x = c;
      x.streamK = 1;
      out.push_back(x);
      if (tiles > sms) {
        x.streamK = 2;
        out.push_back(x);
      }
    }
  }
  const bool aOff = int64_t(g.k) * g.elemBytes % 32 != 0;
  const bool bOff = !g.bKMajor && int64_t(g.n) * g.elemBytes % 32 != 0;
  std::set<std::pair<int, int>> clusters = {{2, 1}};
  if (aOff) clusters.insert(bOff ? std::pair{2, 2} : std::pair{1, 2});
  for (auto [cm, cn] : clusters) {
    if ((cm > 1 && tm < 2) || (cn > 1 && tn < 2) || c.blocksPerSm == 2) continue;
    Config y = c;
    y.clusterM = cm;
    y.clusterN = cn;
    out.push_back(y);
  }
  return out;
}

// sm80_multistage: warp tiles of 32 to 64 rows and columns, K steps of 64 or 128 bytes, two to
// five stages.
std::vector<Config> sm80Space(const GemmShape& g) {
  std::vector<Config> out;
  Config base = *defaultConfig("sm80_multistage");
  for (int bm : {32, 64, 128, 256})
    for (int bn : {32, 64, 128, 256})
      for (auto [wm, wn] : {std::pair{1, 2}, std::pair{2, 2}, std::pair{2, 4}, std::pair{4, 2}, std::pair{1, 4}})
        for (int kBytes : {64, 128})
          for (int stages : {2, 3, 4, 5}) {
            if (bm / wm < 16 || bn / wn < 16 || bm / wm > 64 || bn / wn > 64) continue;
            Config c = base;
            c.bm = bm;
            c.bn = bn;
            c.warpsM = wm;
            c.warpsN = wn;
            c.bk = kBytes / g.elemBytes;
            c.stages = stages;
            c.raster = Raster::Grouped;
            out.push_back(c);
          }
  return out;
}

// The family heuristic's score of any config of the space, at the device's SM count.
double scoreOf(const Config& c, const GemmShape& g, const Target& t) {
  return ops::gemmPreference(c, g.m * g.batch, g.n, g.k, g.bKMajor, g.fp8, t, g.sms);
}

// A tile mostly padding (more than half of its rows or columns past M or N, where more than one
// tile is needed): no heuristic term makes up for computing twice the product.
bool hopeless(const Config& c, const GemmShape& g) {
  const int64_t tm = ceilDiv(g.m, c.bm), tn = ceilDiv(g.n, c.bn);
  const double useful = double(g.m) * double(g.n) / (double(tm * c.bm) * double(tn * c.bn));
  return useful < 0.5 && (tm > 1 || tn > 1);
}

}  // namespace

std::string spaceClass(const Config& c) {
  if (c.strategy == "sm80_multistage") return fmt::format("sm80 {}x{} warps", c.warpsM, c.warpsN);
  std::string s = c.swapAB ? "swap" : c.consumers == Consumers::Pingpong ? "pingpong" : "coop";
  s += fmt::format(" {}x{}", c.warpsM, c.warpsN);
  s += c.epilogue == EpilogueStore::Tma ? " tma" : " direct";
  if (c.blocksPerSm == 2) s += " 2/sm";
  if (c.splitK > 1) s += " split_k";
  if (c.streamK) s += " stream_k";
  if (c.clusterM * c.clusterN > 1) s += " cluster";
  return s;
}

std::optional<GemmShape> gemmShapeOf(const ir::Operation& program, const Target& t,
                                     const std::map<std::string, int64_t>& dims, int sms, std::string* why) {
  ir::DiagnosticEngine quiet;
  auto gp = analyzeGemm(program, "sm90_ws_persistent", quiet);
  if (!gp) {
    if (why) *why = "not a GEMM: " + quiet.str();
    return std::nullopt;
  }
  auto dim = [&](const std::string& name) {
    auto it = dims.find(name);
    return it == dims.end() ? int64_t{0} : it->second;
  };
  GemmShape g;
  g.m = dim(gp->dimM);
  g.n = dim(gp->dimN);
  g.k = dim(gp->dimK);
  if (!gp->dimBatch.empty()) g.batch = std::max<int64_t>(1, dim(gp->dimBatch));
  g.elemBytes = gp->fp8 ? 1 : 2;
  g.fp8 = gp->fp8;
  g.bKMajor = gp->bKMajor;
  g.groupAlign = gp->groupIndex ? gp->groupAlign : 0;
  g.sms = sms > 0 ? sms : std::max(1, t.referenceSms);
  int outputs = 0;
  for (const auto& op : program.body().operations())
    if (op->is("tile.output")) {
      ++outputs;
      // As sm90/lower.cpp counts it for the config rules: 2 bytes at least.
      g.cElemBytes = std::max(2, ir::bitWidth(op->result()->type().elem()) / 8);
    }
  for (const ir::Operation* op : gp->epilogue) g.epilogueLoads = g.epilogueLoads || op->name().rfind("tile.load", 0) == 0;
  if (outputs != 1 || g.m <= 0 || g.n <= 0 || g.k <= 0) {
    if (why) *why = outputs != 1 ? "a GEMM with more than one output" : "a GEMM dim is missing or not positive";
    return std::nullopt;
  }
  return g;
}

std::vector<Candidate> gemmSpace(const GemmShape& g, const Target& t, int limit, SpaceStats* stats) {
  SpaceStats local;
  SpaceStats& st = stats ? *stats : local;
  const OperandInfo ops{g.elemBytes, g.elemBytes, g.cElemBytes};
  std::set<std::string> seen;
  // A config built: validated (nullopt when refused or a duplicate) and scored.
  auto accept = [&](Config c) -> std::optional<Candidate> {
    // FP8's scales: prefetched into L1 before the K loop, as the family's promoted variants load
    // them (the neighbours of the best try the other ways).
    if (g.epilogueLoads && g.fp8 && c.strategy == "sm90_ws_persistent") c.epilogueLoads = EpilogueLoads::Prefetch;
    if (!seen.insert(c.str()).second) return std::nullopt;
    ++st.generated;
    ir::DiagnosticEngine quiet;
    if (!validate(c, t, ops, quiet) || (g.groupAlign > 0 && g.groupAlign % (int64_t(c.bm) * c.clusterM) != 0)) {
      ++st.invalid;
      std::string why = quiet.str();
      why = why.empty() ? fmt::format("bm={} x cluster_m={} does not divide the groups' rows ({})", c.bm, c.clusterM,
                                      g.groupAlign)
                        : why.substr(0, why.find('\n'));
      st.refused.emplace_back(c.str(), std::move(why));
      return std::nullopt;
    }
    if (hopeless(c, g)) {
      ++st.pruned;
      return std::nullopt;
    }
    return Candidate{c, "space: " + spaceClass(c), scoreOf(c, g, t)};
  };
  // The tiles (each layout, size, epilogue and staging, with the plain schedule), best first.
  std::vector<Candidate> tiles;
  if (t.wgmma && t.tma && t.setmaxnreg)
    for (const Config& tile : sm90Tiles(g))
      for (const Config& e : sm90Epilogues(tile, g, t))
        if (auto c = accept(e)) tiles.push_back(std::move(*c));
  // sm80_multistage everywhere it lowers: on sm_90a its kernels are not persistent, hold no
  // scheduler or warp roles, and share an SM between blocks, which may pay where a kernel lasts a
  // few microseconds; the heuristic scores them half a wgmma tile's, so only the class quota takes
  // them there.
  if (t.mmaSync && t.cpAsync)
    for (const Config& c : sm80Space(g))
      if (auto x = accept(c)) tiles.push_back(std::move(*x));
  std::stable_sort(tiles.begin(), tiles.end(), [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
  // The tiles taken: the best kPerClass of every class first (their plain configs before any
  // tile's schedules, so that the limit never cuts a class out), then each tile, best first, with
  // its schedules (split-K, stream-K, clusters), until the limit.
  std::vector<bool> taken(tiles.size(), false);
  std::vector<Candidate> out;
  std::map<std::string, int> perClass;
  for (size_t i = 0; i < tiles.size() && int(out.size()) < limit; ++i)
    if (perClass[tiles[i].origin]++ < kPerClass) taken[i] = true, out.push_back(tiles[i]);
  for (size_t i = 0; i < tiles.size(); ++i) {
    if (!taken[i]) {
      if (int(out.size()) >= limit) {
        ++st.pruned;
        continue;
      }
      out.push_back(tiles[i]);
    }
    if (tiles[i].config.strategy != "sm90_ws_persistent") continue;
    for (const Config& x : sm90Schedules(tiles[i].config, g)) {
      auto c = accept(x);
      if (!c) continue;
      // A cluster's gain is in what it shares, which the heuristic counts only for the shapes it
      // was fitted on: a cluster ranks just below its lone tile, and the screen decides.
      if (x.clusterM * x.clusterN > 1) c->score = tiles[i].score * 0.99;
      if (int(out.size()) < limit) out.push_back(std::move(*c));
      else ++st.pruned;
    }
  }
  st.kept += int(out.size());
  std::stable_sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
  return out;
}

}  // namespace kiln::tuning
