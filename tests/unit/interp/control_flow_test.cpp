// scf.for / scf.if, arith.*, tile.dim and tile.load_scalar inside a tile program.
#include <gtest/gtest.h>

#include "interp_test_util.h"

namespace kiln::interp::testing {
namespace {

using ir::ScalarType;

// y[i] = 8 x[i] (three doublings in an scf.for) + (N > 4 ? x[first row of i's block] : 0).
const char* kControlFlow = R"(tile.program() {sym_name = "cf", dims = ["N"]} {
  %x = tile.input() {name = "x"} : tensor<f32, [N]>
  %y = tile.output() {name = "y"} : tensor<f32, [N]>
  tile.for_tiles() {dims = ["N"]} {
  ^bb0(%n: coord<[N]>):
    %t = tile.load(%x, %n) : tile<f32, [N]>
    %lb = arith.constant() {value = 0} : i32
    %ub = arith.constant() {value = 3} : i32
    %st = arith.constant() {value = 1} : i32
    %r = scf.for(%lb, %ub, %st, %t) : tile<f32, [N]> {
    ^bb0(%i: i32, %acc: tile<f32, [N]>):
      %d = tile.add(%acc, %acc) : tile<f32, [N]>
      scf.yield(%d)
    }
    %first = tile.load_scalar(%x, %n) : f32
    %dimN = tile.dim() {name = "N"} : index
    %four = arith.constant() {value = 4} : index
    %big = arith.cmpi(%dimN, %four) {pred = "sgt"} : i1
    %s = scf.if(%big) : f32 {
      scf.yield(%first)
    } {
      %zero = arith.constant() {value = 0.0} : f32
      scf.yield(%zero)
    }
    %out = tile.add(%r, %s) : tile<f32, [N]>
    tile.store(%y, %n, %out)
    tile.yield()
  }
}
)";

std::vector<double> runCf(const std::vector<double>& xs, const RunOptions& opts = {}) {
  auto mod = parseProgram(kControlFlow);
  if (!mod) return {};
  int64_t n = static_cast<int64_t>(xs.size());
  HostTensor x = makeHostTensor(ScalarType::F32, {n}, xs), y = poisonedTensor(ScalarType::F32, {n});
  RunRequest req{{{"N", n}}, {{"x", &x}, {"y", &y}}, {}};
  ir::DiagnosticEngine diag;
  EXPECT_TRUE(run(programOf(*mod), req, diag, opts)) << diag.str();
  return toDoubles(y);
}

TEST(InterpControlFlow, LoopsBranchesAndScalars) {
  EXPECT_EQ(runCf({1, 2, 3}), (std::vector<double>{8, 16, 24}));                 // N <= 4: no scalar
  EXPECT_EQ(runCf({1, 2, 3, 4, 5}), (std::vector<double>{9, 17, 25, 33, 41}));   // + x[0]
}

// tile.load_scalar with a coord reads the first position of the block, so unlike everything else
// its value depends on the block size (see the report on the dialect contract).
TEST(InterpControlFlow, LoadScalarReadsTheFirstPositionOfEachBlock) {
  EXPECT_EQ(runCf({1, 2, 3, 4, 5}, RunOptions{{{"N", 2}}}), (std::vector<double>{9, 17, 27, 35, 45}));
}

// arith.divui / arith.remui read the operands' bits as unsigned: -8 / 2 is 2^31 - 4 and -7 % 4 is
// 1 (2^32 - 7 = 4 (2^30 - 2) + 1), where divsi / remsi give -4 and -3.
TEST(InterpControlFlow, UnsignedDivisionReadsTheBitsAsUnsigned) {
  auto mod = parseProgram(R"(tile.program() {sym_name = "u", dims = ["N"]} {
  %x = tile.input() {name = "x"} : tensor<f32, [N]>
  %y = tile.output() {name = "y"} : tensor<f32, [N]>
  tile.for_tiles() {dims = ["N"]} {
  ^bb0(%n: coord<[N]>):
    %t = tile.load(%x, %n) : tile<f32, [N]>
    %m8 = arith.constant() {value = -8} : i32
    %m7 = arith.constant() {value = -7} : i32
    %c2 = arith.constant() {value = 2} : i32
    %c4 = arith.constant() {value = 4} : i32
    %q = arith.divui(%m8, %c2) : i32
    %r = arith.remui(%m7, %c4) : i32
    %qf = arith.cast(%q) : f32
    %rf = arith.cast(%r) : f32
    %s = tile.add(%t, %qf) : tile<f32, [N]>
    %u = tile.add(%s, %rf) : tile<f32, [N]>
    tile.store(%y, %n, %u)
    tile.yield()
  }
}
)");
  ASSERT_TRUE(mod);
  HostTensor x = makeHostTensor(ScalarType::F32, {1}, std::vector<double>{0.0}), y = poisonedTensor(ScalarType::F32, {1});
  RunRequest req{{{"N", 1}}, {{"x", &x}, {"y", &y}}, {}};
  ir::DiagnosticEngine diag;
  ASSERT_TRUE(run(programOf(*mod), req, diag)) << diag.str();
  EXPECT_EQ(toDoubles(y), (std::vector<double>{double(float(2147483644.0 + 1.0))}));
}

}  // namespace
}  // namespace kiln::interp::testing
