// Grouped (MoE) GEMM: rows of A pick their B by a per-row group id, read with tile.group_index
// {align = 64}; against fp64 loops.
#include <gtest/gtest.h>

#include "gemm_programs.h"
#include "interp_test_util.h"
#include "reference_gemm.h"

namespace kiln::interp::testing {
namespace {

using ir::ScalarType;

// Group ids for `rows` rows from a list of (group, row count) runs.
HostTensor groupIds(const std::vector<std::pair<int, int64_t>>& runs) {
  std::vector<double> ids;
  for (auto [g, n] : runs) ids.insert(ids.end(), n, g);
  return makeHostTensor(ScalarType::I32, {static_cast<int64_t>(ids.size())}, ids);
}

struct Case {
  std::vector<std::pair<int, int64_t>> runs;  // (group, rows); each a multiple of 64 except the last
  int64_t N, K, G;
};

void runCase(const ir::Operation& program, const Case& c, std::mt19937_64& rng, const RunOptions& opts = {}) {
  HostTensor ids = groupIds(c.runs);
  int64_t M = ids.shape[0];
  HostTensor A = randomTensor(ScalarType::BF16, {M, c.K}, rng);
  HostTensor B = randomTensor(ScalarType::BF16, {c.G, c.K, c.N}, rng);
  HostTensor C = poisonedTensor(ScalarType::BF16, {M, c.N});
  RunRequest req{{{"M", M}, {"N", c.N}, {"K", c.K}, {"G", c.G}}, {{"A", &A}, {"B", &B}, {"ids", &ids}, {"C", &C}}, {}};
  ir::DiagnosticEngine diag;
  ASSERT_TRUE(run(program, req, diag, opts)) << diag.str();
  // Row by row: each row is a [1, K] x [K, N] product with its group's B.
  std::vector<double> a = toDoubles(A), b = toDoubles(B);
  GemmReference ref;
  for (int64_t i = 0; i < M; ++i) {
    int64_t g = static_cast<int64_t>(getElement(ids, i));
    GemmReference row = referenceGemm(1, c.N, c.K, {a.begin() + i * c.K, a.begin() + (i + 1) * c.K},
                                      {b.begin() + g * c.K * c.N, b.begin() + (g + 1) * c.K * c.N});
    ref.value.insert(ref.value.end(), row.value.begin(), row.value.end());
    ref.absSum.insert(ref.absSum.end(), row.absSum.begin(), row.absSum.end());
  }
  std::vector<double> tol(ref.value.size());
  for (size_t i = 0; i < tol.size(); ++i) tol[i] = bf16DotBound(ref.value[i], ref.absSum[i], c.K);
  expectWithin(C, ref.value, tol, "M=" + std::to_string(M) + " N=" + std::to_string(c.N) + " K=" + std::to_string(c.K));
}

TEST(InterpGrouped, MatchesFp64Loops) {
  auto mod = parseProgram(kGroupedGemm);
  ASSERT_TRUE(mod);
  std::mt19937_64 rng(31);
  // Groups out of order and skipped (group 1 has no rows in the first case), a ragged last group,
  // M = 1, and N, K that are not multiples of 16.
  runCase(programOf(*mod), {{{2, 64}, {0, 128}, {3, 37}}, 45, 29, 4}, rng);
  runCase(programOf(*mod), {{{1, 1}}, 17, 70, 2}, rng);
  runCase(programOf(*mod), {{{0, 64}, {1, 64}, {2, 64}}, 64, 64, 3}, rng);
}

TEST(InterpGrouped, SmallerBlocksThatDivideTheAlignGiveTheSameResult) {
  auto mod = parseProgram(kGroupedGemm);
  ASSERT_TRUE(mod);
  std::mt19937_64 rng(32);
  runCase(programOf(*mod), {{{1, 128}, {0, 70}}, 20, 33, 2}, rng, RunOptions{{{"M", 16}, {"K", 8}}});
}

}  // namespace
}  // namespace kiln::interp::testing
