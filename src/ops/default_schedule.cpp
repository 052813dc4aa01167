#include "ops/default_schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "ops/gemm_bf16.h"
#include "ops/gemm_fp8.h"
#include "ops/rowwise.h"
#include "schedule/gemm_analysis.h"

namespace kiln::ops {
namespace {

DefaultSchedule fallback(const ir::Operation& program, std::string why) {
  Config c = fallbackSchedule(program);
  if (c.bm != Config::parse(kFallbackSchedule).bm)
    why += fmt::format("; the sm80 default with bm={} (warps_m={}), so no block straddles two groups", c.bm, c.warpsM);
  return {c, std::move(why), false};
}

// The first line of a diagnostic, without its location.
std::string firstMessage(const ir::DiagnosticEngine& diag) {
  std::string s = diag.str();
  s = s.substr(0, s.find('\n'));
  size_t at = s.find("error: ");
  return at == std::string::npos ? s : s.substr(at + 7);
}

// The element type of the program's only output, if it has exactly one.
std::optional<ir::ScalarType> onlyOutputType(const ir::Operation& program) {
  std::optional<ir::ScalarType> type;
  for (const auto& op : program.body().operations()) {
    if (!op->is("tile.output")) continue;
    if (type) return std::nullopt;
    type = op->result()->type().elem();
  }
  return type;
}

// The pick for a BF16 output, adapted to the program's (g: its operands). sm90's TMA-store epilogue
// stages an f32 output too (32-column boxes, st.shared.v2 pairs: sm90/epilogue.cpp), which keeps it
// where the config rules allow it: stage_store=pairs (stmatrix moves 16-bit matrices), reuse_stage
// only where the f32 boxes past the slots fit the B stage; a swapped tile (staged by stmatrix
// .trans), or a config the f32 staging would not fit, stores from registers instead.
Config forOutput(Config c, ir::ScalarType out, const GemmProgram& g, const Target& t) {
  if (out != ir::ScalarType::F32 || c.epilogue != EpilogueStore::Tma) return c;
  const Config defaults;
  c.stageStore = defaults.stageStore;
  const OperandInfo ops{ir::bitWidth(g.abType) / 8, ir::bitWidth(g.bType) / 8, 4};
  ir::DiagnosticEngine quiet;
  if (c.reuseStage && !validate(c, t, ops, quiet)) c.reuseStage = false;
  if (!c.swapAB && validate(c, t, ops, quiet)) return c;
  c.epilogue = EpilogueStore::Direct;
  c.reuseStage = defaults.reuseStage;
  c.storeSlots = defaults.storeSlots;
  c.storePieces = defaults.storePieces;
  return c;
}

// epilogue_loads=early holds each epilogue vector's values in registers through the K loop. The
// gemm_fp8 family's 128x128 promote_pairs tile (192 f32 sums a thread) holds its program's two
// scale vectors beside them (36 values, 0 spills) and no more: a bias [N] on top spills 136
// bytes, an f32 output (whose 32-column boxes reload scale_a per box) 24. So a program whose
// epilogue loads more than two vectors or scalars, or that stores f32, loads them in its epilogue
// with their lines prefetched into L1 at the tile's start (prefetch), as the tile did before.
Config forEpilogueLoads(Config c, ir::ScalarType out, const GemmProgram& g) {
  if (c.epilogueLoads != EpilogueLoads::Early || c.fp8Accum != Fp8Accum::PromotePairs) return c;
  const auto loads = std::count_if(g.epilogue.begin(), g.epilogue.end(), [](const ir::Operation* op) {
    return op->is("tile.load") || op->is("tile.load_scalar");
  });
  if (loads > 2 || out == ir::ScalarType::F32) c.epilogueLoads = EpilogueLoads::Prefetch;
  return c;
}

// What gemm_fp8's eligibility needs of an FP8 program's scales: blockwise (tile.dot_scaled) per
// column of B or per block of columns; the epilogue's scales (rowwise, tensorwise) run anywhere.
Fp8Scaling scalingOf(const GemmProgram& g) {
  if (!g.blockK) return Fp8Scaling::Rowwise;
  return blockOf(g.loadScaleB->operand(0)->type()).back() == 1 ? Fp8Scaling::Block1x128x1x128
                                                               : Fp8Scaling::Block1x128x128x128;
}

// The rows of the dense problem a family's heuristic weighs: M, or with ragged groups in the
// masked layout (counts) G x the per-group capacity M, the most rows the groups can hold.
int64_t problemRows(const GemmProgram& g, int64_t m, const std::map<std::string, int64_t>& dims) {
  if (!g.raggedBounds || g.raggedOffsets) return m;
  auto it = dims.find(g.dimGroups);
  return it == dims.end() ? m : m * it->second;
}

// A tensor argument's extent or stride at these dims (0 for a dim not given).
int64_t valueOf(const ir::Extent& e, const std::map<std::string, int64_t>& dims) {
  if (!e.isSymbolic()) return e.value;
  auto it = dims.find(e.sym);
  return it == dims.end() ? 0 : it->second;
}

// The layout facts of a GEMM the families' eligibility needs: A's orientation, whether any
// tensor is strided, and the bytes each matrix's rows are aligned to at these dims (bases assumed
// 16-byte aligned): its leading dimension's, and for the output also its N's (a pair must not
// straddle a row's end).
void layoutOf(const GemmProgram& g, const ir::Operation& program, const std::map<std::string, int64_t>& dims,
              const std::map<std::string, int>& baseAlignment, GemmProblem& p) {
  p.aRowMajor = !g.aColMajor;
  auto base = [&](const ir::Value* tensor) {
    auto it = baseAlignment.find(tensor->definingOp()->stringAttr("name"));
    return it == baseAlignment.end() ? 16 : std::max(1, it->second);
  };
  auto align = [&](const ir::Value* tensor) {
    return std::min(base(tensor),
                    rowAlignment(valueOf(matrixAccess(tensor->type()).ld, dims), ir::bitWidth(tensor->type().elem()) / 8));
  };
  p.alignA = align(g.tensorA);
  p.alignB = align(g.tensorB);
  for (const auto& op : program.body().operations()) {
    if (!op->is("tile.input") && !op->is("tile.output")) continue;
    const ir::Type& t = op->result()->type();
    if (const ir::Attribute* st = t.param("strides")) {
      p.strided = true;
      p.bStrided |= op->result() == g.tensorB;
      for (const ir::Attribute& e : st->asArray()) p.zeroStride |= e.isInt() && e.asInt() == 0;
    }
    if (!op->is("tile.output") || contiguousMatrixAxis(t) != 1) continue;
    const int eb = ir::bitWidth(t.elem()) / 8;
    p.alignC = std::min({base(op->result()), rowAlignment(valueOf(matrixAccess(t).ld, dims), eb),
                         rowAlignment(valueOf(t.shape()[t.rank() - 1], dims), eb)});
  }
}

// The fallback schedule with its alignments lowered to the problem's, so it runs any rows.
Config alignedTo(Config c, const GemmProblem& p) {
  c.alignA = std::min(c.alignA, p.alignA);
  c.alignB = std::min(c.alignB, p.alignB);
  c.alignC = std::min(c.alignC, p.alignC);
  return c;
}

// The strategy whose GEMM analysis reads the program: sm80's, the most general, except for ragged
// groups (tile.for_tiles {ragged}) and block scales (tile.dot_scaled), which only
// sm90_ws_persistent lowers.
const char* analysisStrategy(const ir::Operation& program) {
  bool sm90Only = false;
  program.walk([&](const ir::Operation& op) {
    sm90Only = sm90Only || (op.is("tile.for_tiles") && op.attr("ragged")) || op.is("tile.dot_scaled");
  });
  return sm90Only ? "sm90_ws_persistent" : "sm80_multistage";
}

bool hasMatrixProduct(const ir::Operation& program) {
  bool dot = false;
  program.walk([&](const ir::Operation& op) { dot = dot || op.is("tile.dot") || op.is("tile.dot_scaled"); });
  return dot;
}

// A program without a matrix product: the rowwise family's pick, or (when rowwise cannot lower it)
// its default, whose compile then says why.
DefaultSchedule rowwiseSchedule(const ir::Operation& program, const Target& t, const std::map<std::string, int64_t>& dims) {
  ir::DiagnosticEngine quiet;
  auto p = rowProblemOf(program, t, dims, quiet);
  auto pick = p ? selectRowwise(*p, t, quiet) : std::nullopt;
  if (!pick)
    return {Config::parse(kRowwiseFallback),
            "a program without a matrix product, for the rowwise strategy, which cannot run it: " + firstMessage(quiet),
            false};
  std::string shape;
  for (const auto& [d, v] : dims) shape += fmt::format("{}{}={}", shape.empty() ? "" : ", ", d, v);
  return {pick->variant->config, fmt::format("rowwise's pick for {}: {}", shape, pick->str(*p)), true, "rowwise",
          pick->variant->name};
}

}  // namespace

Config fallbackSchedule(const ir::Operation& program) {
  Config c = Config::parse(kFallbackSchedule);
  int64_t align = 0;
  program.walk([&](const ir::Operation& op) {
    if (op.is("tile.group_index")) align = std::gcd(align, op.intAttr("align", 0));
  });
  if (align <= 0) return c;
  int bm = 128;
  while (bm > 16 && align % bm != 0) bm /= 2;
  c.bm = bm;
  // Each of the warps_m warps takes bm / warps_m rows, at least one m16 MMA's worth.
  while (c.warpsM > 1 && c.bm / c.warpsM < 16) c.warpsM /= 2;
  return c;
}

DefaultSchedule defaultSchedule(const ir::Operation& program, const Target& t, const std::map<std::string, int64_t>& dims,
                                const std::map<std::string, int>& baseAlignment) {
  if (!hasMatrixProduct(program)) return rowwiseSchedule(program, t, dims);
  ir::DiagnosticEngine quiet;
  // The most general GEMM analysis (sm80's: every layout; sm90's for ragged groups, which only it
  // lowers); each variant's eligibility says what its strategy takes.
  auto g = analyzeGemm(program, analysisStrategy(program), quiet);
  if (!g) return fallback(program, "not a GEMM a family runs: " + firstMessage(quiet));
  GemmProblem layout;
  layoutOf(*g, program, dims, baseAlignment, layout);
  auto fallback = [&](const ir::Operation& prog, std::string why) {
    DefaultSchedule d = ops::fallback(prog, std::move(why));
    d.config = alignedTo(d.config, layout);
    return d;
  };
  auto dim = [&](const std::string& name) {
    auto it = dims.find(name);
    return it == dims.end() ? int64_t{0} : it->second;
  };
  const int64_t m = problemRows(*g, dim(g->dimM), dims), n = dim(g->dimN), k = dim(g->dimK);
  const std::string shape = fmt::format("{}={}, {}={}, {}={}", g->dimM, m, g->dimN, n, g->dimK, k);
  auto out = onlyOutputType(program);
  if (!out) return fallback(program, "a GEMM with more than one output");
  // The families' tables are tuned for a BF16 output; an f16 or f32 one changes only the epilogue's
  // stores, so the pick for the BF16 twin serves it (adapted by forOutput).
  const bool otherOutput = *out == ir::ScalarType::F16 || *out == ir::ScalarType::F32;
  const ir::ScalarType familyOut = otherOutput ? ir::ScalarType::BF16 : *out;
  const std::string adapted =
      otherOutput ? fmt::format(", for the {} output", ir::scalarName(*out)) : std::string();
  if (g->fp8) {
    Fp8GemmProblem p{m, n, k};
    p.a = g->abType;
    p.b = g->bType;
    p.c = familyOut;
    p.scaling = scalingOf(*g);
    p.ragged = g->raggedBounds != nullptr;
    p.raggedK = g->raggedK;
    p.groups = g->raggedBounds ? dim(g->dimGroups) : 0;
    p.strided = layout.strided;
    auto pick = selectGemmFp8(p, t, quiet);
    if (!pick) return fallback(program, firstMessage(quiet));
    return {forOutput(forEpilogueLoads(pick->variant->config, *out, *g), *out, *g, t),
            fmt::format("gemm_fp8's pick for {}: {} ({}, score {:.2f}){}", shape, pick->variant->name, pick->source,
                        pick->score, adapted),
            true, "gemm_fp8", pick->variant->name};
  }
  // f16 operands have bf16's size and wgmma / mma.sync rate: gemm_bf16's table serves them.
  const bool f16Operands = g->abType == ir::ScalarType::F16 && g->bType == ir::ScalarType::F16;
  const ir::ScalarType familyIn = f16Operands ? ir::ScalarType::BF16 : g->abType;
  GemmProblem p = layout;
  p.m = m, p.n = n, p.k = k, p.a = familyIn, p.b = f16Operands ? familyIn : g->bType, p.c = familyOut;
  p.bKMajor = g->bKMajor;
  p.ragged = g->raggedBounds != nullptr;
  p.raggedK = g->raggedK;
  p.groups = g->raggedBounds ? dim(g->dimGroups) : 0;
  p.grouped = g->groupIndex != nullptr;
  p.cElemBytes = ir::bitWidth(*out) / 8;
  auto pick = selectGemmBf16(p, t, quiet);
  if (!pick) return fallback(program, firstMessage(quiet));
  // A grouped GEMM takes the pick only where its tiles (a pair of them along M, which share B) fit
  // in the groups' rows.
  const Config c = pick->variant->configFor(p, t.referenceSms);
  if (g->groupIndex && g->groupAlign % (int64_t(c.bm) * c.clusterM) != 0)
    return fallback(program, fmt::format("a grouped GEMM whose groups ({{align = {}}}) are shorter than the rows of gemm_bf16's "
                                "pick, {}",
                                g->groupAlign, pick->variant->name));
  std::string aligned;
  if (c.strategy == "gemv")
    aligned = fmt::format(", as {}", c.str());
  else if (c.alignA != pick->variant->config.alignA || c.alignB != pick->variant->config.alignB ||
      c.alignC != pick->variant->config.alignC)
    aligned = fmt::format(", with rows aligned to {}, {} and {} bytes (align_a, align_b, align_c)", c.alignA, c.alignB,
                          c.alignC);
  return {forOutput(c, *out, *g, t),
          fmt::format("gemm_bf16's pick for {}: {}{}{}{}", shape, pick->str(), f16Operands ? ", for f16 operands" : "",
                      adapted, aligned),
          true, "gemm_bf16", pick->variant->name};
}

std::vector<RankedSchedule> rankedSchedules(const ir::Operation& program, const Target& t,
                                            const std::map<std::string, int64_t>& dims, std::string* why) {
  std::vector<RankedSchedule> ranked;
  auto say = [&](std::string s) {
    if (why) *why = std::move(s);
    return std::vector<RankedSchedule>{};
  };
  auto dim = [&](const std::string& name) {
    auto it = dims.find(name);
    return it == dims.end() ? int64_t{0} : it->second;
  };
  ir::DiagnosticEngine quiet;
  if (!hasMatrixProduct(program)) {
    auto p = rowProblemOf(program, t, dims, quiet);
    if (!p) return say("rowwise cannot run it: " + firstMessage(quiet));
    for (const auto& v : rowwiseVariants())
      if (v.eligible(*p, t)) ranked.push_back({v.config, "rowwise", v.name, v.preference(*p, t)});
  } else {
    auto g = analyzeGemm(program, analysisStrategy(program), quiet);
    if (!g) return say("not a GEMM a family runs: " + firstMessage(quiet));
    GemmProblem layout;
    layoutOf(*g, program, dims, {}, layout);
    auto out = onlyOutputType(program);
    if (!out) return say("a GEMM with more than one output");
    const bool otherOutput = *out == ir::ScalarType::F16 || *out == ir::ScalarType::F32;
    const ir::ScalarType familyOut = otherOutput ? ir::ScalarType::BF16 : *out;
    const int64_t m = problemRows(*g, dim(g->dimM), dims), n = dim(g->dimN), k = dim(g->dimK);
    if (g->fp8) {
      Fp8GemmProblem p{m, n, k};
      p.a = g->abType;
      p.b = g->bType;
      p.c = familyOut;
      p.scaling = scalingOf(*g);
      p.ragged = g->raggedBounds != nullptr;
      p.raggedK = g->raggedK;
      p.groups = g->raggedBounds ? dim(g->dimGroups) : 0;
      p.strided = layout.strided;
      for (const auto& v : gemmFp8Variants())
        if (v.eligible(p, t))
          ranked.push_back(
              {forOutput(forEpilogueLoads(v.config, *out, *g), *out, *g, t), "gemm_fp8", v.name, v.preference(p, t)});
    } else {
      const bool f16Operands = g->abType == ir::ScalarType::F16 && g->bType == ir::ScalarType::F16;
      const ir::ScalarType familyIn = f16Operands ? ir::ScalarType::BF16 : g->abType;
      GemmProblem p = layout;
      p.m = m, p.n = n, p.k = k, p.a = familyIn, p.b = f16Operands ? familyIn : g->bType, p.c = familyOut;
      p.bKMajor = g->bKMajor;
      p.ragged = g->raggedBounds != nullptr;
      p.raggedK = g->raggedK;
      p.groups = g->raggedBounds ? dim(g->dimGroups) : 0;
      p.grouped = g->groupIndex != nullptr;
      p.cElemBytes = ir::bitWidth(*out) / 8;
      for (const auto& v : gemmBf16Variants()) {
        if (!v.eligible(p, t)) continue;
        if (g->groupIndex && g->groupAlign % (int64_t(v.config.bm) * v.config.clusterM) != 0) continue;
        ranked.push_back({forOutput(v.configFor(p, t.referenceSms), *out, *g, t), "gemm_bf16", v.name, v.preference(p, t)});
      }
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const RankedSchedule& a, const RankedSchedule& b) { return a.score > b.score; });
    ranked.push_back({alignedTo(fallbackSchedule(program), layout), "", "sm80 default", 0});
    return ranked;
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const RankedSchedule& a, const RankedSchedule& b) { return a.score > b.score; });
  if (ranked.empty()) return say("no rowwise variant can run it");
  return ranked;
}

}  // namespace kiln::ops
