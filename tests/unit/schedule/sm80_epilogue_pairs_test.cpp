// The epilogue's loads of column pairs (sm80_epilogue_address.h, pairLoadBytes): a residual [M, N]
// of bf16 read as one 32-bit word per pair of adjacent columns and an f32 bias [N] as ld.global.v2,
// where the fragment's columns are N and the output's rows come in pairs; one element at a time
// where they are not (swap_ab, whose pairs lie along M; align_c below a pair). The launch asks the
// pair's alignment of those tensors. The sm90 staged epilogue issues each unit's loads before its
// slot's wait and barrier. The products are checked element by element in the warp-specialized
// simulator, which also reports any misaligned access (its ld.global checks the address against
// the access's width).
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "examples/examples.h"
#include "kiln/compile.h"
#include "kiln/target.h"
#include "schedule/config.h"
#include "tests/unit/schedule/sm90_sim_check.h"

namespace kiln {
namespace {
using namespace sm90sim;

CompileResult compileResidual(const Target& target, const std::string& config) {
  auto program = examples::gemmBiasSiluResidual();
  ir::DiagnosticEngine diag;
  auto r = compile(*program, target, Config::parse(config), diag);
  EXPECT_TRUE(r) << diag.str();
  return r ? *r : CompileResult{};
}

int count(const std::string& text, const std::string& pattern) {
  std::regex re(pattern);
  return int(std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

int64_t alignmentOf(const CompileResult& r, const std::string& name) {
  for (const auto& p : r.launch.params)
    if (p.name == name) return p.alignment;
  ADD_FAILURE() << "no parameter " << name;
  return 0;
}

const char* kTile = "strategy=sm90_ws_persistent bm=128 bn=128 bk=64 stages=3 warps_m=2 warps_n=1 epilogue=tma";

// 128x128 on two warpgroups: each thread holds 64 rows x 128 columns / 128 threads = 64 elements
// of R, 32 pairs: 32 word loads (ld.global.b32), and of bias 2 columns per n8 tile, 16 pairs.
TEST(EpiloguePairs, ResidualAndBiasLoadInPairs) {
  CompileResult r = compileResidual(Target::sm90a(), kTile);
  EXPECT_EQ(count(r.ptx, R"(ld\.global\.b32)"), 32) << "the residual's pairs";
  EXPECT_EQ(count(r.ptx, R"(ld\.global\.v2\.f32)"), 16) << "the bias's pairs";
  EXPECT_EQ(count(r.ptx, R"(ld\.global\.(b16|bf16|u16))"), 0) << "no residual element alone";
  EXPECT_EQ(alignmentOf(r, "R"), 4);
  EXPECT_EQ(alignmentOf(r, "bias"), 8);
}

// swap_ab: the fragment's column pairs lie along M, apart in memory: one element each, and the
// launch asks no more than the elements' own alignment.
TEST(EpiloguePairs, SwapAbLoadsOneElementAtATime) {
  CompileResult r = compileResidual(Target::sm90a(), std::string(kTile) + " swap_ab=true stage_store=stmatrix");
  EXPECT_EQ(count(r.ptx, R"(ld\.global\.b32)"), 0);
  EXPECT_EQ(count(r.ptx, R"(ld\.global\.v2\.f32)"), 0);
  EXPECT_GT(count(r.ptx, R"(ld\.global\.b16)"), 0);
  EXPECT_LT(alignmentOf(r, "R"), 4);
}

// align_c=2 (an odd N): the output's pairs may straddle a row's end, and so would the loads'.
TEST(EpiloguePairs, OddRowsLoadOneElementAtATime) {
  CompileResult r = compileResidual(Target::sm90a(),
                                    "strategy=sm90_ws_persistent bm=128 bn=128 bk=64 stages=3 warps_m=2 warps_n=1 "
                                    "epilogue=direct align_c=2");
  EXPECT_EQ(count(r.ptx, R"(ld\.global\.b32)"), 0);
  EXPECT_EQ(count(r.ptx, R"(ld\.global\.v2\.f32)"), 0);
}

// sm80_multistage shares the epilogue: pairs there too, with the same launch requirements.
TEST(EpiloguePairs, Sm80LoadsPairs) {
  CompileResult r = compileResidual(Target::sm80(), "bm=128 bn=128 bk=32 stages=3 warps_m=2 warps_n=4");
  EXPECT_GT(count(r.ptx, R"(ld\.global\.b32)"), 0);
  EXPECT_EQ(alignmentOf(r, "R"), 4);
  EXPECT_EQ(alignmentOf(r, "bias"), 8);
}

// The staged epilogue's loads of a unit come before its slot barrier: in the PTX, every residual
// word load of a tile lies before the named barrier of its box (4 boxes of 64 columns at bn=256).
TEST(EpiloguePairs, StagedUnitsLoadBeforeTheirBarrier) {
  CompileResult r = compileResidual(Target::sm90a(),
                                    "strategy=sm90_ws_persistent bm=128 bn=256 bk=64 stages=4 warps_m=2 warps_n=1 "
                                    "epilogue=tma epilogue_loads=late");
  // Between two consecutive TMA stores of the boxes, the loads of the next box precede its first
  // barrier: the text from one cp.async.bulk.tensor store to the next holds loads, then bar.sync.
  size_t at = r.ptx.find("cp.async.bulk.tensor.2d.global.shared");
  ASSERT_NE(at, std::string::npos);
  size_t load = r.ptx.find("ld.global.b32", at), barrier = r.ptx.find("bar.sync", at);
  ASSERT_NE(load, std::string::npos);
  EXPECT_LT(load, barrier) << "the second box's residual loads come before its slot barrier";
}

// The products, element by element, in the simulator: ragged M and N (masked pairs at the edges),
// two and three consumer warpgroups, a width that leaves columns past the last 64-column box
// (stored from registers), the direct epilogue, and swap_ab.
TEST(EpiloguePairs, ResidualProductsInTheSimulator) {
  Problem p{200, 136, 136};
  p.residual = true;
  p.blocks = 2;
  check(kTile, p);
  check("strategy=sm90_ws_persistent bm=128 bn=96 bk=64 stages=3 warps_m=2 warps_n=1 epilogue=tma", p);
  check("strategy=sm90_ws_persistent bm=192 bn=128 bk=64 stages=3 warps_m=3 warps_n=1 epilogue=tma", p);
  check("strategy=sm90_ws_persistent bm=128 bn=128 bk=64 stages=3 warps_m=2 warps_n=1 epilogue=direct", p);
  check(std::string(kTile) + " swap_ab=true stage_store=stmatrix", p);
  check(std::string(kTile) + " epilogue_loads=early", p);
}

}  // namespace
}  // namespace kiln
