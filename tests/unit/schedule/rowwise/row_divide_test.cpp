// Quotients by a divisor uniform over the row (src/schedule/rowwise/row_divide.h) are exactly
// div.rn.f32's:
//  * the refined quotient itself (a multiply and two FMAs from RN(1/d)), modelled with fmaf, against
//    x / d for every significand of x and a set of divisor significands that includes the
//    worst-placed ones (near 2, where RN(1/d) is least accurate relative to its ulp): in the range
//    the guards admit, every intermediate is normal, so the significands decide the result;
//  * the emitted kernel, in the kern simulator, on rows and scalars full of edge cases (zeros of
//    both signs, subnormals, the guards' bounds and their neighbours, infinities, NaN, the largest
//    finite values), bit for bit against the CPU's x / d.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "kiln/program_builder.h"
#include "tests/unit/testing/sim_buffers.h"

namespace kiln {
namespace {

float fromBits(uint32_t b) { return std::bit_cast<float>(b); }

// The sequence row_divide.cpp emits, on the CPU.
float refinedQuotient(float x, float d) {
  float r = 1.0f / d;
  float q0 = x * r;
  float e = std::fma(-d, q0, x);
  return std::fma(e, r, q0);
}

TEST(RowDivide, RefinedQuotientIsCorrectlyRoundedForEverySignificandOfX) {
  std::vector<uint32_t> divisors = {0, 1, 2, 0x400000, 0x555555, 0x2aaaab};  // 1, 1 + ulp, ..., 4/3, 5/3
  for (uint32_t k = 0; k < 8; ++k) divisors.push_back(0x7fffff - k);       // just below 2
  std::mt19937 rng(38);
  for (int k = 0; k < 4; ++k) divisors.push_back(rng() & 0x7fffff);
  int64_t wrong = 0;
  std::string first;
  for (uint32_t dm : divisors) {
    float d = fromBits(0x3f800000u | dm);
    for (uint32_t xm = 0; xm < (1u << 23); ++xm) {
      float x = fromBits(0x3f800000u | xm);
      float q = refinedQuotient(x, d), want = x / d;
      if (std::bit_cast<uint32_t>(q) != std::bit_cast<uint32_t>(want) && wrong++ == 0)
        first = std::to_string(x) + " / " + std::to_string(d);
    }
  }
  EXPECT_EQ(wrong, 0) << "first: " << first;
}

// Guard bounds and values around them, and the IEEE specials.
std::vector<float> edgeValues() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {0.0f,
                          -0.0f,
                          1.0f,
                          -1.0f,
                          3.0f,
                          fromBits(0x3fffffff),  // just below 2
                          std::ldexp(1.0f, -62),
                          std::nextafter(std::ldexp(1.0f, -62), 0.0f),
                          std::ldexp(1.0f, 62),
                          std::nextafter(std::ldexp(1.0f, 62), inf),
                          -std::ldexp(1.5f, 61),
                          std::numeric_limits<float>::min(),
                          std::numeric_limits<float>::denorm_min(),
                          -1e-40f,
                          std::numeric_limits<float>::max(),
                          -std::numeric_limits<float>::max(),
                          inf,
                          -inf,
                          std::numeric_limits<float>::quiet_NaN(),
                          1e-30f,
                          -7e25f,
                          448.0f};
  return v;
}

bool sameResult(float got, float want) {
  return std::isnan(want) ? std::isnan(got) : std::bit_cast<uint32_t>(got) == std::bit_cast<uint32_t>(want);
}

std::vector<uint8_t> bytesOf(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

std::vector<float> floatsOf(const std::vector<uint8_t>& b) {
  std::vector<float> v(b.size() / 4);
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

struct Divided {
  std::vector<float> q, p;  // X / S(m), X / t
};

// Q = X / S(m) and P = X / t (f32 throughout: four elements a vector) through rowwise, in the
// kern simulator.
Divided simulate(const std::vector<float>& x, const std::vector<float>& s, float t, int64_t rows, int64_t cols) {
  ProgramBuilder p("divide");
  auto [M, N] = p.dims("M", "N");
  auto X = p.input("X", f32, {M, N});
  auto S = p.input("S", f32, {M});
  auto Q = p.output("Q", f32, {M, N});
  auto P = p.output("P", f32, {M, N});
  auto tv = p.scalar("t", f32);
  p.tile({M}, [&](Coord m) {
    Coord n = p.span(N);
    Tile xv = X(m, n);
    Q(m, n) = xv / S(m);
    P(m, n) = xv / tv;
  });
  auto module = p.finish();
  std::vector<uint8_t> poison(x.size() * 4, 0xFF);
  auto run = testing::simulateOnBuffers(*module, Config::parse("strategy=rowwise row_threads=4 block_threads=32 vectors=2"),
                                        Target::sm90a(), {{"M", rows}, {"N", cols}},
                                        {{"X", bytesOf(x)}, {"S", bytesOf(s)}, {"Q", poison}, {"P", poison}},
                                        {{"t", std::bit_cast<uint32_t>(t)}});
  EXPECT_EQ(run.error, "");
  EXPECT_NE(run.kernIr.find("arith.fmaf"), std::string::npos) << "no refined quotient in the kernel";
  if (!run.error.empty()) return {};
  return {floatsOf(run.tensors.at("Q")), floatsOf(run.tensors.at("P"))};
}

TEST(RowDivide, KernelMatchesDivRnOnEdgeCases) {
  // Every edge divisor for a row, and rows of 64 elements: vectors of ordinary values (the refined
  // path), vectors with one edge value each (the exact path), and a row of nothing but edges.
  std::vector<float> edges = edgeValues(), divisors = edgeValues();
  const int64_t cols = 64;
  const int64_t rows = int64_t(divisors.size());
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> sig(1.0f, 2.0f);
  std::uniform_int_distribution<int> ex(-60, 60);
  std::vector<float> x(size_t(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float v = std::ldexp(sig(rng), ex(rng)) * (rng() % 2 ? 1.0f : -1.0f);
      if (c >= 32 && c % 4 == 1) v = edges[size_t(c / 4 + r) % edges.size()];
      if (r == 0 && c < int64_t(edges.size())) v = edges[size_t(c)];
      x[size_t(r * cols + c)] = v;
    }
  for (float t : {3.0f, 0.0f, std::numeric_limits<float>::quiet_NaN(), std::ldexp(1.0f, 63), -1.5e-40f}) {
    SCOPED_TRACE("t = " + std::to_string(t));
    Divided got = simulate(x, divisors, t, rows, cols);
    ASSERT_EQ(got.q.size(), x.size());
    int wrongQ = 0, wrongP = 0;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        size_t i = size_t(r * cols + c);
        if (!sameResult(got.q[i], x[i] / divisors[size_t(r)]) && wrongQ++ < 5)
          ADD_FAILURE() << "Q: " << x[i] << " / " << divisors[size_t(r)] << " gave " << got.q[i];
        if (!sameResult(got.p[i], x[i] / t) && wrongP++ < 5) ADD_FAILURE() << "P: " << x[i] << " / t gave " << got.p[i];
      }
  }
}

}  // namespace
}  // namespace kiln
