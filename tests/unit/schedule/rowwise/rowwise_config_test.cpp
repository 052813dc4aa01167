// The rowwise strategy's config keys: printed for it (its own keys only), round trips, and each
// rule's exact message; the GEMM strategies refuse its keys and it refuses theirs.
#include <gtest/gtest.h>

#include "schedule/config.h"
#include "kiln/target.h"

namespace kiln {
namespace {

std::string validateErrors(const std::string& text, const Target& t = Target::sm90a()) {
  ir::DiagnosticEngine diag;
  auto c = Config::parse(text, diag);
  EXPECT_TRUE(c) << diag.str();
  if (!c) return diag.str();
  EXPECT_FALSE(validate(*c, t, OperandInfo{2, 2}, diag));
  return diag.str();
}

TEST(RowwiseConfig, PrintsItsOwnKeys) {
  Config c = Config::parse("strategy=rowwise row_threads=128 block_threads=512 vectors=8 blocks_per_sm=2");
  EXPECT_EQ(c.str(), "strategy=rowwise row_threads=128 block_threads=512 vectors=8 scalar=false blocks_per_sm=2");
  EXPECT_EQ(Config::parse(c.str()), c);
  // The GEMM strategies print their own keys only.
  EXPECT_EQ(Config{}.str().find("row_threads"), std::string::npos);
}

TEST(RowwiseConfig, AcceptsItsDefaultsEverywhere) {
  for (const Target& t : Target::all()) {
    ir::DiagnosticEngine diag;
    EXPECT_TRUE(validate(Config::parse("strategy=rowwise"), t, OperandInfo{2, 2}, diag)) << t.name << diag.str();
  }
}

TEST(RowwiseConfig, Rules) {
  EXPECT_EQ(validateErrors("strategy=rowwise row_threads=48 block_threads=96"),
            "error: row_threads=48 must be a power of two (a row's threads reduce by butterfly shuffles)\n");
  EXPECT_EQ(validateErrors("strategy=rowwise block_threads=100"),
            "error: block_threads=100 must be a multiple of 32 (whole warps)\n"
            "error: block_threads=100 must be a multiple of row_threads=32 (each block holds whole rows)\n");
  EXPECT_EQ(validateErrors("strategy=rowwise row_threads=512 block_threads=256"),
            "error: block_threads=256 must be a multiple of row_threads=512 (each block holds whole rows)\n");
}

TEST(RowwiseConfig, StrategiesRefuseEachOthersKeys) {
  // In the text, at parse time.
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(Config::parse("strategy=rowwise bm=64 stages=4", diag));
  EXPECT_EQ(diag.str(),
            "error: config key 'bm' is not an option of rowwise (it is one of sm80_multistage, sm90_ws_persistent, "
            "gemv); drop it or change the strategy\n"
            "error: config key 'stages' is not an option of rowwise (it is one of sm80_multistage, "
            "sm90_ws_persistent); drop it or change the strategy\n");
  ir::DiagnosticEngine diag2;
  EXPECT_FALSE(Config::parse("strategy=sm90_ws_persistent scalar=true", diag2));
  EXPECT_EQ(diag2.str(),
            "error: config key 'scalar' is not an option of sm90_ws_persistent (it is one of rowwise); drop it or "
            "change the strategy\n");
  // In a typed config, at validation.
  Config rows = Config::parse("strategy=rowwise");
  rows.bm = 64;
  ir::DiagnosticEngine diag3;
  EXPECT_FALSE(validate(rows, Target::sm80(), OperandInfo{2, 2}, diag3));
  EXPECT_EQ(diag3.str(), "error: bm=64 is not an option of rowwise (it is one of sm80_multistage, sm90_ws_persistent, "
            "gemv); leave it at 128\n");
  Config gemm;
  gemm.rowThreads = 64;
  ir::DiagnosticEngine diag4;
  EXPECT_FALSE(validate(gemm, Target::sm80(), OperandInfo{}, diag4));
  EXPECT_EQ(diag4.str(),
            "error: row_threads=64 is not an option of sm80_multistage (it is one of rowwise, gemv); leave it at 32\n");
}

}  // namespace
}  // namespace kiln
