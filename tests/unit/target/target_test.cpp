// The architecture table: the facts strategies rely on.
#include <gtest/gtest.h>

#include "target/target.h"

namespace kiln {
namespace {

TEST(Target, SharedMemoryLimits) {
  EXPECT_EQ(Target::sm80().maxSmemPerBlock, 166912);
  EXPECT_EQ(Target::sm89().maxSmemPerBlock, 101376);
  EXPECT_EQ(Target::sm90a().maxSmemPerBlock, 232448);
  EXPECT_EQ(Target::sm100a().maxSmemPerBlock, 232448);
  EXPECT_EQ(Target::sm120().maxSmemPerBlock, 101376);
}

// What the selection heuristics count on the reference parts: the H100/H200's 132 SMs run 30
// clusters of four (measured: bench/results/2026-11-30-h200-narrow-tiles/README.md); elsewhere
// it is not measured, and SMs / 4 stands.
TEST(Target, ReferenceSmsAndClustersOfFour) {
  EXPECT_EQ(Target::sm90a().referenceSms, 132);
  EXPECT_EQ(Target::sm90a().referenceClustersOf4, 30);
  EXPECT_EQ(Target::sm90().referenceClustersOf4, 30);
  for (const Target& t : {Target::sm80(), Target::sm100a(), Target::sm120()})
    EXPECT_EQ(t.referenceClustersOf4, 0) << t.name;
}

TEST(Target, MmaFamilies) {
  for (const Target& t : Target::all()) EXPECT_TRUE(t.has(MmaKind::MmaSync)) << t.name;
  EXPECT_TRUE(Target::sm90a().has(MmaKind::Wgmma));
  EXPECT_FALSE(Target::sm90().has(MmaKind::Wgmma));
  EXPECT_FALSE(Target::sm100a().has(MmaKind::Wgmma));
  EXPECT_TRUE(Target::sm100a().has(MmaKind::Tcgen05));
  EXPECT_FALSE(Target::sm120().has(MmaKind::Tcgen05));
  EXPECT_FALSE(Target::sm80().mmaSyncFp8);
  EXPECT_TRUE(Target::sm89().mmaSyncFp8);
  EXPECT_FALSE(Target::sm80().tma);
  EXPECT_TRUE(Target::sm90().tma);
  EXPECT_TRUE(Target::sm90a().setmaxnreg);
  EXPECT_FALSE(Target::sm90().setmaxnreg);
}

TEST(Target, PtxDirectives) {
  EXPECT_EQ(Target::sm80().ptxVersion(), "7.0");
  EXPECT_EQ(Target::sm90a().ptxVersion(), "8.0");
  EXPECT_EQ(Target::sm90a().ptxTarget, "sm_90a");
  EXPECT_EQ(Target::sm120().ptxVersion(), "8.7");
}

TEST(Target, ByName) {
  ASSERT_TRUE(Target::byName("sm_89"));
  EXPECT_EQ(Target::byName("sm_89")->sm, 89);
  ASSERT_TRUE(Target::byName("sm90a"));
  EXPECT_EQ(Target::byName("sm90a")->name, "sm_90a");
  EXPECT_FALSE(Target::byName("sm_70"));
  EXPECT_EQ(Target::knownNames(), "sm_80, sm_89, sm_90, sm_90a, sm_100a, sm_120");
}

}  // namespace
}  // namespace kiln
