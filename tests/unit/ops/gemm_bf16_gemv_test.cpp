// gemm_bf16's gemv variants (src/ops/gemm_bf16_gemv.cpp): which problems they run, the family's
// pick for M <= 8 in every layout, the block sizes configFor derives from N and the SM count, and
// those adapted configs run by the kern simulator against the interpreter.
#include <gtest/gtest.h>

#include "ops/default_schedule.h"
#include "ops/gemm_bf16.h"
#include "tests/unit/schedule/gemm_layouts_program.h"
#include "tests/unit/testing/sim_run.h"

namespace kiln::ops {
namespace {

GemmProblem problem(int64_t m, int64_t n, int64_t k, bool kMajor = false, bool aRowMajor = true) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.bKMajor = kMajor;
  p.aRowMajor = aRowMajor;
  p.alignA = rowAlignment(aRowMajor ? k : m, 2);
  p.alignB = rowAlignment(kMajor ? k : n, 2);
  p.alignC = rowAlignment(n, 2);
  return p;
}

TEST(GemmBf16Gemv, PickedUpToEightRowsInEveryLayout) {
  for (const Target& t : {Target::sm80(), Target::sm90a()})
    for (bool aRow : {true, false})
      for (bool kMajor : {false, true})
        for (int64_t m : {1, 2, 3, 8}) {
          SCOPED_TRACE(t.name + " M=" + std::to_string(m) + (aRow ? " N" : " T") + (kMajor ? "T" : "N"));
          ir::DiagnosticEngine diag;
          auto pick = selectGemmBf16(problem(m, 4096, 4096, kMajor, aRow), t, diag);
          ASSERT_TRUE(pick) << diag.str();
          int bm = m == 3 ? 4 : int(m);
          EXPECT_EQ(pick->variant->name, "bf16_gemv_m" + std::to_string(bm));
        }
  // Above 8 rows the CUDA cores' FMAs would bound it: the tensor-core variants are preferred.
  ir::DiagnosticEngine diag;
  auto pick = selectGemmBf16(problem(16, 8192, 8192), Target::sm90a(), diag);
  ASSERT_TRUE(pick);
  EXPECT_NE(pick->variant->config.strategy, "gemv");
  std::string why;
  EXPECT_TRUE(findGemmBf16Variant("bf16_gemv_m16")->eligible(problem(16, 8192, 8192), Target::sm90a(), &why)) << why;
  EXPECT_FALSE(findGemmBf16Variant("bf16_gemv_m16")->eligible(problem(17, 8192, 8192), Target::sm90a(), &why));
  EXPECT_EQ(why, "gemv runs M up to 16 (the sums of bm rows sit in registers); M=17");
  GemmProblem grouped = problem(4, 4096, 4096);
  grouped.grouped = true;
  EXPECT_FALSE(findGemmBf16Variant("bf16_gemv_m4")->eligible(grouped, Target::sm90a(), &why));
  EXPECT_EQ(why, "gemv does not lower grouped GEMMs (tile.group_index)");
}

TEST(GemmBf16Gemv, BlocksSizedToFillTheSms) {
  const GemmVariant& v = *findGemmBf16Variant("bf16_gemv_m1");
  // Row-major B: the widest block (64 columns, 128-byte runs per row) whose grid fills a wave.
  EXPECT_EQ(v.configFor(problem(1, 14336, 4096), 132).bn, 64);  // 224 blocks
  EXPECT_EQ(v.configFor(problem(1, 4096, 4096), 132).bn, 32);   // 128 blocks
  EXPECT_EQ(v.configFor(problem(1, 1024, 4096), 132).bn, 8);
  // K-major B: N rows per warp (bn / 8), fewer loads per row the more rows.
  Config k = v.configFor(problem(1, 4096, 4096, true), 132);
  EXPECT_EQ(k.bn, 32);
  EXPECT_EQ(k.vectors, 2);
  EXPECT_EQ(v.configFor(problem(1, 2048, 4096, true), 132).bn, 16);
  // Odd N: 2-byte loads, 8 columns a block at least.
  Config odd = v.configFor(problem(1, 50257, 4096), 132);
  EXPECT_EQ(odd.alignB, 2);
  EXPECT_EQ(odd.bn, 32);
  // A strided B whose leading dimension is 16-byte aligned but whose rows (N = 1001) are not: loads
  // of one element, none across a row's end (the launch contract asks N % V == 0).
  GemmProblem strided = problem(1, 1001, 4096);
  strided.strided = true;
  strided.alignB = 16;
  EXPECT_EQ(v.configFor(strided, 132).alignB, 2);
}

TEST(GemmBf16Gemv, KSplitWhereTheTilesUnderfillTheSms) {
  const GemmVariant& v = *findGemmBf16Variant("bf16_gemv_m1");
  // 128 tiles of 32 columns: split to about 3 blocks per SM (396), each slice the same whole
  // number of K steps (512 rows: 64 rows of threads x 8 loads): 8 steps in slices of 3, 3, 2.
  EXPECT_EQ(v.configFor(problem(1, 4096, 4096), 132).splitK, 3);
  EXPECT_EQ(v.configFor(problem(1, 4096, 4096, true), 132).splitK, 3);  // K path: 32 lanes x 8 x 2
  EXPECT_EQ(v.configFor(problem(1, 8192, 8192), 132).splitK, 3);        // 32 steps of 256: 11, 11, 10
  EXPECT_EQ(v.configFor(problem(1, 14336, 4096), 132).splitK, 2);       // 224 tiles
  EXPECT_EQ(v.configFor(problem(1, 4096, 14336), 132).splitK, 3);
  EXPECT_EQ(findGemmBf16Variant("bf16_gemv_m8")->configFor(problem(8, 4096, 4096), 132).splitK, 3);
  // 8-column tiles: a step is 2048 rows (256 rows of threads x 8), and a slice at least one step.
  EXPECT_EQ(v.configFor(problem(1, 1024, 4096), 132).splitK, 2);
  EXPECT_EQ(v.configFor(problem(1, 64, 65536), 132).splitK, 16);  // 8 tiles: at most 16 slices
  // Enough tiles (448, 1571), or K of one step: no split.
  EXPECT_EQ(v.configFor(problem(1, 28672, 8192), 132).splitK, 1);
  EXPECT_EQ(v.configFor(problem(1, 50257, 4096), 132).splitK, 1);
  EXPECT_EQ(v.configFor(problem(1, 4096, 512), 132).splitK, 1);
}

TEST(GemmBf16Gemv, SplitFamilyConfigsRunInTheSimulator) {
  for (bool aCol : {false, true})
    for (bool kMajor : {false, true})
      for (int64_t n : {40, 37}) {
        layouts::Layout l;
        l.aCol = aCol;
        l.bKMajor = kMajor;
        GemmProblem p = problem(1, n, 2600, kMajor, !aCol);
        Config c = findGemmBf16Variant("bf16_gemv_m1")->configFor(p, 132);
        SCOPED_TRACE(c.str());
        EXPECT_GT(c.splitK, 1);
        testing::SimRun r =
            testing::simulateAgainstInterpreter(*layouts::gemm(l), c, Target::sm90a(), layouts::dimsFor(1, n, 2600), 5);
        EXPECT_EQ(r.error, "");
      }
}

TEST(GemmBf16Gemv, FamilyConfigsRunInTheSimulator) {
  for (bool aCol : {false, true})
    for (bool kMajor : {false, true})
      for (int64_t m : {1, 5})
        for (int64_t n : {40, 37}) {
          layouts::Layout l;
          l.aCol = aCol;
          l.bKMajor = kMajor;
          GemmProblem p = problem(m, n, 264, kMajor, !aCol);
          ir::DiagnosticEngine diag;
          auto pick = selectGemmBf16(p, Target::sm90a(), diag);
          ASSERT_TRUE(pick) << diag.str();
          Config c = pick->variant->configFor(p, 132);
          SCOPED_TRACE(c.str());
          ASSERT_EQ(c.strategy, "gemv");
          auto program = layouts::gemm(l);
          testing::SimRun r =
              testing::simulateAgainstInterpreter(*program, c, Target::sm90a(), layouts::dimsFor(m, n, 264), 5);
          EXPECT_EQ(r.error, "");
        }
}

}  // namespace
}  // namespace kiln::ops
