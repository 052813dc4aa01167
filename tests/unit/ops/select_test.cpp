// kiln::select (include/kiln/select.h): on Hopper every 16-bit or FP8 GEMM the families accept gets
// a sm90_ws_persistent pick that compiles, whatever its output type and epilogue; the pick says
// which variant and why.
#include "kiln/select.h"

#include <gtest/gtest.h>

#include "examples/examples.h"
#include "kiln/compile.h"
#include "kiln/program_builder.h"

namespace kiln {
namespace {

const std::map<std::string, int64_t> k4096 = {{"M", 4096}, {"N", 4096}, {"K", 4096}};

std::unique_ptr<ir::Module> gemm(ScalarType in, ScalarType out) {
  ProgramBuilder p("gemm");
  auto [M, N, K] = p.dims("M", "N", "K");
  auto A = p.input("A", in, {M, K});
  auto B = p.input("B", in, {K, N});
  auto C = p.output("C", out, {M, N});
  p.tile({M, N}, [&](Coord m, Coord n) {
    Tile acc = p.zeros(f32, {m, n});
    p.reduce(K, [&](Coord k) { acc = dot(A(m, k), B(k, n), acc); });
    C(m, n) = out == f32 ? acc : cast(out, acc);
  });
  return p.finish();
}

// The pick is a family's sm90 kernel, and it compiles.
void expectSm90Pick(const ir::Module& program, const Selection& s, const std::string& family) {
  EXPECT_EQ(s.family, family) << s.why;
  EXPECT_FALSE(s.variant.empty());
  EXPECT_EQ(s.config.rfind("strategy=sm90_ws_persistent ", 0), 0u) << s.config;
  EXPECT_NE(s.why.find(s.variant), std::string::npos) << s.why;
  ir::DiagnosticEngine diag;
  EXPECT_TRUE(compile(program, Target::sm90a(), s.config, diag)) << s.config << "\n" << diag.str();
}

TEST(Select, Bf16OutputTakesTheFamilysTmaStorePick) {
  auto program = gemm(bf16, bf16);
  Selection s = select(*program, Target::sm90a(), k4096);
  expectSm90Pick(*program, s, "gemm_bf16");
  EXPECT_NE(s.config.find("epilogue=tma"), std::string::npos) << s.config;
}

// The f32 output is staged for TMA too (32-column boxes, st.shared.v2 pairs), so the pick keeps
// its epilogue=tma with the pairs staging (sm90_f32_tma_store_test.cpp: what it cannot keep).
TEST(Select, F32OutputOnHopperTakesTheTmaStorePick) {
  auto program = gemm(bf16, f32);
  Selection s = select(*program, Target::sm90a(), k4096);
  expectSm90Pick(*program, s, "gemm_bf16");
  EXPECT_NE(s.config.find("epilogue=tma stage_store=pairs"), std::string::npos) << s.config;
  EXPECT_NE(s.why.find(", for the f32 output"), std::string::npos) << s.why;
  // The same variant as the BF16 output's pick.
  EXPECT_EQ(s.variant, select(*gemm(bf16, bf16), Target::sm90a(), k4096).variant);
}

TEST(Select, F16OperandsAndOutputOnHopper) {
  auto program = gemm(f16, f16);
  Selection s = select(*program, Target::sm90a(), k4096);
  expectSm90Pick(*program, s, "gemm_bf16");
  EXPECT_NE(s.why.find(", for f16 operands, for the f16 output"), std::string::npos) << s.why;
  auto builtIn = examples::gemmF16();  // f16 in, f16 out
  expectSm90Pick(*builtIn, select(*builtIn, Target::sm90a(), k4096), "gemm_bf16");
}

TEST(Select, FusedEpiloguesOnHopper) {
  auto biasGelu = examples::gemmBiasGelu();
  expectSm90Pick(*biasGelu, select(*biasGelu, Target::sm90a(), k4096), "gemm_bf16");
  auto fp8 = examples::fp8RowwiseGemm();  // per-row and per-column scales
  expectSm90Pick(*fp8, select(*fp8, Target::sm90a(), k4096), "gemm_fp8");
}

TEST(Select, ElsewhereThePortableDefault) {
  auto program = gemm(bf16, f32);
  Selection s = select(*program, Target::sm80(), k4096);
  EXPECT_EQ(s.config.rfind("strategy=sm80_multistage ", 0), 0u) << s.config;
  ir::DiagnosticEngine diag;
  EXPECT_TRUE(compile(*program, Target::sm80(), s.config, diag)) << diag.str();
  // Dims not given: no variant runs M = 0, and the default says why.
  s = select(*program, Target::sm90a(), {});
  EXPECT_TRUE(s.family.empty());
  EXPECT_NE(s.why.find("M, N and K must be positive"), std::string::npos) << s.why;
}

}  // namespace
}  // namespace kiln
