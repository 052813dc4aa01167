// The gemv strategy (src/schedule/gemv/) on every operand layout, run by the kern IR simulator
// against the tile-IR interpreter (testing/sim_run.h): M from 1 to 16, both of B's paths (row-major:
// threads along N; K-major: lanes along K), A row- or column-major, strided operands, batches, odd
// N and K through narrower loads, FP16, f32 outputs and a fused epilogue. The simulator refuses a
// misaligned load or store and checks that the shuffles run converged.
#include <gtest/gtest.h>

#include "kiln/program_builder.h"
#include "tests/unit/schedule/gemv_cases.h"
#include "tests/unit/testing/sim_run.h"

namespace kiln {
namespace {

using layouts::dimsFor;
using layouts::gemm;
using gemv_cases::name;
using layouts::Layout;

void expectRuns(const Layout& l, const std::string& config, const std::map<std::string, int64_t>& dims,
                const Target& t = Target::sm80()) {
  auto program = gemm(l);
  testing::SimRun r = testing::simulateAgainstInterpreter(*program, Config::parse(config), t, dims, 11);
  EXPECT_EQ(r.error, "") << r.config;
}

// A column-major A's loads along M: M = 2, 4, 6, 8, 16 take 2 to 16 bytes (VM = 2, 4, 2, 8, 8 rows a
// load; at M = 4 and 6 the block's rows past M are a load masked off), M = 1 and 7 element loads.
TEST(Gemv, AllFourLayoutsAtSmallM) {
  for (bool aCol : {false, true})
    for (bool bK : {false, true})
      for (int m : {1, 2, 4, 6, 7, 8, 16}) {
        Layout l;
        l.aCol = aCol;
        l.bKMajor = bK;
        SCOPED_TRACE(name(l) + " M=" + std::to_string(m));
        int bm = m == 1 ? 1 : m <= 2 ? 2 : m <= 8 ? 8 : 16;
        std::string c = "strategy=gemv bm=" + std::to_string(bm) + " bn=32 block_threads=128 vectors=2" + gemv_cases::alignAFor(aCol, m);
        if (bK) c += " row_threads=16";
        expectRuns(l, c, dimsFor(m, 96, 600));
      }
}

TEST(Gemv, RowsOfMBeyondOneBlock) {
  // M over bm: several blocks along M, the epilogue's fragment rows past bm masked off.
  for (bool bK : {false, true}) {
    Layout l;
    l.bKMajor = bK;
    SCOPED_TRACE(name(l));
    expectRuns(l, "strategy=gemv bm=2 bn=16 block_threads=64 vectors=1", dimsFor(5, 40, 72));
  }
}

TEST(Gemv, StridedBatchedAndOdd) {
  for (bool aCol : {false, true})
    for (bool bK : {false, true}) {
      Layout l = gemv_cases::stridedSharedB(aCol, bK);
      SCOPED_TRACE(name(l));
      std::map<std::string, int64_t> d = gemv_cases::stridedSharedBDims();
      expectRuns(l, "strategy=gemv bm=4 bn=32 block_threads=128 vectors=2" + gemv_cases::alignAFor(aCol, 3), d);
      // M = 4 over a strided A: a column-major A's rows of M along M in one 8-byte load, its
      // columns lda apart.
      expectRuns(l, "strategy=gemv bm=4 bn=32 block_threads=128 vectors=2", gemv_cases::stridedSharedBDims(4));
      // Odd N and K: element loads of A and B, single-element stores.
      Layout o{aCol, bK};
      expectRuns(o, "strategy=gemv bm=4 bn=16 block_threads=64 vectors=3 align_a=2 align_b=2 align_c=2",
                 dimsFor(3, 37, 45));
    }
}

// An odd N over a strided B whose leading dimension keeps rows 16-byte aligned: 16-byte loads in
// the blocks inside N, the block over N's end loading its columns one at a time (N = 37: columns
// 32..36 of the last 16-column block; its vector would read past B's storage in the last row,
// which the simulator refuses). The K-major B's odd N is whole rows (masked as before).
TEST(Gemv, OddNOverAnAlignedStridedBTakesVectorsAndAnElementTail) {
  for (bool aCol : {false, true})
    for (bool bK : {false, true})
      for (int m : {1, 3}) {
        Layout l{aCol, bK, false, true, false};
        SCOPED_TRACE(name(l) + " M=" + std::to_string(m));
        std::map<std::string, int64_t> d = dimsFor(m, 37, 200);  // ldb = 200: rows 400 bytes apart
        expectRuns(l, "strategy=gemv bm=" + std::string(m == 1 ? "1" : "4") + " bn=16 block_threads=64 vectors=2 align_b=16 align_c=2" + gemv_cases::alignAFor(aCol, m),
                   d, Target::sm90a());
      }
}

TEST(Gemv, Fp16AndF32Out) {
  for (bool bK : {false, true}) {
    Layout l;
    l.bKMajor = bK;
    l.in = f16;
    l.out = f32;
    SCOPED_TRACE(name(l));
    expectRuns(l, "strategy=gemv bm=1 bn=64 block_threads=256 vectors=4", dimsFor(1, 200, 1032), Target::sm90a());
  }
}

}  // namespace
}  // namespace kiln
