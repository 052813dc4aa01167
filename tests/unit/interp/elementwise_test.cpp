// Elementwise semantics of the interpreter: one rounding per op, NaN-propagating max/min, the
// transcendental functions, casts (FP8 saturation, bf16 overflow, integers), scalars and {other}.
#include <gtest/gtest.h>

#include <numbers>

#include "interp_test_util.h"

namespace kiln::interp::testing {
namespace {

using ir::ScalarType;
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// A one-dim program: loads %x0 and %z0 (tile<IN, [N]>) from inputs x and z, runs `body`, which
// must define %r : tile<OUT, [N]>, and stores %r into y.
std::string program1d(const std::string& in, const std::string& out, const std::string& body) {
  return "tile.program() {sym_name = \"ew\", dims = [\"N\"]} {\n"
         "  %x = tile.input() {name = \"x\"} : tensor<" + in + ", [N]>\n"
         "  %z = tile.input() {name = \"z\"} : tensor<" + in + ", [N]>\n"
         "  %y = tile.output() {name = \"y\"} : tensor<" + out + ", [N]>\n"
         "  tile.for_tiles() {dims = [\"N\"]} {\n"
         "  ^bb0(%n: coord<[N]>):\n"
         "    %x0 = tile.load(%x, %n) : tile<" + in + ", [N]>\n"
         "    %z0 = tile.load(%z, %n) : tile<" + in + ", [N]>\n" + body +
         "    tile.store(%y, %n, %r)\n"
         "    tile.yield()\n"
         "  }\n"
         "}\n";
}

std::vector<double> run1d(const std::string& text, ScalarType in, ScalarType out, const std::vector<double>& x,
                          std::vector<double> z = {}) {
  auto mod = parseProgram(text);
  if (!mod) return {};
  if (z.empty()) z.assign(x.size(), 0.0);
  int64_t n = static_cast<int64_t>(x.size());
  HostTensor tx = makeHostTensor(in, {n}, x), tz = makeHostTensor(in, {n}, z), ty = poisonedTensor(out, {n});
  RunRequest req{{{"N", n}}, {{"x", &tx}, {"z", &tz}, {"y", &ty}}, {}};
  ir::DiagnosticEngine diag;
  EXPECT_TRUE(run(programOf(*mod), req, diag)) << diag.str();
  return toDoubles(ty);
}

// Bits, so that NaN == NaN and -0 != +0 in comparisons.
std::vector<uint64_t> bits(const std::vector<double>& v) {
  std::vector<uint64_t> b;
  for (double d : v) b.push_back(std::isnan(d) ? 0x7ff8000000000000ull : std::bit_cast<uint64_t>(d));
  return b;
}

// 1 + 3*2^-10 rounds to 1 in bf16 (below half an ulp, 2^-8), so adding 3*2^-10 twice with a
// rounding after each add stays at 1; rounding only at the end would give 1 + 2^-7.
TEST(InterpElementwise, Bf16RoundsAfterEveryOp) {
  std::string body =
      "    %c = tile.constant() {value = 0.0029296875} : tile<bf16, [N]>\n"
      "    %a1 = tile.add(%x0, %c) : tile<bf16, [N]>\n"
      "    %r = tile.add(%a1, %c) : tile<bf16, [N]>\n";
  EXPECT_EQ(run1d(program1d("bf16", "bf16", body), ScalarType::BF16, ScalarType::BF16, {1.0}), (std::vector<double>{1.0}));
}

// f32 math is single precision: 1 + 2^-30 is 1.
TEST(InterpElementwise, F32MathIsSinglePrecision) {
  std::string body = "    %r = tile.add(%x0, %z0) : tile<f32, [N]>\n";
  EXPECT_EQ(run1d(program1d("f32", "f32", body), ScalarType::F32, ScalarType::F32, {1.0}, {std::ldexp(1.0, -30)}),
            (std::vector<double>{1.0}));
}

TEST(InterpElementwise, MaxMinPropagateNanAndOrderSignedZeros) {
  std::vector<double> x{kNaN, 1.0, -0.0, 0.0, 2.0};
  std::vector<double> z{1.0, kNaN, 0.0, -0.0, -3.0};
  std::string maxP = program1d("f32", "f32", "    %r = tile.max(%x0, %z0) : tile<f32, [N]>\n");
  std::string minP = program1d("f32", "f32", "    %r = tile.min(%x0, %z0) : tile<f32, [N]>\n");
  EXPECT_EQ(bits(run1d(maxP, ScalarType::F32, ScalarType::F32, x, z)), bits({kNaN, kNaN, 0.0, 0.0, 2.0}));
  EXPECT_EQ(bits(run1d(minP, ScalarType::F32, ScalarType::F32, x, z)), bits({kNaN, kNaN, -0.0, -0.0, -3.0}));
}

TEST(InterpElementwise, ReluIsMaxWithPositiveZero) {
  std::string p = program1d("f32", "f32", "    %r = tile.relu(%x0) : tile<f32, [N]>\n");
  EXPECT_EQ(bits(run1d(p, ScalarType::F32, ScalarType::F32, {kNaN, -0.0, -kInf, 2.5, -1.0})),
            bits({kNaN, 0.0, 0.0, 2.5, 0.0}));
}

// Each transcendental is computed in double and rounded to f32 (then to the element type).
TEST(InterpElementwise, TranscendentalsAreDoubleRoundedOnce) {
  struct Fn {
    const char* op;
    double (*f)(double);
  };
  const Fn fns[] = {
      {"exp", [](double x) { return std::exp(x); }},
      {"sigmoid", [](double x) { return 1.0 / (1.0 + std::exp(-x)); }},
      {"silu", [](double x) { return x / (1.0 + std::exp(-x)); }},
      {"gelu_erf", [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }},
      {"gelu_tanh",
       [](double x) { return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x))); }},
  };
  std::vector<double> x{-7.25, -1.5, -0.3125, 0.0, 0.5, 1.25, 3.0, 20.0};
  for (const Fn& fn : fns) {
    for (ScalarType t : {ScalarType::F32, ScalarType::BF16}) {
      std::string ty(ir::scalarName(t));
      std::string p = program1d(ty, ty, std::string("    %r = tile.") + fn.op + "(%x0) : tile<" + ty + ", [N]>\n");
      std::vector<double> expected;
      for (double v : x) {
        float f = static_cast<float>(fn.f(v));
        expected.push_back(t == ScalarType::F32 ? f : getElement(makeHostTensor(t, {1}, std::vector<double>{f}), 0));
      }
      EXPECT_EQ(run1d(p, t, t, x), expected) << fn.op << " on " << ty;
    }
  }
}

TEST(InterpElementwise, CastToFp8Saturates) {
  std::vector<double> x{500.0, -1e9, kInf, -kInf, kNaN, 0.3, 464.0, 465.0, 0.0};
  std::string e4 = program1d("f32", "f8e4m3", "    %r = tile.cast(%x0) : tile<f8e4m3, [N]>\n");
  // 0.3 is between the e4m3 values 0.28125 and 0.3125; 464 is the tie between 448 and (would-be) 480.
  EXPECT_EQ(bits(run1d(e4, ScalarType::F32, ScalarType::F8E4M3, x)),
            bits({448.0, -448.0, 448.0, -448.0, kNaN, 0.3125, 448.0, 448.0, 0.0}));
  std::string e5 = program1d("f32", "f8e5m2", "    %r = tile.cast(%x0) : tile<f8e5m2, [N]>\n");
  EXPECT_EQ(bits(run1d(e5, ScalarType::F32, ScalarType::F8E5M2, {kInf, -1e6, 0.3})), bits({57344.0, -57344.0, 0.3125}));
}

TEST(InterpElementwise, CastToBf16OverflowsToInfinity) {
  std::string p = program1d("f32", "bf16", "    %r = tile.cast(%x0) : tile<bf16, [N]>\n");
  EXPECT_EQ(bits(run1d(p, ScalarType::F32, ScalarType::BF16, {3.4e38, -3.4e38, 1.00390625, 1.01171875})),
            bits({kInf, -kInf, 1.0, 1.015625}));  // ties to even: 1 + 2^-8 -> 1, 1 + 3*2^-8 -> 1 + 2^-6
}

TEST(InterpElementwise, CastToIntegerRoundsToEvenAndSaturates) {
  std::string p = program1d("f32", "i32", "    %r = tile.cast(%x0) : tile<i32, [N]>\n");
  EXPECT_EQ(run1d(p, ScalarType::F32, ScalarType::I32, {2.5, 3.5, -2.5, kNaN, 1e10, -1e10}),
            (std::vector<double>{2, 4, -2, 0, 2147483647, -2147483648.0}));
}

// Scalar arguments are rounded to their type; a tile op with a scalar uses it for every element.
TEST(InterpElementwise, ScalarOperandAppliesToEveryElement) {
  std::string text =
      "tile.program() {sym_name = \"axpy\", dims = [\"N\"]} {\n"
      "  %x = tile.input() {name = \"x\"} : tensor<f32, [N]>\n"
      "  %y = tile.output() {name = \"y\"} : tensor<f32, [N]>\n"
      "  %alpha = tile.scalar() {name = \"alpha\"} : f32\n"
      "  tile.for_tiles() {dims = [\"N\"]} {\n"
      "  ^bb0(%n: coord<[N]>):\n"
      "    %0 = tile.load(%x, %n) : tile<f32, [N]>\n"
      "    %1 = tile.mul(%alpha, %0) : tile<f32, [N]>\n"
      "    tile.store(%y, %n, %1)\n"
      "    tile.yield()\n"
      "  }\n"
      "}\n";
  auto mod = parseProgram(text);
  ASSERT_TRUE(mod);
  std::vector<double> xs{1.0, 3.0, -7.0};
  HostTensor x = makeHostTensor(ScalarType::F32, {3}, xs), y = poisonedTensor(ScalarType::F32, {3});
  RunRequest req{{{"N", 3}}, {{"x", &x}, {"y", &y}}, {{"alpha", 0.1}}};
  ir::DiagnosticEngine diag;
  ASSERT_TRUE(run(programOf(*mod), req, diag)) << diag.str();
  EXPECT_EQ(toDoubles(y), (std::vector<double>{0.1f * 1.0f, 0.1f * 3.0f, 0.1f * -7.0f}));
}

// [M] broadcast to [M, N] repeats the column; elements outside a tensor read {other}: here a row
// index past the end of `t` makes the whole loaded tile {other}.
TEST(InterpElementwise, ColumnBroadcastAndOtherOutsideTheTensor) {
  std::string text =
      "tile.program() {sym_name = \"bc\", dims = [\"M\", \"N\"]} {\n"
      "  %v = tile.input() {name = \"v\"} : tensor<f32, [M]>\n"
      "  %t = tile.input() {name = \"t\"} : tensor<f32, [M, N]>\n"
      "  %y = tile.output() {name = \"y\"} : tensor<f32, [M, N]>\n"
      "  %w = tile.output() {name = \"w\"} : tensor<f32, [M, N]>\n"
      "  tile.for_tiles() {dims = [\"M\", \"N\"]} {\n"
      "  ^bb0(%m: coord<[M]>, %n: coord<[N]>):\n"
      "    %0 = tile.load(%v, %m) : tile<f32, [M]>\n"
      "    %1 = tile.broadcast(%0) : tile<f32, [M, N]>\n"
      "    tile.store(%y, %m, %n, %1)\n"
      "    %far = arith.constant() {value = 1000} : index\n"
      "    %2 = tile.load(%t, %far, %n) {other = 7.5} : tile<f32, [N]>\n"
      "    %3 = tile.broadcast(%2) : tile<f32, [M, N]>\n"
      "    tile.store(%w, %m, %n, %3)\n"
      "    tile.yield()\n"
      "  }\n"
      "}\n";
  auto mod = parseProgram(text);
  ASSERT_TRUE(mod);
  const int64_t M = 3, N = 2;
  HostTensor v = makeHostTensor(ScalarType::F32, {M}, std::vector<double>{1, 2, 3});
  HostTensor t = makeHostTensor(ScalarType::F32, {M, N});
  HostTensor y = poisonedTensor(ScalarType::F32, {M, N}), w = poisonedTensor(ScalarType::F32, {M, N});
  RunRequest req{{{"M", M}, {"N", N}}, {{"v", &v}, {"t", &t}, {"y", &y}, {"w", &w}}, {}};
  ir::DiagnosticEngine diag;
  ASSERT_TRUE(run(programOf(*mod), req, diag)) << diag.str();
  EXPECT_EQ(toDoubles(y), (std::vector<double>{1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(toDoubles(w), (std::vector<double>(M * N, 7.5)));
}

}  // namespace
}  // namespace kiln::interp::testing
