#include "backend/cache_key.h"

#include <gtest/gtest.h>

namespace kiln::backend {
namespace {

TEST(CacheKey, SameInputSameKey) {
  EXPECT_EQ(cacheKey("ptx text", "sm_90a"), cacheKey("ptx text", "sm_90a"));
  EXPECT_EQ(cacheKey("ptx text", "sm_90a").hex().size(), 64u);
}

TEST(CacheKey, EveryInputChangesTheKey) {
  CacheKey base = cacheKey("ptx text", "sm_90a");
  EXPECT_NE(base, cacheKey("ptx text", "sm_80"));
  EXPECT_NE(base, cacheKey("ptx text ", "sm_90a"));
  AssembleOptions o;
  o.maxRegisters = 128;
  EXPECT_NE(base, cacheKey("ptx text", "sm_90a", o));
  o = {};
  o.ptxasOptions = {"-warn-spills"};
  EXPECT_NE(base, cacheKey("ptx text", "sm_90a", o));
  o = {};
  o.optLevel = 2;
  EXPECT_NE(base, cacheKey("ptx text", "sm_90a", o));
  o = {};
  o.ptxName = "other.ptx";
  EXPECT_NE(base, cacheKey("ptx text", "sm_90a", o));
}

// Fields are length-prefixed: moving bytes from one field to the next must change the key.
TEST(CacheKey, FieldBoundariesMatter) {
  EXPECT_NE(cacheKey("abcsm_8", "0"), cacheKey("abc", "sm_80"));
}

}  // namespace
}  // namespace kiln::backend
