// sm90_ws_persistent on every operand layout, strided operands and outputs whose rows are not
// 16-byte aligned, run by the warp-specialized simulator against the tile-IR interpreter
// (testing/sim_run.h): a column-major A (TMA boxes over [K][M], wgmma's transposed-A descriptor),
// leading dimensions in A's, B's and C's tensor maps, batch strides, an odd N stored from registers
// one element at a time, f32 outputs. The simulator's TMA reads the box through the map's strides and
// zero-fills past its dims, so a map that describes the wrong rows fails here.
#include <gtest/gtest.h>

#include "kiln/compile.h"
#include "kiln/kernel.h"
#include "kiln/runtime/launch_args.h"
#include "kiln/select.h"
#include "tests/unit/runtime/launch_args_fixture.h"
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

TEST(Sm90Layouts, AllFourLayouts) {
  for (bool aCol : {false, true})
    for (bool bK : {false, true}) {
      SCOPED_TRACE(std::string(aCol ? "T" : "N") + (bK ? "T" : "N"));
      Layout l{aCol, bK};
      expectRuns(l, k64, dimsFor(72, 88, 136));
      expectRuns(l, k128, dimsFor(136, 136, 200));
      expectRuns(l, k128 + " epilogue=tma consumers=pingpong", dimsFor(264, 136, 72));
      expectRuns(l, "strategy=sm90_ws_persistent bm=128 bn=128 bk=64 stages=3 warps_m=2 warps_n=1 cluster_n=2",
                 dimsFor(136, 264, 136));
      expectRuns(l, "strategy=sm90_ws_persistent bm=128 bn=128 bk=64 stages=3 warps_m=2 warps_n=1 cluster_m=2",
                 dimsFor(264, 136, 136));
    }
  Layout half{true, false};
  half.in = half.out = f16;
  expectRuns(half, k64 + " epilogue=tma", dimsFor(72, 88, 136));
}

TEST(Sm90Layouts, ColumnMajorABatchedAndStrided) {
  Layout batched{true, false};
  batched.batched = true;
  expectRuns(batched, k64, dimsFor(72, 64, 72, 0, 3));
  Layout strided{true, true, true, true, true};
  expectRuns(strided, k128, padded(136, 72, 136));
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
  EXPECT_EQ(sm90sim::compileError(*gemm(Layout{true, false}), k64 + " swap_ab=true epilogue=tma stage_store=stmatrix"),
            "../tests/unit/schedule/gemm_layouts_program.h:50:25: error: sm90_ws_persistent with swap_ab=true reads A "
            "K-major; A is column-major (tensor<bf16, [M, K], order = [0, 1]>): use swap_ab=false\n");
  EXPECT_EQ(sm90sim::compileError(*gemm(Layout{}), k64 + " align_c=2 epilogue=tma"),
            "../tests/unit/schedule/gemm_layouts_program.h:27:34: error: align_c=2 describes output rows a TMA store "
            "cannot address (its strides are multiples of 16 bytes); use epilogue=direct\n");
}

TEST(Sm90Layouts, TheFamilyPicksHopperForEveryLayoutWithAlignedRows) {
  auto strategyOf = [](const Layout& l, const std::map<std::string, int64_t>& dims) {
    Selection s = select(*gemm(l), Target::sm90a(), dims);
    return s.config.substr(0, s.config.find(' '));
  };
  for (bool aCol : {false, true})
    for (bool bK : {false, true}) {
      SCOPED_TRACE(std::string(aCol ? "T" : "N") + (bK ? "T" : "N"));
      EXPECT_EQ(strategyOf(Layout{aCol, bK}, dimsFor(4096, 4096, 4096)), "strategy=sm90_ws_persistent");
      EXPECT_EQ(strategyOf(Layout{aCol, bK, true, true, true}, padded(4096, 4096, 4096)),
                "strategy=sm90_ws_persistent");
    }
  // A vocabulary projection with a K-major weight: wgmma, C stored an element at a time.
  Selection vocab = select(*gemm(Layout{false, true}), Target::sm90a(), dimsFor(4096, 50257, 4096));
  EXPECT_NE(vocab.config.find("strategy=sm90_ws_persistent"), std::string::npos) << vocab.config;
  EXPECT_NE(vocab.config.find("epilogue=direct"), std::string::npos) << vocab.config;
  EXPECT_NE(vocab.config.find("align_c=2"), std::string::npos) << vocab.config;
  // B row-major with N = 50257: its rows are not 16-byte aligned, which no tensor map can stride.
  EXPECT_EQ(strategyOf(Layout{}, dimsFor(4096, 50257, 4096)), "strategy=sm80_multistage");
}

TEST(Sm90Layouts, LaunchRefusesStridesATensorMapCannotHave) {
  // The kernel's contract (signatureOf): A and B are read through maps, so their leading dimensions
  // must be 16-byte multiples; C, stored from registers one element at a time, may have any.
  auto program = gemm(Layout{false, false, true, true, true});
  ir::DiagnosticEngine diag;
  auto r = compile(*program, Target::sm90a(), Config::parse(k64 + " align_c=2"), diag);
  ASSERT_TRUE(r) << diag.str();
  runtime::KernelSignature sig = signatureOf(*program->body().front(), r->launch);
  runtime::LaunchArgs args;
  args.dims = {{"M", 64}, {"N", 60}, {"K", 40}, {"lda", 48}, {"ldb", 64}, {"ldc", 61},
               {"Bt", 1}, {"sa", 1}, {"sc", 1}};
  args.tensors = {{0x100000, ir::ScalarType::BF16, {64, 40}, {}},
                  {0x200000, ir::ScalarType::BF16, {40, 60}, {}},
                  {0x300000, ir::ScalarType::BF16, {64, 60}, {}}};
  EXPECT_EQ(runtime::testing::check(sig, args), runtime::testing::Messages{});
  args.dims["lda"] = 44;
  EXPECT_EQ(runtime::testing::check(sig, args),
            runtime::testing::Messages{
                "argument 'A': stride 'lda' = 44 of dim 0 (M) elements is 88 bytes, not a multiple of 16: the kernel "
                "assumes every row starts 16-byte aligned; pad the rows to a multiple of 8 elements, or use a kernel "
                "compiled for less alignment"});
}

}  // namespace
}  // namespace kiln
