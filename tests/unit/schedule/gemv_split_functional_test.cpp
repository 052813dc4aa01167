// gemv's split_k (src/schedule/gemv/gemv_split.cpp) run by the kern IR simulator against the tile-IR
// interpreter: every layout at M = 1 to 8, K not a multiple of the split or of the loop step (a
// slice past K that sums nothing included), odd N and K through element loads, strided and batched
// operands, a nonzero initial sum and fused epilogues (applied once, to the slices' total). Each run
// also goes with the blocks in reverse order, so a different slice finishes each tile: the outputs
// must be the same bits (the slices are summed in slice order, whoever sums them), and the kernel
// must leave the workspace's flags zero for the next launch (sim_run.h).
#include <gtest/gtest.h>

#include "examples/examples.h"
#include "kiln/program_builder.h"
#include "tests/unit/schedule/gemv_cases.h"
#include "tests/unit/testing/sim_run.h"

namespace kiln {
namespace {

using layouts::dimsFor;
using layouts::gemm;
using gemv_cases::name;
using layouts::Layout;

void expectSplitRuns(const ir::Module& program, const std::string& config, const std::map<std::string, int64_t>& dims,
                     const Target& t = Target::sm80()) {
  testing::SimRun fwd = testing::simulateAgainstInterpreter(program, Config::parse(config), t, dims, 11);
  EXPECT_EQ(fwd.error, "") << fwd.config;
  testing::SimRun rev =
      testing::simulateAgainstInterpreter(program, Config::parse(config), t, dims, 11, testing::CopyTiming::Early, true);
  EXPECT_EQ(rev.error, "") << rev.config << " (blocks in reverse)";
  EXPECT_EQ(fwd.outputs, rev.outputs) << "the sum depends on which slice finished the tile";
}

TEST(GemvSplitK, EveryLayoutAndSmallM) {
  for (bool aCol : {false, true})
    for (bool bK : {false, true})
      for (int m : {1, 2, 5, 8}) {
        Layout l;
        l.aCol = aCol;
        l.bKMajor = bK;
        SCOPED_TRACE(name(l) + " M=" + std::to_string(m));
        int bm = m == 1 ? 1 : m <= 2 ? 2 : 8;
        // K = 600: the N path's step is 64 (32 rows of threads x 2), ten steps in slices of 4, 4, 2;
        // the K path's is 256 (16 lanes x 8 x 2): three steps, and split_k=4 leaves the last slice
        // past K (it sums nothing and still counts).
        std::string c = "strategy=gemv bm=" + std::to_string(bm) + " bn=32 block_threads=128 vectors=2 split_k=" +
                        (bK ? "4 row_threads=16" : "3") + gemv_cases::alignAFor(aCol, m);
        expectSplitRuns(*gemm(l), c, dimsFor(m, 96, 600));
      }
}

TEST(GemvSplitK, OddShapesStridedAndBatched) {
  for (bool aCol : {false, true})
    for (bool bK : {false, true}) {
      Layout l = gemv_cases::stridedSharedB(aCol, bK);
      SCOPED_TRACE(name(l));
      std::map<std::string, int64_t> d = gemv_cases::stridedSharedBDims();
      // Several tiles along N and M and two batches: the units of x, each with its own flag.
      expectSplitRuns(*gemm(l), "strategy=gemv bm=2 bn=16 block_threads=64 vectors=1 split_k=3" + gemv_cases::alignAFor(aCol, 3), d);
      Layout dense{aCol, bK};
      dense.batched = true;
      expectSplitRuns(*gemm(dense), "strategy=gemv bm=2 bn=16 block_threads=64 vectors=1 split_k=2" + gemv_cases::alignAFor(aCol, 3),
                      dimsFor(3, 40, 72, 0, 3));
      // M = 4 in blocks of 2 rows: a column-major A's pairs of rows in 4-byte loads, two blocks along M.
      expectSplitRuns(*gemm(dense), "strategy=gemv bm=2 bn=16 block_threads=64 vectors=1 split_k=2", dimsFor(4, 40, 72, 0, 3));
      Layout o{aCol, bK};
      expectSplitRuns(*gemm(o), "strategy=gemv bm=4 bn=16 block_threads=64 vectors=3 align_a=2 align_b=2 align_c=2 split_k=5",
                      dimsFor(3, 37, 45));
    }
}

// The odd-N tail of a strided row-major B (gemv_functional_test.cpp) in split slices: every
// slice's block over N's end loads by elements, the others by vectors.
TEST(GemvSplitK, OddNTailOverAnAlignedStridedB) {
  for (bool aCol : {false, true})
    for (bool bK : {false, true}) {
      Layout l{aCol, bK, false, true, false};
      SCOPED_TRACE(name(l));
      expectSplitRuns(*gemm(l), "strategy=gemv bm=1 bn=16 block_threads=64 vectors=2 align_b=16 align_c=2 split_k=3",
                      dimsFor(1, 45, 1000), Target::sm90a());
    }
}

// The program's initial sum (0.5 here) is added once, to the slices' total.
std::unique_ptr<ir::Module> gemvFromHalf() {
  ProgramBuilder p("gemv_from_half");
  auto [M, N, K] = p.dims("M", "N", "K");
  auto A = p.input("A", bf16, {M, K});
  auto B = p.input("B", bf16, {K, N});
  auto C = p.output("C", f32, {M, N});
  p.tile({M, N}, [&](Coord m, Coord n) {
    Tile acc = p.full(f32, {m, n}, 0.5);
    p.reduce(K, [&](Coord k) { acc = dot(A(m, k), B(k, n), acc); });
    C(m, n) = acc;
  });
  return p.finish();
}

TEST(GemvSplitK, InitialSumAndFusedEpiloguesApplyOnce) {
  std::map<std::string, int64_t> d = {{"M", 2}, {"N", 64}, {"K", 520}};
  expectSplitRuns(*gemvFromHalf(), "strategy=gemv bm=2 bn=32 block_threads=128 vectors=2 split_k=4", d);
  // A nonlinear epilogue on each slice's sum would be wrong: silu(x + bias) + R, gelu(x + bias).
  expectSplitRuns(*examples::gemmBiasSiluResidual(), "strategy=gemv bm=1 bn=32 block_threads=128 vectors=2 split_k=3",
                  {{"M", 1}, {"N", 64}, {"K", 520}}, Target::sm90a());
  expectSplitRuns(*examples::gemmBiasGelu(), "strategy=gemv bm=8 bn=32 block_threads=256 vectors=4 split_k=2",
                  {{"M", 7}, {"N", 96}, {"K", 1000}}, Target::sm90a());
}

TEST(GemvSplitK, Fp16WithF32Out) {
  Layout l;
  l.bKMajor = true;
  l.in = f16;
  l.out = f32;
  expectSplitRuns(*gemm(l), "strategy=gemv bm=1 bn=64 block_threads=256 vectors=4 split_k=8", dimsFor(1, 200, 1032),
                  Target::sm90a());
}

}  // namespace
}  // namespace kiln
