// The interpreter's row ops: reductions along a whole dim (f32 accumulation of 16-bit inputs,
// order, NaN), the new math, comparisons and selection, tile.iota positions, tile.span's block.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "interp_test_util.h"

namespace kiln::interp::testing {
namespace {

using ir::ScalarType;
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// A row program: X [M, N] of `in`, the whole row spanned; `body` defines %r : tile<f32, [M]>,
// which goes to y [M].
std::string rowProgram(const std::string& in, const std::string& body) {
  return "tile.program() {sym_name = \"rows\", dims = [\"M\", \"N\"]} {\n"
         "  %X = tile.input() {name = \"X\"} : tensor<" + in + ", [M, N]>\n"
         "  %y = tile.output() {name = \"y\"} : tensor<f32, [M]>\n"
         "  tile.for_tiles() {dims = [\"M\"]} {\n"
         "  ^bb0(%m: coord<[M]>):\n"
         "    %n = tile.span() {dim = \"N\"} : coord<[N]>\n"
         "    %x = tile.load(%X, %m, %n) : tile<" + in + ", [M, N]>\n" + body +
         "    tile.store(%y, %m, %r)\n"
         "    tile.yield()\n"
         "  }\n"
         "}\n";
}

std::vector<double> runRows(const std::string& text, ScalarType in, int64_t m, const std::vector<double>& x,
                            const RunOptions& opts = {}, bool expectOk = true) {
  auto mod = parseProgram(text);
  if (!mod) return {};
  int64_t n = static_cast<int64_t>(x.size()) / m;
  HostTensor tx = makeHostTensor(in, {m, n}, x), ty = poisonedTensor(ScalarType::F32, {m});
  RunRequest req{{{"M", m}, {"N", n}}, {{"X", &tx}, {"y", &ty}}, {}};
  ir::DiagnosticEngine diag;
  EXPECT_EQ(run(programOf(*mod), req, diag, opts), expectOk) << diag.str();
  return toDoubles(ty);
}

// A thousand bf16 ones: a bf16 accumulator would stop at 256 (its ulp there is 2, and 256 + 1 ties
// to even, back to 256); the f32 accumulator reaches 1000.
TEST(InterpRowOps, SumOfBf16AccumulatesInF32) {
  std::vector<double> x(1000, 1.0);
  auto r = runRows(rowProgram("bf16", "    %r = tile.reduce_axis(%x) {kind = \"sum\", dim = \"N\"} : tile<f32, [M]>\n"),
                   ScalarType::BF16, 1, x);
  EXPECT_EQ(r, (std::vector<double>{1000.0}));
}

// The f32 sum adds in increasing position: 2^24 + 1 + 1 rounds each add back to 2^24, while
// 1 + 1 + 2^24 keeps both ones.
TEST(InterpRowOps, SumIsInPositionOrder) {
  std::string body = "    %r = tile.reduce_axis(%x) {kind = \"sum\", dim = \"N\"} : tile<f32, [M]>\n";
  double big = 16777216.0;
  EXPECT_EQ(runRows(rowProgram("f32", body), ScalarType::F32, 1, {big, 1, 1}), (std::vector<double>{big}));
  EXPECT_EQ(runRows(rowProgram("f32", body), ScalarType::F32, 1, {1, 1, big}), (std::vector<double>{big + 2}));
}

TEST(InterpRowOps, ResultRoundsOnceToANarrowType) {
  // bf16 ones and 2^-9s: a bf16 accumulator would drop every 2^-9 (below half an ulp of 1), the f32
  // one keeps them all, and the result rounds once: 1 + 2 * 2^-9 = 1 + 2^-8 ties to even (1),
  // 1 + 3 * 2^-9 rounds up to 1 + 2^-7.
  std::string body =
      "    %s = tile.reduce_axis(%x) {kind = \"sum\", dim = \"N\"} : tile<bf16, [M]>\n"
      "    %r = tile.cast(%s) : tile<f32, [M]>\n";
  double e = std::ldexp(1.0, -9);
  EXPECT_EQ(runRows(rowProgram("bf16", body), ScalarType::BF16, 1, {1, e, e}), (std::vector<double>{1.0}));
  EXPECT_EQ(runRows(rowProgram("bf16", body), ScalarType::BF16, 1, {1, e, e, e}), (std::vector<double>{1.0078125}));
}

TEST(InterpRowOps, MaxAndMinPropagateNaNAndOrderZeros) {
  std::string mx = "    %r = tile.reduce_axis(%x) {kind = \"max\", dim = \"N\"} : tile<f32, [M]>\n";
  std::string mn = "    %r = tile.reduce_axis(%x) {kind = \"min\", dim = \"N\"} : tile<f32, [M]>\n";
  auto r = runRows(rowProgram("f32", mx), ScalarType::F32, 2, {1, 5, -2, 3, kNaN, 4});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0], 5.0);
  EXPECT_TRUE(std::isnan(r[1]));
  auto z = runRows(rowProgram("f32", mn), ScalarType::F32, 1, {0.0, -0.0, 0.0});
  ASSERT_EQ(z.size(), 1u);
  EXPECT_TRUE(std::signbit(z[0]));
  auto z2 = runRows(rowProgram("f32", mx), ScalarType::F32, 1, {-0.0, 0.0, -0.0});
  EXPECT_FALSE(std::signbit(z2.at(0)));
}

// Rows are independent, whatever block of rows the tile loop gives each instance.
TEST(InterpRowOps, RowsDoNotDependOnTheRowBlock) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  int64_t m = 130, n = 37;
  std::vector<double> x(size_t(m * n));
  for (double& v : x) v = normal(rng);
  std::string body = "    %r = tile.reduce_axis(%x) {kind = \"sum\", dim = \"N\"} : tile<f32, [M]>\n";
  auto a = runRows(rowProgram("f32", body), ScalarType::F32, m, x);
  RunOptions opts;
  opts.blockSizes["M"] = 3;
  auto b = runRows(rowProgram("f32", body), ScalarType::F32, m, x, opts);
  EXPECT_EQ(a, b);
  for (int64_t i = 0; i < m; ++i) {
    float s = 0;
    for (int64_t j = 0; j < n; ++j) s += float(x[size_t(i * n + j)]);
    EXPECT_EQ(a[size_t(i)], double(s)) << "row " << i;
  }
}

TEST(InterpRowOps, ASpannedDimCannotBeSplit) {
  RunOptions opts;
  opts.blockSizes["N"] = 2;
  std::string body = "    %r = tile.reduce_axis(%x) {kind = \"sum\", dim = \"N\"} : tile<f32, [M]>\n";
  auto mod = parseProgram(rowProgram("f32", body));
  ASSERT_TRUE(mod);
  HostTensor tx = makeHostTensor(ScalarType::F32, {1, 4}, std::vector<double>{1, 2, 3, 4}), ty = poisonedTensor(ScalarType::F32, {1});
  RunRequest req{{{"M", 1}, {"N", 4}}, {{"X", &tx}, {"y", &ty}}, {}};
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(run(programOf(*mod), req, diag, opts));
  EXPECT_NE(diag.str().find("dim 'N' is spanned whole (tile.span), so its block is the whole dim (4), not 2"),
            std::string::npos)
      << diag.str();
}

// The label's logit picked out of each row by comparing positions (tile.iota) with the label.
TEST(InterpRowOps, IotaCmpSelectPickTheLabelColumn) {
  std::string text =
      "tile.program() {sym_name = \"pick\", dims = [\"M\", \"N\"]} {\n"
      "  %X = tile.input() {name = \"X\"} : tensor<f32, [M, N]>\n"
      "  %L = tile.input() {name = \"L\"} : tensor<i32, [M]>\n"
      "  %y = tile.output() {name = \"y\"} : tensor<f32, [M]>\n"
      "  tile.for_tiles() {dims = [\"M\"]} {\n"
      "  ^bb0(%m: coord<[M]>):\n"
      "    %n = tile.span() {dim = \"N\"} : coord<[N]>\n"
      "    %x = tile.load(%X, %m, %n) : tile<f32, [M, N]>\n"
      "    %c = tile.iota(%n) : tile<i32, [N]>\n"
      "    %cb = tile.broadcast(%c) : tile<i32, [M, N]>\n"
      "    %l = tile.load(%L, %m) : tile<i32, [M]>\n"
      "    %lb = tile.broadcast(%l) : tile<i32, [M, N]>\n"
      "    %hit = tile.cmp(%cb, %lb) {pred = \"eq\"} : tile<i1, [M, N]>\n"
      "    %zero = tile.constant() {value = 0.0} : f32\n"
      "    %p = tile.select(%hit, %x, %zero) : tile<f32, [M, N]>\n"
      "    %r = tile.reduce_axis(%p) {kind = \"sum\", dim = \"N\"} : tile<f32, [M]>\n"
      "    tile.store(%y, %m, %r)\n"
      "    tile.yield()\n"
      "  }\n"
      "}\n";
  auto mod = parseProgram(text);
  ASSERT_TRUE(mod);
  HostTensor tx = makeHostTensor(ScalarType::F32, {3, 4}, std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  HostTensor tl = makeHostTensor(ScalarType::I32, {3}, std::vector<double>{2, 0, 7});  // 7: no column, nothing picked
  HostTensor ty = poisonedTensor(ScalarType::F32, {3});
  RunRequest req{{{"M", 3}, {"N", 4}}, {{"X", &tx}, {"L", &tl}, {"y", &ty}}, {}};
  ir::DiagnosticEngine diag;
  ASSERT_TRUE(run(programOf(*mod), req, diag)) << diag.str();
  EXPECT_EQ(toDoubles(ty), (std::vector<double>{3, 5, 0}));
}

// tile.iota gives absolute positions: with blocks of 64 along a tiled dim, the second block starts
// at 64.
TEST(InterpRowOps, IotaPositionsAreAbsolute) {
  std::string text =
      "tile.program() {sym_name = \"pos\", dims = [\"N\"]} {\n"
      "  %y = tile.output() {name = \"y\"} : tensor<i32, [N]>\n"
      "  tile.for_tiles() {dims = [\"N\"]} {\n"
      "  ^bb0(%n: coord<[N]>):\n"
      "    %c = tile.iota(%n) : tile<i32, [N]>\n"
      "    tile.store(%y, %n, %c)\n"
      "    tile.yield()\n"
      "  }\n"
      "}\n";
  auto mod = parseProgram(text);
  ASSERT_TRUE(mod);
  HostTensor ty = makeHostTensor(ScalarType::I32, {100}, std::vector<double>(100, -1));
  RunRequest req{{{"N", 100}}, {{"y", &ty}}, {}};
  ir::DiagnosticEngine diag;
  ASSERT_TRUE(run(programOf(*mod), req, diag)) << diag.str();
  std::vector<double> want(100);
  std::iota(want.begin(), want.end(), 0.0);
  EXPECT_EQ(toDoubles(ty), want);
}

// Comparisons follow IEEE: every predicate is false with a NaN operand, except ne.
TEST(InterpRowOps, ComparisonsWithNaN) {
  for (const char* pred : {"eq", "ne", "lt", "le", "gt", "ge"}) {
    std::string body = std::string("    %k = tile.constant() {value = 1.0} : f32\n") +
                       "    %c = tile.cmp(%x, %k) {pred = \"" + pred + "\"} : tile<i1, [M, N]>\n" +
                       "    %one = tile.constant() {value = 1.0} : f32\n"
                       "    %zero = tile.constant() {value = 0.0} : f32\n"
                       "    %v = tile.select(%c, %one, %zero) : tile<f32, [M, N]>\n"
                       "    %r = tile.reduce_axis(%v) {kind = \"sum\", dim = \"N\"} : tile<f32, [M]>\n";
    // Per row: 0 < 1, 1 == 1, 2 > 1, NaN.
    auto r = runRows(rowProgram("f32", body), ScalarType::F32, 4, {0, 1, 2, kNaN});
    std::string p = pred;
    double lt = p == "lt" || p == "le" || p == "ne", eq = p == "eq" || p == "le" || p == "ge";
    double gt = p == "gt" || p == "ge" || p == "ne", nan = p == "ne";
    EXPECT_EQ(r, (std::vector<double>{lt, eq, gt, nan})) << pred;
  }
}

TEST(InterpRowOps, MathOpsRoundOnceToF32) {
  struct Case {
    const char* op;
    double x;
    double (*f)(double);
  };
  const Case cases[] = {
      {"exp2", 0.3, [](double v) { return std::exp2(v); }},
      {"log", 3.7, [](double v) { return std::log(v); }},
      {"sqrt", 2.0, [](double v) { return std::sqrt(v); }},
      {"rsqrt", 3.0, [](double v) { return 1.0 / std::sqrt(v); }},
      {"tanh", 0.7, [](double v) { return std::tanh(v); }},
      {"erf", -0.4, [](double v) { return std::erf(v); }},
  };
  for (const Case& c : cases) {
    std::string body = std::string("    %v = tile.") + c.op + "(%x) : tile<f32, [M, N]>\n" +
                       "    %r = tile.reduce_axis(%v) {kind = \"sum\", dim = \"N\"} : tile<f32, [M]>\n";
    auto r = runRows(rowProgram("f32", body), ScalarType::F32, 1, {c.x});
    EXPECT_EQ(r, (std::vector<double>{double(float(c.f(double(float(c.x)))))})) << c.op;
  }
  std::string body =
      "    %v = tile.pow(%x) {exponent = 1.5} : tile<f32, [M, N]>\n"
      "    %r = tile.reduce_axis(%v) {kind = \"max\", dim = \"N\"} : tile<f32, [M]>\n";
  EXPECT_EQ(runRows(rowProgram("f32", body), ScalarType::F32, 1, {2.0}),
            (std::vector<double>{double(float(std::pow(2.0, 1.5)))}));
}

// The fp64 reference sums in double: 2^24 + 1 + 1 keeps both ones.
TEST(InterpRowOps, ReferenceSumsInDouble) {
  std::string body = "    %r = tile.reduce_axis(%x) {kind = \"sum\", dim = \"N\"} : tile<f32, [M]>\n";
  auto mod = parseProgram(rowProgram("f32", body));
  ASSERT_TRUE(mod);
  HostTensor tx = makeHostTensor(ScalarType::F32, {1, 3}, std::vector<double>{16777216.0, 1, 1}), ty = poisonedTensor(ScalarType::F32, {1});
  RunRequest req{{{"M", 1}, {"N", 3}}, {{"X", &tx}, {"y", &ty}}, {}};
  std::map<std::string, std::vector<double>> out;
  ir::DiagnosticEngine diag;
  ASSERT_TRUE(runReference(programOf(*mod), req, out, diag)) << diag.str();
  EXPECT_EQ(out.at("y"), (std::vector<double>{16777218.0}));
}

}  // namespace
}  // namespace kiln::interp::testing
