// The rowwise strategy's config keys: printed for it (and only the GEMM keys that differ from their
// defaults), round trips, and each rule's exact message; the GEMM strategies refuse its keys and it
// refuses theirs.
#include <gtest/gtest.h>

#include "schedule/config.h"
#include "target/target.h"

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
  Config odd = Config::parse("strategy=rowwise scalar=true bm=64");
  EXPECT_EQ(odd.str(), "strategy=rowwise bm=64 row_threads=32 block_threads=256 vectors=4 scalar=true blocks_per_sm=0");
  EXPECT_EQ(Config::parse(odd.str()), odd);
  // The GEMM strategies print as before: the rowwise keys only where they differ.
  EXPECT_EQ(Config{}.str().find("row_threads"), std::string::npos);
  EXPECT_NE(Config::parse("vectors=2").str().find(" vectors=2"), std::string::npos);
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
  EXPECT_EQ(validateErrors("strategy=rowwise bm=64 stages=4"),
            "error: config key 'bm' sets the GEMM strategies' tiles and pipelines, which rowwise does not have; drop "
            "it\n"
            "error: config key 'stages' sets the GEMM strategies' tiles and pipelines, which rowwise does not have; "
            "drop it\n");
  EXPECT_EQ(validateErrors("strategy=sm80_multistage row_threads=64"),
            "error: config key 'row_threads' sets the rowwise strategy's rows of threads, which sm80_multistage does "
            "not have; drop it\n");
  EXPECT_NE(validateErrors("strategy=sm90_ws_persistent bm=128 bn=128 bk=64 stages=4 warps_m=2 warps_n=1 scalar=true")
                .find("config key 'scalar' sets the rowwise strategy's rows of threads, which sm90_ws_persistent"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln
