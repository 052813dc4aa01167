// The integer range analysis (int_range.h): the intervals it gives for the leaves it knows, the
// whole range where it knows nothing, and, over ~2,000 random expressions of lane and warp indices
// and constants, that every value each thread of the role computes lies in the interval (the
// soundness strength-reduce and the stage addressing rely on).
#include "dialects/kern/int_range.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kiln/ir/parser.h"

namespace kiln::kern {
namespace {

// A kernel of 384 threads whose role {warpgroups = [1, 2]}, inside a tile loop (block arguments
// %iter, %m0, %n0, %b), holds `body`.
std::string kernelText(const std::string& body) {
  return "kern.kernel() {sym_name = \"k\", params = [\"M\"], threads = 384, smem_bytes = 0, grid = [1]} {\n"
         "^bb0(%M: i32):\n"
         "  %one = arith.constant() {value = 1} : i32\n"
         "  kern.tile_loop(%M, %M, %one) {tile = [64, 64], raster = \"row\"} {\n"
         "  ^bb0(%iter: i32, %m0: i32, %n0: i32, %b: i32):\n"
         "    kern.role() {name = \"consumer\", warpgroups = [1, 2]} {\n" +
         body +
         "    }\n"
         "  }\n"
         "}\n";
}

// The value named %name (an op result, or a block argument) anywhere in the module.
const ir::Value* named(const ir::Module& m, const std::string& name) {
  const ir::Value* found = nullptr;
  std::function<void(const ir::Block&)> walk = [&](const ir::Block& b) {
    for (const auto& a : b.arguments())
      if (a->nameHint() == name) found = a.get();
    for (const auto& op : b.operations()) {
      for (const auto& r : op->results())
        if (r->nameHint() == name) found = r.get();
      for (unsigned i = 0; i < op->numRegions(); ++i)
        for (const auto& inner : op->region(i).blocks()) walk(*inner);
    }
  };
  walk(m.body());
  return found;
}

std::unique_ptr<ir::Module> parse(const std::string& text) {
  ir::DiagnosticEngine diag;
  auto m = ir::parseModule(text, diag);
  EXPECT_TRUE(m) << diag.str() << "\n" << text;
  return m;
}

TEST(IntRange, KnownLeavesAndWhatFollows) {
  auto m = parse(kernelText(
      "      %lane = kern.lane_id() : i32\n"
      "      %warp = kern.warp_id() : i32\n"
      "      %tid = kern.thread_id() : i32\n"
      "      %c4 = arith.constant() {value = 4} : i32\n"
      "      %c2 = arith.constant() {value = 2} : i32\n"
      "      %cm4 = arith.constant() {value = -4} : i32\n"
      "      %cwarp = arith.addi(%warp, %cm4) : i32\n"
      "      %wg = arith.divsi(%cwarp, %c4) : i32\n"
      "      %q = arith.remsi(%lane, %c4) : i32\n"
      "      %col = arith.muli(%q, %c2) : i32\n"
      "      %neg = arith.subi(%q, %c2) : i32\n"
      "      %negq = arith.divsi(%neg, %c2) : i32\n"
      "      %negr = arith.remsi(%neg, %c4) : i32\n"
      "      %masked = arith.andi(%M, %c4) : i32\n"
      "      %sq = arith.muli(%M, %M) : i32\n"
      "      %row = arith.addi(%m0, %lane) : i32\n"
      "      %c0 = arith.constant() {value = 0} : i32\n"
      "      %c8 = arith.constant() {value = 8} : i32\n"
      "      scf.for(%c0, %c8, %one) {\n"
      "      ^bb0(%i: i32):\n"
      "        scf.yield()\n"
      "      }\n"));
  ASSERT_TRUE(m);
  IntRangeAnalysis r;
  auto of = [&](const char* n) {
    const ir::Value* v = named(*m, n);
    EXPECT_TRUE(v) << n;
    return v ? r.of(v) : IntRange::full();
  };
  EXPECT_EQ(of("lane"), (IntRange{0, 31}));
  EXPECT_EQ(of("warp"), (IntRange{4, 11})) << "only warpgroups 1 and 2 run the role";
  EXPECT_EQ(of("tid"), (IntRange{0, 383}));
  EXPECT_EQ(of("cwarp"), (IntRange{0, 7}));
  EXPECT_EQ(of("wg"), (IntRange{0, 1}));
  EXPECT_EQ(of("col"), (IntRange{0, 6}));
  EXPECT_EQ(of("neg"), (IntRange{-2, 1}));
  EXPECT_FALSE(of("negq").nonNegative());
  EXPECT_EQ(of("negr"), (IntRange{-3, 3}));
  EXPECT_EQ(of("masked"), (IntRange{0, 4})) << "a non-negative mask bounds any operand";
  EXPECT_TRUE(of("M").isFull()) << "a kernel parameter is whatever the launch passes";
  EXPECT_TRUE(of("sq").isFull()) << "a product of unknowns";
  EXPECT_TRUE(of("row").isFull()) << "a tile origin (up to 2^31 - 1 as far as the analysis knows) plus a lane may wrap";
  EXPECT_EQ(of("i"), (IntRange{0, 7}));
  EXPECT_EQ(of("iter"), (IntRange{0, INT32_MAX}));
}

TEST(IntRange, UnsignedDivisionByAPositiveDivisor) {
  auto m = parse(kernelText(
      "      %lane = kern.lane_id() : i32\n"
      "      %c4 = arith.constant() {value = 4} : i32\n"
      "      %cm4 = arith.constant() {value = -4} : i32\n"
      "      %ru = arith.remui(%M, %c4) : i32\n"
      "      %qu = arith.divui(%lane, %c4) : i32\n"
      "      %qm = arith.divui(%M, %c4) : i32\n"
      "      %qn = arith.remui(%lane, %cm4) : i32\n"
      "      %l1 = arith.addi(%lane, %c4) : i32\n"
      "      %rl = arith.remui(%M, %l1) : i32\n"));
  ASSERT_TRUE(m);
  IntRangeAnalysis r;
  auto of = [&](const char* n) { return r.of(named(*m, n)); };
  EXPECT_EQ(of("ru"), (IntRange{0, 3})) << "below the divisor, whatever M's bits";
  EXPECT_EQ(of("qu"), (IntRange{0, 7}));
  EXPECT_TRUE(of("qm").isFull()) << "M's bits as unsigned may pass INT32_MAX";
  EXPECT_TRUE(of("qn").isFull()) << "-4 as unsigned is 2^32 - 4: the remainder may be negative as i32";
  EXPECT_EQ(of("rl"), (IntRange{0, 34})) << "below the largest divisor, lane + 4 <= 35";
}

TEST(IntRange, SumsThatMayLeaveI32AreTheWholeRange) {
  auto m = parse(kernelText(
      "      %big = arith.constant() {value = 2147483000} : i32\n"
      "      %lane = kern.lane_id() : i32\n"
      "      %c1000 = arith.constant() {value = 1000} : i32\n"
      "      %x = arith.muli(%lane, %c1000) : i32\n"
      "      %s = arith.addi(%big, %x) : i32\n"
      "      %c31 = arith.constant() {value = 31} : i32\n"
      "      %sh = arith.shli(%lane, %c31) : i32\n"));
  ASSERT_TRUE(m);
  IntRangeAnalysis r;
  EXPECT_TRUE(r.of(named(*m, "s")).isFull()) << "2147483000 + 31000 wraps past INT32_MAX";
  EXPECT_TRUE(r.of(named(*m, "sh")).isFull()) << "lane << 31 reaches the sign bit";
}

// Random expressions over lane, warp and constants, evaluated with PTX's i32 semantics for every
// thread of the role; each value must lie in its interval.
TEST(IntRange, EveryValueOfRandomExpressionsLiesInItsInterval) {
  std::mt19937 rng(1234);
  auto pick = [&](int n) { return int(rng() % unsigned(n)); };
  const char* binOps[] = {"arith.addi", "arith.subi", "arith.muli", "arith.minsi", "arith.maxsi", "arith.divui", "arith.remui"};
  const char* constOps[] = {"arith.divsi", "arith.remsi", "arith.andi", "arith.shrui", "arith.shli", "arith.divui", "arith.remui"};
  // Unsigned division of the operands' 32 bits (a zero divisor gives 0 here; the analysis only
  // bounds a quotient or remainder whose divisor it proves positive).
  auto unsignedDiv = [](int64_t x, int64_t y, bool rem) {
    uint32_t ux = uint32_t(x), uy = uint32_t(y);
    return uy == 0 ? 0 : int64_t(int32_t(rem ? ux % uy : ux / uy));
  };
  int checked = 0;
  for (int prog = 0; prog < 2000; ++prog) {
    // Each value: its text name and its per-thread evaluator (thread t of the kernel).
    std::vector<std::string> names = {"lane", "warp"};
    std::vector<std::function<int32_t(int)>> eval = {[](int t) { return int32_t(t % 32); },
                                                     [](int t) { return int32_t(t / 32); }};
    std::string body = "      %lane = kern.lane_id() : i32\n      %warp = kern.warp_id() : i32\n";
    int n = 2 + pick(6);
    for (int i = 0; i < n; ++i) {
      std::string v = "v" + std::to_string(i), a = names[size_t(pick(int(names.size())))];
      auto fa = eval[size_t(std::find(names.begin(), names.end(), a) - names.begin())];
      if (pick(2)) {
        std::string b = names[size_t(pick(int(names.size())))];
        auto fb = eval[size_t(std::find(names.begin(), names.end(), b) - names.begin())];
        std::string op = binOps[pick(7)];
        body += "      %" + v + " = " + op + "(%" + a + ", %" + b + ") : i32\n";
        eval.push_back([op, fa, fb, unsignedDiv](int t) {
          int64_t x = fa(t), y = fb(t);
          int64_t z = op == "arith.addi" ? x + y : op == "arith.subi" ? x - y : op == "arith.muli" ? x * y
                      : op == "arith.minsi" ? std::min(x, y) : op == "arith.maxsi" ? std::max(x, y)
                      : unsignedDiv(x, y, op == "arith.remui");
          return int32_t(uint32_t(uint64_t(z)));
        });
      } else {
        std::string op = constOps[pick(7)];
        bool shift = op == "arith.shrui" || op == "arith.shli";
        int64_t c = shift ? pick(32) : pick(81) - 40;
        if (op != "arith.andi" && !shift && c == 0) c = 3;
        std::string cn = "c" + std::to_string(i);
        body += "      %" + cn + " = arith.constant() {value = " + std::to_string(c) + "} : i32\n";
        body += "      %" + v + " = " + op + "(%" + a + ", %" + cn + ") : i32\n";
        eval.push_back([op, fa, c, unsignedDiv](int t) {
          int32_t x = fa(t);
          if (op == "arith.divui" || op == "arith.remui") return int32_t(unsignedDiv(x, c, op == "arith.remui"));
          if (op == "arith.divsi") return int32_t(x / int32_t(c));
          if (op == "arith.remsi") return int32_t(x % int32_t(c));
          if (op == "arith.andi") return int32_t(x & int32_t(c));
          if (op == "arith.shrui") return int32_t(uint32_t(x) >> c);
          return int32_t(uint32_t(x) << c);
        });
      }
      names.push_back(v);
    }
    auto m = parse(kernelText(body));
    ASSERT_TRUE(m);
    IntRangeAnalysis r;
    for (size_t i = 0; i < names.size(); ++i) {
      IntRange range = r.of(named(*m, names[i]));
      for (int t = 128; t < 384; ++t) {  // the role's threads
        int32_t x = eval[i](t);
        ASSERT_TRUE(x >= range.lo && x <= range.hi)
            << "%" << names[i] << " = " << x << " at thread " << t << " outside [" << range.lo << ", " << range.hi
            << "]\n"
            << body;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 1000000);
}

}  // namespace
}  // namespace kiln::kern
