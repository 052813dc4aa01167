// The FP8 scaling modes in the interpreter (ops/fp8_programs.h): blockwise scales applied to each
// 128-wide slice of K before it joins the f32 accumulator, tensorwise and 1x128 x 1x128, checked
// bit for bit against the documented numerics written again in float (scaled_reference.h).
#include <gtest/gtest.h>

#include "interp/element_codec.h"
#include "interp_test_util.h"
#include "kiln/program_builder.h"
#include "ops/fp8_programs.h"
#include "scaled_reference.h"

namespace kiln::interp::testing {
namespace {

using ir::ScalarType;
using ops::Fp8GemmSpec;
using ops::Fp8Scaling;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct Problem {
  int64_t M, N, K;
};

// Random FP8 operands (B given as logical [K, N], stored K-major) and positive scales, each scale
// block its own value, and the logical matrices the reference reads.
struct Fp8Case {
  HostTensor A, B, SA, SB;
  Mat a, b, sa, sb;  // logical: sa [M, K], sb [K, N], each element its block's scale
};

Fp8Case makeCase(const Problem& s, Fp8Scaling mode, ScalarType ta, ScalarType tb, std::mt19937_64& rng) {
  Fp8Case c;
  c.A = randomTensor(ta, {s.M, s.K}, rng, 8.0);
  c.a = {s.M, s.K, toDoubles(c.A)};
  HostTensor bt = randomTensor(tb, {s.K, s.N}, rng, 8.0);  // order [0, 1]: stored [N][K]
  c.B = bt;
  c.b = {s.K, s.N, std::vector<double>(static_cast<size_t>(s.K * s.N))};
  for (int64_t k = 0; k < s.K; ++k)
    for (int64_t n = 0; n < s.N; ++n) c.b.v[static_cast<size_t>(k * s.N + n)] = getElement(bt, n * s.K + k);
  std::uniform_real_distribution<double> u(0.25, 4.0);
  auto f32 = [&] { return double(float(u(rng))); };
  c.sa = {s.M, s.K, std::vector<double>(static_cast<size_t>(s.M * s.K))};
  c.sb = {s.K, s.N, std::vector<double>(static_cast<size_t>(s.K * s.N))};
  const int64_t kb = ceilDiv(s.K, 128), nb = ceilDiv(s.N, 128);
  if (mode == Fp8Scaling::Tensorwise) {
    double x = f32(), y = f32();
    c.SA = makeHostTensor(ScalarType::F32, {1}, std::vector<double>{x});
    c.SB = makeHostTensor(ScalarType::F32, {1}, std::vector<double>{y});
    std::fill(c.sa.v.begin(), c.sa.v.end(), x);
    std::fill(c.sb.v.begin(), c.sb.v.end(), y);
    return c;
  }
  // scale_a: [M, K] in blocks of [1, 128], stored [kb][M].
  std::vector<double> sa(static_cast<size_t>(s.M * kb));
  for (double& x : sa) x = f32();
  c.SA = storedTensor(ScalarType::F32, {s.M, kb}, {0, 1}, [&](auto i) { return sa[i[0] * kb + i[1]]; });
  for (int64_t m = 0; m < s.M; ++m)
    for (int64_t k = 0; k < s.K; ++k) c.sa.v[static_cast<size_t>(m * s.K + k)] = sa[m * kb + k / 128];
  if (mode == Fp8Scaling::Block1x128x128x128) {  // [K, N] in blocks of [128, 128], stored [nb][kb]
    std::vector<double> sb(static_cast<size_t>(kb * nb));
    for (double& x : sb) x = f32();
    c.SB = storedTensor(ScalarType::F32, {kb, nb}, {0, 1}, [&](auto i) { return sb[i[0] * nb + i[1]]; });
    for (int64_t k = 0; k < s.K; ++k)
      for (int64_t n = 0; n < s.N; ++n) c.sb.v[static_cast<size_t>(k * s.N + n)] = sb[(k / 128) * nb + n / 128];
  } else {  // [K, N] in blocks of [128, 1], stored [kb][N]
    std::vector<double> sb(static_cast<size_t>(kb * s.N));
    for (double& x : sb) x = f32();
    c.SB = storedTensor(ScalarType::F32, {kb, s.N}, {}, [&](auto i) { return sb[i[0] * s.N + i[1]]; });
    for (int64_t k = 0; k < s.K; ++k)
      for (int64_t n = 0; n < s.N; ++n) c.sb.v[static_cast<size_t>(k * s.N + n)] = sb[(k / 128) * s.N + n];
  }
  return c;
}

// Runs the mode's program; returns the output's values (storage order: row-major [M, N]).
std::vector<double> runCase(const Fp8GemmSpec& spec, const Problem& s, Fp8Case& c, const RunOptions& opts = {},
                            std::string* error = nullptr) {
  auto mod = ops::fp8GemmProgram(spec, "fp8_gemm");
  HostTensor C = poisonedTensor(spec.out, {s.M, s.N});
  RunRequest req{{{"M", s.M}, {"N", s.N}, {"K", s.K}},
                 {{"A", &c.A}, {"B", &c.B}, {"scale_a", &c.SA}, {"scale_b", &c.SB}, {"C", &C}},
                 {}};
  ir::DiagnosticEngine diag;
  bool ok = run(programOf(*mod), req, diag, opts);
  if (error) *error = diag.str();
  else EXPECT_TRUE(ok) << diag.str();
  return ok ? toDoubles(C) : std::vector<double>{};
}

TEST(InterpFp8Scaling, BlockwiseMatchesTheDocumentedNumericsBitForBit) {
  std::mt19937_64 rng(41);
  for (Fp8Scaling mode : {Fp8Scaling::Block1x128x128x128, Fp8Scaling::Block1x128x1x128})
    for (Problem s : {Problem{1, 1, 1}, Problem{3, 5, 300}, Problem{70, 140, 256}, Problem{66, 130, 385}}) {
      Fp8GemmSpec spec{mode, ScalarType::F8E4M3, ScalarType::F8E4M3, ScalarType::F32};
      Fp8Case c = makeCase(s, mode, spec.a, spec.b, rng);
      std::vector<double> got = runCase(spec, s, c);
      std::vector<float> want = scaledDotF32(c.a, c.sa, c.b, c.sb, 128);
      ASSERT_EQ(got.size(), want.size());
      for (size_t e = 0; e < want.size(); ++e)
        ASSERT_EQ(float(got[e]), want[e]) << ops::fp8ScalingName(mode) << " M=" << s.M << " N=" << s.N << " K=" << s.K
                                          << " element " << e;
    }
}

// The same numbers with the scales applied once after the K loop differ: the test above would
// catch an interpreter that scaled at the end (or a contract that said so).
TEST(InterpFp8Scaling, SlicesAreScaledBeforeTheyJoinTheAccumulator) {
  std::mt19937_64 rng(7);
  Problem s{8, 8, 512};
  Fp8GemmSpec spec{Fp8Scaling::Block1x128x128x128, ScalarType::F8E4M3, ScalarType::F8E4M3, ScalarType::F32};
  Fp8Case c = makeCase(s, spec.scaling, spec.a, spec.b, rng);
  std::vector<double> got = runCase(spec, s, c);
  int differ = 0;
  for (int64_t i = 0; i < s.M; ++i)
    for (int64_t j = 0; j < s.N; ++j) {
      double atEnd = 0;  // every slice's sum times the first slice's scales
      for (int64_t k = 0; k < s.K; ++k) atEnd += c.a.at(i, k) * c.b.at(k, j);
      atEnd *= c.sa.at(i, 0) * c.sb.at(0, j);
      differ += std::fabs(got[static_cast<size_t>(i * s.N + j)] - atEnd) > 1e-3 * std::fabs(atEnd);
    }
  EXPECT_GT(differ, 32);
}

TEST(InterpFp8Scaling, MixedFormatsAndBf16OutputRoundOnceFromTheF32Result) {
  std::mt19937_64 rng(3);
  Problem s{33, 65, 200};
  Fp8GemmSpec spec{Fp8Scaling::Block1x128x128x128, ScalarType::F8E4M3, ScalarType::F8E5M2, ScalarType::BF16};
  Fp8Case c = makeCase(s, spec.scaling, spec.a, spec.b, rng);
  std::vector<double> got = runCase(spec, s, c);
  std::vector<float> want = scaledDotF32(c.a, c.sa, c.b, c.sb, 128);
  for (size_t e = 0; e < want.size(); ++e) ASSERT_EQ(got[e], roundToType(want[e], ScalarType::BF16)) << e;
}

TEST(InterpFp8Scaling, TensorwiseScalesTheF32SumOnceByTheRoundedProductOfTheScales) {
  std::mt19937_64 rng(5);
  Problem s{17, 9, 300};
  Fp8GemmSpec spec{Fp8Scaling::Tensorwise, ScalarType::F8E4M3, ScalarType::F8E4M3, ScalarType::F32};
  Fp8Case c = makeCase(s, spec.scaling, spec.a, spec.b, rng);
  std::vector<double> got = runCase(spec, s, c);
  Mat ones{s.M, s.K, std::vector<double>(c.sa.v.size(), 1.0)}, onesB{s.K, s.N, std::vector<double>(c.sb.v.size(), 1.0)};
  std::vector<float> dot = scaledDotF32(c.a, ones, c.b, onesB, s.K);  // one slice: the plain f32 dot
  volatile float scale = float(c.sa.at(0, 0)) * float(c.sb.at(0, 0));
  for (size_t e = 0; e < dot.size(); ++e) ASSERT_EQ(float(got[e]), dot[e] * scale) << e;
}

TEST(InterpFp8Scaling, KBlocksThatAreMultiplesOfTheSliceGiveTheSameBitsOthersAreRefused) {
  std::mt19937_64 rng(11);
  Problem s{20, 30, 640};
  Fp8GemmSpec spec{Fp8Scaling::Block1x128x128x128, ScalarType::F8E4M3, ScalarType::F8E4M3, ScalarType::F32};
  Fp8Case c = makeCase(s, spec.scaling, spec.a, spec.b, rng);
  std::vector<double> whole = runCase(spec, s, c);
  RunOptions opts;
  opts.blockSizes = {{"K", 256}, {"M", 8}, {"N", 16}};
  EXPECT_EQ(runCase(spec, s, c, opts), whole);
  opts.blockSizes = {{"K", 64}};
  std::string error;
  EXPECT_TRUE(runCase(spec, s, c, opts, &error).empty());
  EXPECT_NE(error.find("block size 64 for dim 'K' must be a multiple of 128: tile.dot_scaled scales slices of 128 "
                       "along it, and a slice may not straddle two blocks"),
            std::string::npos)
      << error;
}

// Slices whose least common multiple overflows int64 saturate instead of wrapping: no K block is a
// multiple of it, and the override is refused with the saturated value, not undefined behaviour.
// (Computed scales, not loads of block tensors, so the verifier has no block to hold them to.)
TEST(InterpFp8Scaling, SlicesWhoseLcmOverflowsRefuseEveryKBlockOverride) {
  const std::string text = R"(tile.program() {sym_name = "p", dims = ["M", "N", "K"]} {
  %A = tile.input() {name = "A"} : tensor<f8e4m3, [M, K]>
  %B = tile.input() {name = "B"} : tensor<f8e4m3, [K, N]>
  %S = tile.input() {name = "S"} : tensor<f32, [M, K]>
  %T = tile.input() {name = "T"} : tensor<f32, [K, N]>
  %C = tile.output() {name = "C"} : tensor<f32, [M, N]>
  tile.for_tiles() {dims = ["M", "N"]} {
  ^bb0(%m: coord<[M]>, %n: coord<[N]>):
    %z = tile.constant() {value = 0.0} : tile<f32, [M, N]>
    %r = tile.reduce(%z) {dim = "K"} : tile<f32, [M, N]> {
    ^bb0(%k: coord<[K]>, %c: tile<f32, [M, N]>):
      %a = tile.load(%A, %m, %k) : tile<f8e4m3, [M, K]>
      %b = tile.load(%B, %k, %n) : tile<f8e4m3, [K, N]>
      %s0 = tile.load(%S, %m, %k) : tile<f32, [M, K]>
      %t0 = tile.load(%T, %k, %n) : tile<f32, [K, N]>
      %s = tile.abs(%s0) : tile<f32, [M, K]>
      %t = tile.abs(%t0) : tile<f32, [K, N]>
      %d = tile.dot_scaled(%a, %s, %b, %t, %c) {block_k = 4294967311} : tile<f32, [M, N]>
      %e = tile.dot_scaled(%a, %s, %b, %t, %d) {block_k = 4294967357} : tile<f32, [M, N]>
      tile.yield(%e)
    }
    tile.store(%C, %m, %n, %r)
    tile.yield()
  }
})";
  auto mod = parseProgram(text);
  ASSERT_TRUE(mod);
  HostTensor A = makeHostTensor(ScalarType::F8E4M3, {2, 300}), B = makeHostTensor(ScalarType::F8E4M3, {300, 2});
  HostTensor S = makeHostTensor(ScalarType::F32, {2, 300}), T = makeHostTensor(ScalarType::F32, {300, 2});
  HostTensor C = poisonedTensor(ScalarType::F32, {2, 2});
  RunRequest req{{{"M", 2}, {"N", 2}, {"K", 300}}, {{"A", &A}, {"B", &B}, {"S", &S}, {"T", &T}, {"C", &C}}, {}};
  RunOptions opts;
  opts.blockSizes = {{"K", 128}};
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(run(programOf(*mod), req, diag, opts));
  EXPECT_NE(diag.str().find("block size 128 for dim 'K' must be a multiple of 9223372036854775807"), std::string::npos)
      << diag.str();
}

TEST(InterpFp8Scaling, AScaleTensorOfTheWrongStoredShapeIsRefusedByName) {
  std::mt19937_64 rng(13);
  Problem s{4, 4, 300};
  Fp8GemmSpec spec{Fp8Scaling::Block1x128x128x128, ScalarType::F8E4M3, ScalarType::F8E4M3, ScalarType::F32};
  Fp8Case c = makeCase(s, spec.scaling, spec.a, spec.b, rng);
  c.SA = makeHostTensor(ScalarType::F32, {4, 2});  // K = 300 needs ceil(300 / 128) = 3 blocks
  std::string error;
  runCase(spec, s, c, {}, &error);
  EXPECT_NE(error.find("tensor 'scale_a' is declared [M, K] in blocks of [1, 128] = [4, 3], but the tensor given has "
                       "shape [4, 2]"),
            std::string::npos)
      << error;
}

TEST(InterpFp8Scaling, TheDslReportsScaleMistakesAtTheUsersLine) {
  auto build = [](int variant) {
    ProgramBuilder p("bad");
    auto [M, N, K] = p.dims("M", "N", "K");
    auto A = p.input("A", f8e4m3, {M, K});
    auto B = p.input("B", f8e4m3, {K, N}, {0, 1});
    auto SA = p.scales("scale_a", {M, K}, {1, 128});
    auto SB = p.scales("scale_b", {K, N}, {64, 128});
    auto T = p.input("t", f32, {M});
    auto C = p.output("C", f32, {M, N});
    p.tile({M, N}, [&](Coord m, Coord n) {
      Tile acc = p.zeros(f32, {m, n});
      p.reduce(K, [&](Coord k) {
        if (variant == 0) acc = dot_scaled(A(m, k), SA(m, k), B(k, n), SB(k, n), acc);
        if (variant == 1) acc = dot_scaled(A(m, k), SA(m, k), B(k, n), SA(m, k), acc, 128);
        if (variant == 2) acc = scale(acc, T.item());
      });
      C(m, n) = acc;
    });
    return p.finish();
  };
  auto message = [&](int variant) {
    try {
      build(variant);
    } catch (const ir::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(0).find("dot_scaled: the scales of a change every 128 along K and those of b every 64; pass blockK"),
            std::string::npos)
      << message(0);
  EXPECT_NE(message(1).find("dot_scaled: the scales of b must be loaded at b's indices ([K, N]), got tile<f32, [M, K]>"),
            std::string::npos)
      << message(1);
  EXPECT_NE(message(2).find("item() reads the one element of a tensor with one element; 't' is tensor<f32, [M]>"),
            std::string::npos)
      << message(2);
  EXPECT_NE(message(0).find("fp8_scaling_test.cpp"), std::string::npos) << "reported at the user's line: " << message(0);
}

}  // namespace
}  // namespace kiln::interp::testing
