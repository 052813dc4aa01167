// gemm_bf16's gemv variants (src/ops/gemm_bf16_gemv.cpp): which problems they run, the family's
// pick for few rows in every layout, the block sizes configFor derives from N and the SM count, and
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

// The family's gemv rows (gemvPreferredRows): on sm_80 up to M = 8 in every layout; on sm_90a,
// where the sm90 tensor-core variants run the problem, up to M = 2 with a row-major A and M = 1
// with a column-major one (the H100 run of 2026-12-06, aa54445: gemv at M = 8 ran 0.48-0.67x
// cuBLAS, TT 0.13x, where the sm90 64x64 s13 variant runs ~20 us at 4096 x 4096 whatever M). A
// dense column-major A of M < 8 has rows of 2M bytes, which TMA cannot address: gemv up to 8.
TEST(GemmBf16Gemv, PickedUpToItsRowsInEveryLayout) {
  for (const Target& t : {Target::sm80(), Target::sm90a()})
    for (bool aRow : {true, false})
      for (bool kMajor : {false, true})
        for (int64_t m : {1, 2, 3, 4, 8}) {
          SCOPED_TRACE(t.name + " M=" + std::to_string(m) + (aRow ? " N" : " T") + (kMajor ? "T" : "N"));
          ir::DiagnosticEngine diag;
          const GemmProblem p = problem(m, 4096, 4096, kMajor, aRow);
          auto pick = selectGemmBf16(p, t, diag);
          ASSERT_TRUE(pick) << diag.str();
          const bool tma = aRow || m % 8 == 0;  // A's rows (M long when column-major) 16-byte aligned
          const int rows = t.wgmma && tma ? (aRow ? 2 : 1) : 8;
          EXPECT_EQ(gemvPreferredRows(p, t), rows);
          if (m <= rows) {
            int bm = m == 3 ? 4 : int(m);
            EXPECT_EQ(pick->variant->name, "bf16_gemv_m" + std::to_string(bm));
          } else {
            // The 64x64x64 s13 variant, K split in two: 64 tiles under a wave of 132 SMs.
            EXPECT_EQ(pick->variant->name, "bf16_gemm_sm90_64x64x64_s13_sk2");
          }
        }
  // A column-major A in a padded buffer (leading dimension a multiple of 8): the tensor cores from
  // M = 2 in both B layouts.
  for (bool kMajor : {false, true}) {
    GemmProblem padded = problem(2, 4096, 4096, kMajor, false);
    padded.alignA = 16;
    EXPECT_EQ(gemvPreferredRows(padded, Target::sm90a()), 1);
    ir::DiagnosticEngine diag;
    auto pick = selectGemmBf16(padded, Target::sm90a(), diag);
    ASSERT_TRUE(pick) << diag.str();
    EXPECT_EQ(pick->variant->name, "bf16_gemm_sm90_64x64x64_s13_sk2");
  }
  // Where no sm90 variant runs the problem on sm_90a (B's rows aligned to 2 bytes: no TMA), gemv
  // keeps its 8 rows.
  {
    GemmProblem odd = problem(8, 4095, 4096);
    EXPECT_EQ(gemvPreferredRows(odd, Target::sm90a()), 8);
    ir::DiagnosticEngine diag;
    auto pick = selectGemmBf16(odd, Target::sm90a(), diag);
    ASSERT_TRUE(pick) << diag.str();
    EXPECT_EQ(pick->variant->name, "bf16_gemv_m8");
  }
  // Above its rows gemv stays eligible, below every tensor-core variant, its own order kept (kiln
  // tune and a forced pick).
  {
    const GemmProblem p = problem(8, 4096, 4096);
    const double m8 = findGemmBf16Variant("bf16_gemv_m8")->preference(p, Target::sm90a());
    EXPECT_LT(m8, 0.1);
    EXPECT_GT(m8, findGemmBf16Variant("bf16_gemv_m4")->preference(p, Target::sm90a()));
    EXPECT_EQ(findGemmBf16Variant("bf16_gemv_m8")->preference(p, Target::sm80()), 4.0);
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
  // Row-major B: 64 columns (128-byte runs of each B row), split-K fills the SMs, not narrower
  // blocks; at most N rounded up to a power of two.
  EXPECT_EQ(v.configFor(problem(1, 14336, 4096), 132).bn, 64);  // 224 blocks
  EXPECT_EQ(v.configFor(problem(1, 4096, 4096), 132).bn, 64);   // 64 tiles
  EXPECT_EQ(v.configFor(problem(1, 1024, 4096), 132).bn, 64);
  EXPECT_EQ(v.configFor(problem(1, 40, 4096), 132).bn, 64);
  EXPECT_EQ(v.configFor(problem(1, 24, 4096), 132).bn, 32);
  EXPECT_EQ(v.configFor(problem(1, 8, 4096), 132).bn, 8);
  // M = 8 keeps the wave rule: 32 columns at 4096.
  EXPECT_EQ(findGemmBf16Variant("bf16_gemv_m8")->configFor(problem(8, 4096, 4096), 132).bn, 32);
  // K-major B: N rows per warp (bn / 8), fewer loads per row the more rows (4 rows, 1 load each split).
  Config k = v.configFor(problem(1, 4096, 4096, true), 132);
  EXPECT_EQ(k.bn, 32);
  EXPECT_EQ(k.vectors, 1);
  EXPECT_EQ(v.configFor(problem(1, 2048, 4096, true), 132).bn, 16);
  // Odd N: 2-byte loads, 8 columns a block at least.
  Config odd = v.configFor(problem(1, 50257, 4096), 132);
  EXPECT_EQ(odd.alignB, 2);
  EXPECT_EQ(odd.bn, 32);
  // Another tensor strided, B dense with N = 1001: loads of one element (B's rows are N long).
  GemmProblem strided = problem(1, 1001, 4096);
  strided.strided = true;
  strided.alignB = 2;
  EXPECT_EQ(v.configFor(strided, 132).alignB, 2);
  // B strided, its leading dimension 16-byte aligned, N = 1001: 16-byte loads, the block over N's
  // end loading its columns one at a time (the lowering's tail; the contract drops N % 8).
  strided.bStrided = true;
  strided.alignB = 16;
  EXPECT_EQ(v.configFor(strided, 132).alignB, 16);
  // K-major B: its rows are K long, N's oddness is whole rows.
  GemmProblem stridedK = problem(1, 1001, 4099, true);
  stridedK.strided = stridedK.bStrided = true;
  EXPECT_EQ(v.configFor(stridedK, 132).alignB, 2);
}

TEST(GemmBf16Gemv, KSplitWhereTheTilesUnderfillTheSms) {
  const GemmVariant& v = *findGemmBf16Variant("bf16_gemv_m1");
  // Row-major B at M = 1: 64-column tiles, 4 loads in flight (56 registers: four blocks of 256
  // threads per SM, 528 on 132 SMs), as many slices as one wave holds, each the same whole number
  // of 128-row steps (32 rows of threads x 4 loads).
  Config c = v.configFor(problem(1, 4096, 4096), 132);
  EXPECT_EQ(c.splitK, 8);  // 64 tiles x 8 = 512 blocks, 32 steps: 4 a slice
  EXPECT_EQ(c.vectors, 4);
  EXPECT_EQ(v.configFor(problem(1, 8192, 8192), 132).splitK, 4);   // 128 tiles: 512 blocks, 16 steps a slice
  EXPECT_EQ(v.configFor(problem(1, 14336, 4096), 132).splitK, 2);  // 224 tiles: 448 blocks, one wave
  EXPECT_EQ(v.configFor(problem(1, 4096, 14336), 132).splitK, 8);  // 112 steps: 14 a slice
  EXPECT_EQ(v.configFor(problem(1, 1024, 4096), 132).splitK, 16);  // 16 tiles: at most 16 slices
  EXPECT_EQ(v.configFor(problem(1, 64, 65536), 132).splitK, 16);
  EXPECT_EQ(v.configFor(problem(1, 4096, 512), 132).splitK, 4);    // 4 steps of 128 rows
  EXPECT_EQ(v.configFor(problem(1, 4096, 200), 132).splitK, 2);    // 2 steps
  // Not enough room for two slices a tile in one wave (448 x 2 > 528): unsplit, 8 loads in flight.
  Config wide = v.configFor(problem(1, 28672, 8192), 132);
  EXPECT_EQ(wide.splitK, 1);
  EXPECT_EQ(wide.vectors, 8);
  // M = 2: 72 registers at 4 loads, three blocks per SM (396): 64 tiles x 6, 32 steps in 6 of 6, 6,
  // 6, 6, 6, 2.
  EXPECT_EQ(findGemmBf16Variant("bf16_gemv_m2")->configFor(problem(2, 4096, 4096), 132).splitK, 6);
  // K-major B at M = 1, the same rule: 128 tiles of 32 N rows (4 a warp, one 16-byte load of each
  // a step: 60 registers), 4 slices of 4 steps of 256 (32 lanes x 8); 8192 x 8192: 256 tiles, 2
  // slices; 14336 x 4096 (448 tiles): unsplit, 2 loads of each row.
  Config k = v.configFor(problem(1, 4096, 4096, true), 132);
  EXPECT_EQ(k.splitK, 4);
  EXPECT_EQ(k.vectors, 1);
  EXPECT_EQ(v.configFor(problem(1, 8192, 8192, true), 132).splitK, 2);
  Config kWide = v.configFor(problem(1, 14336, 4096, true), 132);
  EXPECT_EQ(kWide.splitK, 1);
  EXPECT_EQ(kWide.vectors, 2);
  // Narrower loads and M > 2 keep the rule of about three blocks per SM (rounded).
  EXPECT_EQ(findGemmBf16Variant("bf16_gemv_m8")->configFor(problem(8, 4096, 4096), 132).splitK, 3);
  // Enough tiles (1571 of 32 columns at 2-byte loads), or K of one step: no split.
  EXPECT_EQ(v.configFor(problem(1, 50257, 4096), 132).splitK, 1);
  EXPECT_EQ(v.configFor(problem(1, 4096, 128), 132).splitK, 1);
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

// The one-wave rule's configs at the geometry they take at 4096 x 4096 on 132 SMs, scaled down to 2
// SMs: 64-column blocks of 4 loads (N path), 32 N rows of one load each a block (K path), M = 1 and
// 2, K in 4, 2 or 3 slices of whole steps, the last one short.
TEST(GemmBf16Gemv, OneWaveSplitConfigsRunInTheSimulator) {
  for (bool aCol : {false, true})
    for (bool kMajor : {false, true})
      for (int64_t m : {1, 2}) {
        if (kMajor && m == 2) continue;  // the K path takes the rule at M = 1 only
        layouts::Layout l;
        l.aCol = aCol;
        l.bKMajor = kMajor;
        GemmProblem p = problem(m, 128, 1400, kMajor, !aCol);
        Config c = findGemmBf16Variant(m == 1 ? "bf16_gemv_m1" : "bf16_gemv_m2")->configFor(p, 2);
        SCOPED_TRACE(c.str());
        EXPECT_EQ(c.bn, kMajor ? 32 : 64);
        EXPECT_EQ(c.vectors, kMajor ? 1 : 4);
        EXPECT_EQ(c.splitK, kMajor ? 2 : m == 1 ? 4 : 3);
        testing::SimRun r =
            testing::simulateAgainstInterpreter(*layouts::gemm(l), c, Target::sm90a(), layouts::dimsFor(m, 128, 1400), 5);
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
