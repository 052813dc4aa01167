// The rowwise family (contract in rowwise.h): its variants as config lines, their rules and the
// heuristic.
#include "ops/rowwise.h"

#include <algorithm>
#include <fmt/format.h>

#include "ops/select_variant.h"
#include "schedule/rowwise/row_program.h"

namespace kiln::ops {
namespace {

// name, config line: threads per row from 4 to 1024, then element accesses for any row length.
const char* const kTable[][2] = {
    {"row_t4_b128_v2", "strategy=rowwise row_threads=4 block_threads=128 vectors=2"},
    {"row_t8_b256_v2", "strategy=rowwise row_threads=8 block_threads=256 vectors=2"},
    {"row_t16_b256_v2", "strategy=rowwise row_threads=16 block_threads=256 vectors=2"},
    {"row_t32_b256_v2", "strategy=rowwise row_threads=32 block_threads=256 vectors=2"},
    {"row_t32_b256_v4", "strategy=rowwise row_threads=32 block_threads=256 vectors=4"},
    {"row_t64_b256_v4", "strategy=rowwise row_threads=64 block_threads=256 vectors=4"},
    {"row_t128_b256_v4", "strategy=rowwise row_threads=128 block_threads=256 vectors=4"},
    {"row_t256_b256_v4", "strategy=rowwise row_threads=256 block_threads=256 vectors=4"},
    {"row_t512_b512_v4", "strategy=rowwise row_threads=512 block_threads=512 vectors=4"},
    {"row_t1024_b1024_v2", "strategy=rowwise row_threads=1024 block_threads=1024 vectors=2"},
    {"row_t1024_b1024_v4", "strategy=rowwise row_threads=1024 block_threads=1024 vectors=4"},
    {"row_t1024_b1024_v2_p1", "strategy=rowwise row_threads=1024 block_threads=1024 vectors=2 blocks_per_sm=1"},
    {"row_t32_b256_v4_scalar", "strategy=rowwise row_threads=32 block_threads=256 vectors=4 scalar=true"},
    {"row_t256_b256_v4_scalar", "strategy=rowwise row_threads=256 block_threads=256 vectors=4 scalar=true"},
    {"row_t1024_b1024_v4_scalar", "strategy=rowwise row_threads=1024 block_threads=1024 vectors=4 scalar=true"},
};

// The bytes of each row tensor a streaming step should cover (RowVariant::preference).
constexpr double kStreamStepBytes = 4096.0;

int vectorOf(const Config& c, const RowProblem& p) { return c.scalar ? 1 : 16 / p.elemBytes; }

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

std::optional<RowProblem> rowProblemOf(const ir::Operation& program, const Target& t,
                                       const std::map<std::string, int64_t>& dims, ir::DiagnosticEngine& diag) {
  auto rp = rowwise::analyzeRows(program, t, diag);
  if (!rp) return std::nullopt;
  auto dim = [&](const std::string& d) {
    auto it = dims.find(d);
    return it == dims.end() ? int64_t{1} : it->second;
  };
  RowProblem p{dim(rp->dimR), rp->dimC.empty() ? 1 : dim(rp->dimC), rp->elemBytes, std::max(rp->streaming.passes, 1), 0};
  std::vector<const ir::Value*> seen;
  for (const ir::Operation* op : rp->ops)
    if (op->is("tile.load") && rp->spaceOf(op->result()) >= rowwise::Space::Col &&
        std::find(seen.begin(), seen.end(), op->operand(0)) == seen.end())
      seen.push_back(op->operand(0));
  p.rowTensors = std::max<int>(1, int(seen.size()));
  return p;
}

int64_t RowVariant::capacity(const RowProblem& p) const {
  return int64_t(config.rowThreads) * config.vectors * vectorOf(config, p);
}

bool RowVariant::eligible(const RowProblem& p, const Target& t, std::string* why) const {
  auto no = [&](std::string m) {
    if (why) *why = std::move(m);
    return false;
  };
  int V = vectorOf(config, p);
  if (p.rows <= 0 || p.cols <= 0) return no("the dims must be positive");
  if (p.cols % V != 0)
    return no(fmt::format("{} reads rows in 16-byte vectors of {} elements, and the row length {} is not a multiple of "
                          "{}",
                          name, V, p.cols, V));
  int64_t regs = 40 + int64_t(config.vectors) * V * p.rowTensors;
  int64_t budget = std::min<int64_t>(t.maxRegistersPerThread, t.registersPerSm / config.blockThreads);
  if (regs > budget)
    return no(fmt::format("{} would hold about {} registers a thread for its vectors, over the {} a thread of a "
                          "{}-thread block may have",
                          name, regs, budget, config.blockThreads));
  ir::DiagnosticEngine quiet;
  if (!validate(config, t, OperandInfo{p.elemBytes, p.elemBytes}, quiet)) return no(quiet.str());
  return true;
}

double RowVariant::preference(const RowProblem& p, const Target& t) const {
  int64_t cap = capacity(p);
  bool fits = p.cols <= cap;
  double reads = 1.0;
  if (!fits && p.passes > 1) {
    int64_t rowsPerBlock = config.blockThreads / config.rowThreads;
    int64_t resident = config.blocksPerSm > 0 ? config.blocksPerSm : std::max(1, 2048 / config.blockThreads);
    double inFlight = double(std::min<int64_t>(p.rows, t.referenceSms * resident * rowsPerBlock));
    bool fromL2 = inFlight * double(p.cols) * p.elemBytes * p.rowTensors <= 0.75 * double(t.referenceL2Bytes);
    reads = 1.0 / (1.0 + (fromL2 ? 0.15 : 0.9) * (p.passes - 1));
  }
  int64_t steps = ceilDiv(p.cols, cap);
  double fill = double(p.cols) / double(steps * cap);
  double parallel = std::min(1.0, double(p.rows) * config.rowThreads / (t.referenceSms * 1024.0));
  int64_t stride = int64_t(config.rowThreads) * vectorOf(config, p);
  double depth = std::min<int64_t>(config.vectors, ceilDiv(p.cols, stride)) >= 2 ? 1.0 : 0.85;
  double access = config.scalar ? 0.5 : 1.0;
  // A streaming row's step should cover at least 4 KB of each tensor (32 128-byte lines in flight
  // per row): silu_and_mul at 16384x14336 measured 0.88 of the copy's bandwidth in steps of 512 B
  // (row_t16_b256_v2) and 0.97 in steps of 4 KB (row_t64_b256_v4), equal fills both
  // (docs/rowwise-strategy.md, "Streaming steps").
  double stepBytes = double(cap) * p.elemBytes;
  double streamDepth = fits ? 1.0 : std::min(1.0, stepBytes / kStreamStepBytes);
  return reads * fill * parallel * depth * access * streamDepth;
}

const std::vector<RowVariant>& rowwiseVariants() {
  static const std::vector<RowVariant> table = [] {
    std::vector<RowVariant> v;
    for (const auto& row : kTable) v.push_back({row[0], Config::parse(row[1])});
    return v;
  }();
  return table;
}

std::string RowSelection::str(const RowProblem& p) const {
  if (!variant) return "none";
  int64_t cap = variant->capacity(p);
  std::string how = p.cols <= cap ? fmt::format("rows of {} fit on chip ({}), one read", p.cols, cap)
                    : p.passes <= 1 ? fmt::format("rows of {} stream through in steps of {}, one read", p.cols, cap)
                                    : fmt::format("rows of {} stream through in steps of {}, a read per pass ({})",
                                                  p.cols, cap, p.passes);
  return fmt::format("{} ({}, score {:.3f}): {}", variant->name, source, score, how);
}

std::optional<RowSelection> selectRowwise(const RowProblem& p, const Target& t, ir::DiagnosticEngine& diag,
                                          std::string_view forced) {
  return selectVariant<RowSelection>(rowwiseVariants(), p, t, diag, forced, "rowwise", "row_t128_b256_v4");
}

}  // namespace kiln::ops
