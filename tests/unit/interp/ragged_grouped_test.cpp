// Ragged grouped GEMMs in the interpreter (ops/grouped_programs.h): groups of rows given by offsets
// (MoE forward), the masked layout given by counts, groups of K (weight gradient), BF16 and FP8
// with block scales; rows no group owns are never written; bad bounds are refused by name.
#include <gtest/gtest.h>

#include "interp/element_codec.h"
#include "interp_test_util.h"
#include "kiln/program_builder.h"
#include "ops/grouped_programs.h"
#include "scaled_reference.h"

namespace kiln::interp::testing {
namespace {

using ir::ScalarType;
using L = ops::GroupedGemmSpec::Layout;

HostTensor bounds(const std::vector<double>& v) {
  return makeHostTensor(ScalarType::I32, {static_cast<int64_t>(v.size())}, v);
}

// Rows [lo, hi) of a [rows, cols] matrix.
Mat rowsOf(const Mat& x, int64_t lo, int64_t hi) {
  return {hi - lo, x.cols, std::vector<double>(x.v.begin() + lo * x.cols, x.v.begin() + hi * x.cols)};
}
// The plain f32 dot of the interpreter's contract (one slice, unit scales).
std::vector<float> dotF32(const Mat& a, const Mat& b) {
  Mat sa{a.rows, a.cols, std::vector<double>(a.v.size(), 1.0)}, sb{b.rows, b.cols, std::vector<double>(b.v.size(), 1.0)};
  return scaledDotF32(a, sa, b, sb, std::max<int64_t>(a.cols, 1));
}

struct MoeRun {
  std::vector<double> out;
  std::string error;
};

// The offsets layout in BF16: A [M, K], B [G, K, N] stored [G][N][K], C [M, N] poisoned first.
MoeRun runMoe(int64_t G, int64_t M, int64_t N, int64_t K, HostTensor& A, HostTensor& B, HostTensor offs,
              const RunOptions& opts = {}) {
  auto mod = ops::groupedGemmProgram({L::Offsets, ScalarType::BF16, ScalarType::F32}, "moe");
  HostTensor C = poisonedTensor(ScalarType::F32, {M, N});
  RunRequest req{{{"G", G}, {"M", M}, {"N", N}, {"K", K}}, {{"A", &A}, {"B", &B}, {"offsets", &offs}, {"C", &C}}, {}};
  ir::DiagnosticEngine diag;
  MoeRun r;
  if (run(programOf(*mod), req, diag, opts)) r.out = toDoubles(C);
  r.error = diag.str();
  return r;
}

// B [G, K, N] (order [1, 2, 0]: stored [G][N][K]) as logical per-group [K, N] matrices.
std::vector<Mat> groupMatrices(const HostTensor& B, int64_t G, int64_t K, int64_t N) {
  std::vector<Mat> bs;
  for (int64_t g = 0; g < G; ++g) {
    Mat b{K, N, std::vector<double>(static_cast<size_t>(K * N))};
    for (int64_t k = 0; k < K; ++k)
      for (int64_t n = 0; n < N; ++n) b.v[static_cast<size_t>(k * N + n)] = getElement(B, (g * N + n) * K + k);
    bs.push_back(b);
  }
  return bs;
}

TEST(InterpRaggedGroups, OffsetsGiveEachGroupItsOwnMatrixAndLeaveUnownedRowsAlone) {
  std::mt19937_64 rng(1);
  const int64_t G = 5, M = 300, N = 40, K = 72;
  HostTensor A = randomTensor(ScalarType::BF16, {M, K}, rng), B = randomTensor(ScalarType::BF16, {G, K, N}, rng);
  // Group sizes 70, 0 (an empty expert), 131, 1, 50: rows 252.. belong to no group.
  const std::vector<double> ends = {70, 70, 201, 202, 252};
  Mat a{M, K, toDoubles(A)};
  std::vector<Mat> bs = groupMatrices(B, G, K, N);
  MoeRun r = runMoe(G, M, N, K, A, B, bounds(ends));
  ASSERT_FALSE(r.out.empty()) << r.error;
  int64_t lo = 0;
  for (int64_t g = 0; g < G; ++g) {
    int64_t hi = static_cast<int64_t>(ends[g]);
    std::vector<float> want = dotF32(rowsOf(a, lo, hi), bs[g]);
    for (int64_t i = lo; i < hi; ++i)
      for (int64_t n = 0; n < N; ++n)
        ASSERT_EQ(r.out[static_cast<size_t>(i * N + n)], want[static_cast<size_t>((i - lo) * N + n)]) << i << "," << n;
    lo = hi;
  }
  for (int64_t i = 252; i < M; ++i) ASSERT_TRUE(std::isnan(r.out[static_cast<size_t>(i * N)])) << "row " << i;
  // The groups' tiles start at their own first rows whatever the block: the same bits with 16-row blocks.
  RunOptions small;
  small.blockSizes = {{"M", 16}, {"N", 8}};
  std::vector<double> again = runMoe(G, M, N, K, A, B, bounds(ends), small).out;
  ASSERT_EQ(again.size(), r.out.size());
  for (size_t e = 0; e < again.size(); ++e)  // the same bits, unwritten rows NaN in both
    ASSERT_TRUE(again[e] == r.out[e] || (std::isnan(again[e]) && std::isnan(r.out[e]))) << e;
}

TEST(InterpRaggedGroups, BadOffsetsAreRefusedNamingTheTensorAndTheGroup) {
  std::mt19937_64 rng(2);
  const int64_t G = 3, M = 100, N = 8, K = 16;
  HostTensor A = randomTensor(ScalarType::BF16, {M, K}, rng), B = randomTensor(ScalarType::BF16, {G, K, N}, rng);
  EXPECT_NE(runMoe(G, M, N, K, A, B, bounds({40, 30, 100})).error.find(
                "the offsets in 'offsets' must not decrease: group 1 ends at 30, before group 0's end 40"),
            std::string::npos);
  EXPECT_NE(runMoe(G, M, N, K, A, B, bounds({40, 60, 101})).error.find(
                "the offsets in 'offsets' must lie in [0, M] = [0, 100]: group 2 ends at 101"),
            std::string::npos);
  EXPECT_NE(runMoe(G, M, N, K, A, B, bounds({-1, 60, 100})).error.find(
                "the offsets in 'offsets' must lie in [0, M] = [0, 100]: group 0 ends at -1"),
            std::string::npos);
}

TEST(InterpRaggedGroups, TheMaskedLayoutComputesEachGroupsCountOfRows) {
  std::mt19937_64 rng(3);
  const int64_t G = 3, M = 96, N = 24, K = 40;
  HostTensor A = randomTensor(ScalarType::BF16, {G, M, K}, rng), B = randomTensor(ScalarType::BF16, {G, K, N}, rng);
  HostTensor counts = bounds({96, 0, 37});
  HostTensor C = poisonedTensor(ScalarType::BF16, {G, M, N});
  auto mod = ops::groupedGemmProgram({L::Masked, ScalarType::BF16, ScalarType::BF16}, "masked");
  RunRequest req{{{"G", G}, {"M", M}, {"N", N}, {"K", K}}, {{"A", &A}, {"B", &B}, {"counts", &counts}, {"C", &C}}, {}};
  ir::DiagnosticEngine diag;
  ASSERT_TRUE(run(programOf(*mod), req, diag)) << diag.str();
  std::vector<double> a = toDoubles(A), out = toDoubles(C);
  std::vector<Mat> bs = groupMatrices(B, G, K, N);
  const int64_t count[] = {96, 0, 37};
  for (int64_t g = 0; g < G; ++g) {
    Mat ag{M, K, std::vector<double>(a.begin() + g * M * K, a.begin() + (g + 1) * M * K)};
    std::vector<float> want = dotF32(ag, bs[g]);
    for (int64_t i = 0; i < M; ++i) {
      double got = out[static_cast<size_t>((g * M + i) * N)];
      if (i < count[g]) ASSERT_EQ(got, roundToType(want[static_cast<size_t>(i * N)], ScalarType::BF16)) << g << "," << i;
      else ASSERT_TRUE(std::isnan(got)) << "group " << g << " row " << i << " is past its count";
    }
  }
  HostTensor bad = bounds({96, 97, 0});
  req.tensors["counts"] = &bad;
  ir::DiagnosticEngine d2;
  EXPECT_FALSE(run(programOf(*mod), req, d2));
  EXPECT_NE(d2.str().find("the counts in 'counts' must lie in [0, M] = [0, 96]: group 1 has 97"), std::string::npos)
      << d2.str();
}

TEST(InterpRaggedGroups, GroupsAlongKSumOnlyTheirOwnSliceAndAnEmptyGroupGivesZeros) {
  std::mt19937_64 rng(4);
  const int64_t G = 4, M = 20, N = 12, K = 150;
  HostTensor A = randomTensor(ScalarType::BF16, {M, K}, rng);  // order [0, 1]: stored [K][M]
  HostTensor B = randomTensor(ScalarType::BF16, {K, N}, rng);
  HostTensor offs = bounds({60, 60, 149, 150});
  HostTensor C = poisonedTensor(ScalarType::F32, {G, M, N});
  auto mod = ops::groupedGemmProgram({L::GroupsAlongK, ScalarType::BF16, ScalarType::F32}, "wgrad");
  RunRequest req{{{"G", G}, {"M", M}, {"N", N}, {"K", K}}, {{"A", &A}, {"B", &B}, {"offsets", &offs}, {"C", &C}}, {}};
  ir::DiagnosticEngine diag;
  RunOptions opts;
  opts.blockSizes = {{"K", 32}};  // blocks of K that straddle the groups' ends
  ASSERT_TRUE(run(programOf(*mod), req, diag, opts)) << diag.str();
  std::vector<double> out = toDoubles(C);
  const int64_t lo[] = {0, 60, 60, 149}, hi[] = {60, 60, 149, 150};
  for (int64_t g = 0; g < G; ++g) {
    Mat a{M, hi[g] - lo[g], {}}, b{hi[g] - lo[g], N, {}};
    for (int64_t i = 0; i < M; ++i)
      for (int64_t k = lo[g]; k < hi[g]; ++k) a.v.push_back(getElement(A, k * M + i));
    for (int64_t k = lo[g]; k < hi[g]; ++k)
      for (int64_t n = 0; n < N; ++n) b.v.push_back(getElement(B, k * N + n));
    std::vector<float> want = hi[g] > lo[g] ? dotF32(a, b) : std::vector<float>(static_cast<size_t>(M * N), 0.0f);
    for (int64_t e = 0; e < M * N; ++e) ASSERT_EQ(out[static_cast<size_t>(g * M * N + e)], want[static_cast<size_t>(e)]) << g;
  }
}

TEST(InterpRaggedGroups, Fp8BlockwiseGroupsScaleEachSliceWithTheirOwnScales) {
  std::mt19937_64 rng(5);
  const int64_t G = 2, M = 150, N = 130, K = 256, kb = 2, nb = 2;
  HostTensor A = randomTensor(ScalarType::F8E4M3, {M, K}, rng, 8.0), B = randomTensor(ScalarType::F8E4M3, {G, K, N}, rng, 8.0);
  std::uniform_real_distribution<double> u(0.25, 4.0);
  std::vector<double> sa(static_cast<size_t>(M * kb)), sb(static_cast<size_t>(G * nb * kb));
  for (double& x : sa) x = float(u(rng));
  for (double& x : sb) x = float(u(rng));
  HostTensor SA = storedTensor(ScalarType::F32, {M, kb}, {0, 1}, [&](auto i) { return sa[i[0] * kb + i[1]]; });
  HostTensor SB = storedTensor(ScalarType::F32, {G, kb, nb}, {1, 2, 0},
                               [&](auto i) { return sb[(i[0] * kb + i[1]) * nb + i[2]]; });
  HostTensor offs = bounds({100, 150});
  HostTensor C = poisonedTensor(ScalarType::F32, {M, N});
  auto mod = ops::groupedGemmProgram({L::Offsets, ScalarType::F8E4M3, ScalarType::F32}, "moe_fp8");
  RunRequest req{{{"G", G}, {"M", M}, {"N", N}, {"K", K}},
                 {{"A", &A}, {"B", &B}, {"scale_a", &SA}, {"scale_b", &SB}, {"offsets", &offs}, {"C", &C}},
                 {}};
  ir::DiagnosticEngine diag;
  ASSERT_TRUE(run(programOf(*mod), req, diag)) << diag.str();
  std::vector<double> out = toDoubles(C);
  Mat a{M, K, toDoubles(A)};
  std::vector<Mat> bs = groupMatrices(B, G, K, N);
  const int64_t lo[] = {0, 100}, hi[] = {100, 150};
  for (int64_t g = 0; g < G; ++g) {
    Mat ag = rowsOf(a, lo[g], hi[g]), sag{hi[g] - lo[g], K, {}}, sbg{K, N, {}};
    for (int64_t i = lo[g]; i < hi[g]; ++i)
      for (int64_t k = 0; k < K; ++k) sag.v.push_back(sa[i * kb + k / 128]);
    for (int64_t k = 0; k < K; ++k)
      for (int64_t n = 0; n < N; ++n) sbg.v.push_back(sb[(g * kb + k / 128) * nb + n / 128]);
    std::vector<float> want = scaledDotF32(ag, sag, bs[g], sbg, 128);
    for (int64_t e = 0; e < (hi[g] - lo[g]) * N; ++e)
      ASSERT_EQ(out[static_cast<size_t>(lo[g] * N + e)], want[static_cast<size_t>(e)]) << g << " " << e;
  }
}

TEST(InterpRaggedGroups, TheDslRefusesBoundsThatAreNotOneIntegerPerGroup) {
  try {
    ProgramBuilder p("bad");
    auto [G, M, N] = p.dims("G", "M", "N");
    auto X = p.input("X", f32, {M, N});
    auto offs = p.input("offsets", f32, {G});
    auto Y = p.output("Y", f32, {M, N});
    p.tile_grouped(G, Ragged::byOffsets(M, offs), {M, N}, [&](Index, Coord m, Coord n) { Y(m, n) = X(m, n); });
    FAIL() << "no error";
  } catch (const ir::Error& e) {
    EXPECT_NE(std::string(e.what()).find("the offsets of a ragged 'tile.for_tiles' must be a tile.input of type "
                                         "tensor<i32, [G]> (or i64): one entry per group, got tensor<f32, [G]>"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace kiln::interp::testing
