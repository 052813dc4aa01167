// The gemm_bf16 variant table, eligibility, preference and selection (contract in gemm_bf16.h).
#include "ops/gemm_bf16.h"

#include <cmath>

#include <fmt/format.h>

#include "kiln/program_builder.h"
#include "ops/select_variant.h"
#include "schedule/gemm_analysis.h"

namespace kiln::ops {

namespace {

// Warp grid per block tile. 128x128 uses 2x2 warps of 64x64: on an H200 that ran 1.4-1.5x faster
// than 2x4 warps of 64x32 (docs/history/2026-11-29.md: fewer ldmatrix per mma and more independent MMAs
// per warp) and still assembles without spills (about 230-245 registers; the gates check it on
// every target). The smaller tiles use 32x32 to 64x32 warp tiles.
struct Shape {
  int bm, bn, warpsM, warpsN;
};
constexpr Shape kShapes[] = {
    {32, 64, 1, 2}, {32, 128, 1, 4}, {64, 64, 2, 2}, {64, 128, 2, 2}, {128, 64, 2, 2}, {128, 128, 2, 2},
};

GemmVariant make(const Shape& s, int bk, int stages) {
  GemmVariant v;
  v.name = fmt::format("bf16_gemm_{}x{}x{}_s{}", s.bm, s.bn, bk, stages);
  v.config.bm = s.bm;
  v.config.bn = s.bn;
  v.config.bk = bk;
  v.config.stages = stages;
  v.config.warpsM = s.warpsM;
  v.config.warpsN = s.warpsN;
  return v;
}

std::vector<GemmVariant> buildTable() {
  std::vector<GemmVariant> t;
  // bk = 32: every shape at every depth.
  for (const Shape& s : kShapes)
    for (int stages : {2, 3, 4}) t.push_back(make(s, 32, stages));
  // bk = 64: fewer barriers per K for long K, where shared memory allows.
  // 64x64 at bk=64 keeps no fragments across K tiles (frag_prefetch=none): with A's carried, ptxas
  // (CUDA 13.0) holds the sm_90a kernel to 96 registers and spills 4 bytes; the gates forbid any.
  for (int stages : {3, 4}) {
    t.push_back(make(kShapes[2], 64, stages));
    t.back().config.fragPrefetch = FragPrefetch::None;
  }
  t.push_back(make(kShapes[4], 64, 3));  // 128x64
  t.push_back(make(kShapes[3], 64, 3));  // 64x128
  t.push_back(make(kShapes[5], 64, 3));  // 128x128: 96 KB
  t.push_back(make(kShapes[5], 64, 4));  // 128x128: 128 KB (not on sm_89 / sm_120)
  for (GemmVariant& v : gemmBf16Sm90Variants()) t.push_back(std::move(v));
  for (GemmVariant& v : gemmBf16GemvVariants()) t.push_back(std::move(v));
  return t;
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

const std::vector<GemmVariant>& gemmBf16Variants() {
  static const std::vector<GemmVariant> table = buildTable();
  return table;
}

const GemmVariant* findGemmBf16Variant(std::string_view name) {
  for (const auto& v : gemmBf16Variants())
    if (v.name == name) return &v;
  return nullptr;
}

bool commonEligible(const GemmProblem& p, std::string* why) {
  auto no = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return false;
  };
  using S = ir::ScalarType;
  if (p.a != S::BF16 || p.b != S::BF16)
    return no(fmt::format("A and B must be bf16, not {} and {}", ir::scalarName(p.a), ir::scalarName(p.b)));
  if (p.c != S::BF16) return no(fmt::format("the output must be bf16, not {}", ir::scalarName(p.c)));
  if (!p.cRowMajor) return no("C must be row-major (N contiguous)");
  if (p.m <= 0 || p.n <= 0 || p.k <= 0) return no("M, N and K must be positive");
  return true;
}

int rowAlignment(int64_t elems, int elemBytes) {
  int a = 16;
  while (a > 1 && (elems * elemBytes) % a != 0) a /= 2;
  return a;
}

namespace {

// Element loads through registers (align below 4 bytes) hold a K tile's elements through the
// iteration: beside the accumulators they must fit the register file without spilling. Measured
// with ptxas (CUDA 13.0, sm_80 / sm_90a / sm_120; the gates check every eligible one): a warp tile's
// accumulators plus the elements held per thread up to 160 fit (64x128x64: 64 + 96), 128x128 (128 +
// 64 at bk=32) spills.
bool registerLoadsFit(const Config& c, const GemmProblem& p) {
  if (p.alignA >= 4 && p.alignB >= 4) return true;
  int64_t held = (p.alignA < 4 ? int64_t(c.bm) * c.bk : 0) + (p.alignB < 4 ? int64_t(c.bk) * c.bn : 0);
  return c.warpTileM() * c.warpTileN() / 32 + held / c.threads() <= 160;
}

}  // namespace

Config withDirectStore(Config c) {
  const Config plain;
  c.epilogue = EpilogueStore::Direct;
  c.reuseStage = plain.reuseStage;
  c.storeSlots = plain.storeSlots;
  c.storePieces = plain.storePieces;
  c.stageStore = plain.stageStore;
  return c;
}

Config GemmVariant::configFor(const GemmProblem& p, int sms) const {
  Config c = config;
  if (c.strategy == "gemv") return gemvConfigFor(c, p, sms);
  if (c.strategy == "sm90_ws_persistent") {
    // Output rows a TMA store cannot address: stored from registers, in pairs or one by one.
    if (p.alignC >= 16) return c;
    c = withDirectStore(c);
    c.alignC = p.alignC;
    return c;
  }
  if (c.strategy != "sm80_multistage") return c;
  c.alignA = std::min(c.alignA, p.alignA);
  c.alignB = std::min(c.alignB, p.alignB);
  c.alignC = std::min(c.alignC, p.alignC);
  return c;
}

double tileShapeScore(const Config& c, const GemmProblem& p, const Target& t) {
  int64_t tm = ceilDiv(p.m, c.bm), tn = ceilDiv(p.n, c.bn), tiles = tm * tn;
  double useful = double(p.m) * double(p.n) / (double(tm * c.bm) * double(tn * c.bn));
  int64_t sms = std::max(1, t.referenceSms);
  double waves = double(tiles) / double(ceilDiv(tiles, sms) * sms);
  double intensity = (double(c.bm) * c.bn / (c.bm + c.bn)) / 64.0;
  return useful * waves * intensity;
}

bool GemmVariant::eligible(const GemmProblem& p, const Target& t, std::string* why) const {
  auto no = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return false;
  };
  if (!commonEligible(p, why)) return false;
  if (p.ragged)
    if (std::string need = raggedWalkConflict(config, p.raggedK); !need.empty())
      return no("the problem has ragged groups, which it cannot walk: they need " + need);
  if (config.strategy == "sm90_ws_persistent") return sm90Eligible(*this, p, t, why);
  if (config.strategy == "gemv") return gemvEligible(*this, p, t, why);
  if (!t.mmaSync || !t.cpAsync) return no(t.name + " has no mma.sync / cp.async");
  // Measured (the layout gates, CUDA 13.0): ptxas holds this variant to 128 registers on sm_90a and,
  // with A's fragments transposed, spills 4 bytes; its 3- and 4-stage twins do not.
  if (!p.aRowMajor && config.bm == 64 && config.bn == 128 && config.stages == 2)
    return no("with a column-major A it spills on sm_90a (128 registers); its 3-stage twin runs it");
  if (!registerLoadsFit(config, p))
    return no(fmt::format("rows aligned to {} bytes are loaded element by element through registers, which a "
                          "{}x{} tile does not have to spare",
                          std::min(p.alignA, p.alignB), config.bm, config.bn));
  int64_t smem = config.pipelineSmemBytes(2, 2);
  if (smem > t.maxSmemPerBlock)
    return no(fmt::format("needs {} bytes of shared memory; {} allows {}", smem, t.name, t.maxSmemPerBlock));
  return true;
}

double GemmVariant::preference(const GemmProblem& p, const Target& t) const {
  if (config.strategy == "sm90_ws_persistent") return sm90Preference(*this, p, t);
  if (config.strategy == "gemv") return gemvPreference(*this, p, t);
  const Config& c = config;
  // The deepest registered pipeline of this tile shape that still lets two CTAs share an SM (the
  // H200 run, bench/results/2026-11-29-h200-sm80-family: 128x128x64 is fastest at 3 stages,
  // 96 KB, not 4 at 128 KB; 64x64x64 at 4) and that K is long enough to fill.
  // Where no depth leaves room for two CTAs, the deepest that fits one.
  int wantStages = 0;
  for (int ctas : {2, 1}) {
    for (int s : {4, 3, 2}) {
      Config d = c;
      d.stages = s;
      bool registered = false;
      for (const auto& v : gemmBf16Variants()) registered = registered || v.config == d;
      int64_t smem = d.pipelineSmemBytes(2, 2);
      if (registered && ctas * smem <= t.smemPerSm && smem <= t.maxSmemPerBlock && ceilDiv(p.k, c.bk) > s - 1) {
        wantStages = s;
        break;
      }
    }
    if (wantStages) break;
  }
  double depth = c.stages == wantStages ? 1.0 : 0.95;
  double kstep = (c.bk == 64) == (p.k >= 1024) ? 1.0 : 0.97;
  return tileShapeScore(c, p, t) * depth * kstep;
}

std::unique_ptr<ir::Module> GemmVariant::program(bool bKMajor) const {
  ProgramBuilder pb(name);
  auto [M, N, K] = pb.dims("M", "N", "K");
  auto A = pb.input("A", bf16, {M, K});
  auto B = bKMajor ? pb.input("B", bf16, {K, N}, {0, 1}) : pb.input("B", bf16, {K, N});
  auto C = pb.output("C", bf16, {M, N});
  pb.tile({M, N}, [&](Coord m, Coord n) {
    Tile acc = pb.zeros(f32, {m, n});
    pb.reduce(K, [&](Coord k) { acc = dot(A(m, k), B(k, n), acc); });
    C(m, n) = cast(bf16, acc);
  });
  return pb.finish();
}

std::optional<CompileResult> GemmVariant::compile(bool bKMajor, const Target& t, ir::DiagnosticEngine& diag) const {
  return kiln::compile(*program(bKMajor), t, config, diag);
}

std::string GemmSelection::str() const {
  return fmt::format("{} ({}, score {:.3f})", variant ? variant->name : "none", source, score);
}

std::optional<GemmSelection> selectGemmBf16(const GemmProblem& p, const Target& t, ir::DiagnosticEngine& diag,
                                            std::string_view forced) {
  return selectVariant<GemmSelection>(gemmBf16Variants(), p, t, diag, forced, "gemm_bf16", "bf16_gemm_128x128x32_s3");
}

}  // namespace kiln::ops
