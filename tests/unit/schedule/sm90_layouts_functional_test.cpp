// sm90_ws_persistent on strided operands and outputs whose rows are not 16-byte aligned, run by the
// warp-specialized simulator against the tile-IR interpreter (testing/sim_run.h): leading
// dimensions in A's, B's and C's tensor maps, batch strides, an odd N stored from registers one
// element at a time, f32 outputs. The simulator's TMA reads the box through the map's strides and
// zero-fills past its dims, so a map that describes the wrong rows fails here.
#include <gtest/gtest.h>

#include "tests/unit/schedule/gemm_layouts_program.h"
#include "tests/unit/schedule/sm90_sim_check.h"
#include "tests/unit/testing/sim_run.h"

namespace kiln {
namespace {

using layouts::dimsFor;
using layouts::gemm;
using layouts::Layout;

void expectRuns(const Layout& l, const std::string& config, const std::map<std::string, int64_t>& dims) {
  auto program = gemm(l);
  testing::SimRun r = testing::simulateAgainstInterpreter(*program, Config::parse(config), Target::sm90a(), dims, 7);
  EXPECT_EQ(r.error, "") << r.config;
}

const std::string k64 = "strategy=sm90_ws_persistent bm=64 bn=64 bk=64 stages=2 warps_m=1 warps_n=1";
const std::string k128 = "strategy=sm90_ws_persistent bm=128 bn=128 bk=64 stages=3 warps_m=2 warps_n=1";

// Leading dimensions a multiple of 8 elements (TMA's 16-byte strides) and longer than the rows.
std::map<std::string, int64_t> padded(int64_t m, int64_t n, int64_t k, int64_t batch = 1) {
  std::map<std::string, int64_t> d = dimsFor(m, n, k, 0, batch);
  for (const char* ld : {"lda", "ldb", "ldc"}) d[ld] = (d[ld] + 7) / 8 * 8 + 16;
  d["sa"] = d["lda"] * std::max(m, k) + 64;
  d["sc"] = d["ldc"] * m + 64;
  return d;
}

TEST(Sm90Layouts, StridedOperandsThroughTheTensorMaps) {
  for (bool bK : {false, true}) {
    SCOPED_TRACE(bK ? "B K-major" : "B row-major");
    Layout l{false, bK, true, true, true};
    expectRuns(l, k64, padded(72, 88, 136));
    expectRuns(l, k64 + " epilogue=tma", padded(72, 88, 136));
    expectRuns(l, k128, padded(136, 136, 72));
  }
}

TEST(Sm90Layouts, BatchStrides) {
  Layout l{false, false, true, false, true};
  l.batched = true;
  expectRuns(l, k64, padded(40, 72, 64, 3));
  expectRuns(l, k64 + " epilogue=tma", padded(40, 72, 64, 3));
}

TEST(Sm90Layouts, OddNStoredFromRegisters) {
  // B K-major: its rows are K long (16-byte aligned); C's rows of 29 elements take one store each.
  Layout l{false, true};
  expectRuns(l, k64 + " align_c=2", dimsFor(40, 29, 72));
  expectRuns(l, k128 + " align_c=2", dimsFor(136, 77, 64));
  // A pair at a time where the rows are 4-byte aligned (an even N off 8).
  expectRuns(l, k64 + " align_c=4", dimsFor(40, 30, 72));
  Layout strided{false, true, true, true, true};
  std::map<std::string, int64_t> d = padded(40, 29, 72);
  d["ldc"] = 33;
  expectRuns(strided, k64 + " align_c=2", d);
}

TEST(Sm90Layouts, FloatOutputs) {
  Layout l;
  l.out = f32;
  expectRuns(l, k64, dimsFor(40, 72, 64));
  l.cStrided = true;
  std::map<std::string, int64_t> d = padded(40, 72, 64);
  d["ldc"] = 75;
  expectRuns(l, k64 + " align_c=4", d);
  Layout h;
  h.in = h.out = f16;
  expectRuns(h, k64 + " epilogue=tma", dimsFor(40, 72, 64));
}

TEST(Sm90Layouts, RefusesWhatATensorMapCannotDescribe) {
  Layout shared{false, false, false, true};
  shared.batched = true;
  shared.bShared = true;
  EXPECT_EQ(sm90sim::compileError(*gemm(shared), k64),
            "../tests/unit/schedule/gemm_layouts_program.h:40:34: error: sm90_ws_persistent reads 'B' through a "
            "tensor map, whose strides are positive; its stride 0 (one matrix for every batch) has none: compile it "
            "with strategy=sm80_multistage\n");
  EXPECT_EQ(sm90sim::compileError(*gemm(Layout{}), k64 + " align_c=2 epilogue=tma"),
            "../tests/unit/schedule/gemm_layouts_program.h:27:34: error: align_c=2 describes output rows a TMA store "
            "cannot address (its strides are multiples of 16 bytes); use epilogue=direct\n");
}

}  // namespace
}  // namespace kiln
