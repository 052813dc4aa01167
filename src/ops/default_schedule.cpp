#include "ops/default_schedule.h"

#include <fmt/format.h>

#include "ops/gemm_bf16.h"
#include "ops/gemm_fp8.h"
#include "ops/rowwise.h"
#include "schedule/gemm_analysis.h"

namespace kiln::ops {
namespace {

DefaultSchedule fallback(std::string why) {
  ir::DiagnosticEngine diag;
  return {*Config::parse(kFallbackSchedule, diag), std::move(why), false};
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

bool hasMatrixProduct(const ir::Operation& program) {
  bool dot = false;
  program.walk([&](const ir::Operation& op) { dot = dot || op.is("tile.dot"); });
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
  return {pick->variant->config, fmt::format("rowwise's pick for {}: {}", shape, pick->str(*p)), true};
}

}  // namespace

DefaultSchedule defaultSchedule(const ir::Operation& program, const Target& t, const std::map<std::string, int64_t>& dims) {
  if (!hasMatrixProduct(program)) return rowwiseSchedule(program, t, dims);
  ir::DiagnosticEngine quiet;
  auto g = analyzeGemm(program, "sm90_ws_persistent", quiet);
  if (!g) return fallback("not a GEMM a family runs: " + firstMessage(quiet));
  auto dim = [&](const std::string& name) {
    auto it = dims.find(name);
    return it == dims.end() ? int64_t{0} : it->second;
  };
  const int64_t m = dim(g->dimM), n = dim(g->dimN), k = dim(g->dimK);
  const std::string shape = fmt::format("{}={}, {}={}, {}={}", g->dimM, m, g->dimN, n, g->dimK, k);
  auto out = onlyOutputType(program);
  if (!out) return fallback("a GEMM with more than one output");
  if (g->fp8) {
    Fp8GemmProblem p{m, n, k};
    p.a = g->abType;
    p.b = g->bType;
    p.c = *out;
    auto pick = selectGemmFp8(p, t, quiet);
    if (!pick) return fallback(firstMessage(quiet));
    return {pick->variant->config,
            fmt::format("gemm_fp8's pick for {}: {} ({}, score {:.2f})", shape, pick->variant->name, pick->source,
                        pick->score),
            true};
  }
  GemmProblem p{m, n, k, g->abType, g->bType, *out};
  p.bKMajor = g->bKMajor;
  auto pick = selectGemmBf16(p, t, quiet);
  if (!pick) return fallback(firstMessage(quiet));
  // A grouped GEMM takes the pick only where its tiles (a pair of them along M, which share B) fit
  // in the groups' rows.
  const Config& c = pick->variant->config;
  if (g->groupIndex && g->groupAlign % (int64_t(c.bm) * c.clusterM) != 0)
    return fallback(fmt::format("a grouped GEMM whose groups ({{align = {}}}) are shorter than the rows of gemm_bf16's "
                                "pick, {}",
                                g->groupAlign, pick->variant->name));
  return {c, fmt::format("gemm_bf16's pick for {}: {}", shape, pick->str()), true};
}

}  // namespace kiln::ops
