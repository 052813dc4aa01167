// The elementwise lowering (schedule/elementwise_lowering.h): the sigmoid's (and so SiLU's)
// reciprocal is an approximate division, div.full.f32 (2 ulp, no slow path, as the ex2.approx
// before it), so a GEMM epilogue over many elements stays straight-line code; a program's own
// division stays correctly rounded (div.rn.f32). Checked in the PTX and in the SASS (no FCHK, no
// slow-path call) of gemm_bias_silu_residual, and the product in the simulator.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "backend/assembler.h"
#include "examples/examples.h"
#include "kiln/compile.h"
#include "kiln/sass_stats.h"
#include "kiln/target.h"
#include "schedule/config.h"
#include "tests/unit/schedule/sm90_sim_check.h"

namespace kiln {
namespace {

const char* kCfg = "strategy=sm90_ws_persistent bm=64 bn=256 bk=64 stages=4 warps_m=2 warps_n=1 consumers=pingpong "
                   "epilogue=tma";

int count(const std::string& text, const std::string& pattern) {
  std::regex re(pattern);
  return int(std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

TEST(ElementwiseLowering, SigmoidDividesApproximately) {
  ir::DiagnosticEngine diag;
  auto r = compile(*examples::gemmBiasSiluResidual(), Target::sm90a(), Config::parse(kCfg), diag);
  ASSERT_TRUE(r) << diag.str();
  EXPECT_EQ(count(r->ptx, R"(div\.rn\.f32)"), 0);
  EXPECT_EQ(count(r->ptx, R"(div\.full\.f32)"), 128) << "one per element a thread holds (64 x 256 / 128)";
  auto cubin = backend::assemble(r->ptx, Target::sm90a().ptxTarget, diag);
  ASSERT_TRUE(cubin) << diag.str();
  auto sass = backend::sassStats(cubin->cubin, diag);
  if (!sass) GTEST_SKIP() << "no SASS disassembler: " << diag.str();
  EXPECT_EQ(sass->count("FCHK"), 0);
  EXPECT_EQ(sass->count("CALL"), 0);
}

TEST(ElementwiseLowering, ResidualSiluProductInTheSimulator) {
  sm90sim::Problem p{136, 264, 200};
  p.residual = true;
  p.blocks = 2;
  sm90sim::check(kCfg, p);
}

}  // namespace
}  // namespace kiln
