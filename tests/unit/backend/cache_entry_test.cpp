#include "backend/cache_entry.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

namespace kiln::backend {
namespace {

AssembledKernel sampleKernel() {
  AssembledKernel k;
  k.arch = "sm_90a";
  k.cubin = {'\x7f', 'E', 'L', 'F', '\0', '\x01', '\xff'};
  k.resources["gemm"] = ResourceReport{"gemm", 168, 1, 0, 0, 0, 4096, 536};
  k.resources["aux"] = ResourceReport{"aux", 8, 0, 256, 4, 8, 0, 360};
  k.warnings.push_back({ir::Severity::Warning, ir::Location{"ws.kiln", 12, 3}, "ptxas: (C7504) setmaxnreg ignored"});
  k.infoLog = "ptxas info    : Used 168 registers\n";
  return k;
}

void expectSame(const AssembledKernel& a, const AssembledKernel& b) {
  EXPECT_EQ(a.arch, b.arch);
  EXPECT_EQ(a.cubin, b.cubin);
  EXPECT_EQ(a.resources, b.resources);
  ASSERT_EQ(a.warnings.size(), b.warnings.size());
  for (size_t i = 0; i < a.warnings.size(); ++i) {
    EXPECT_EQ(a.warnings[i].severity, b.warnings[i].severity);
    EXPECT_EQ(a.warnings[i].loc, b.warnings[i].loc);
    EXPECT_EQ(a.warnings[i].message, b.warnings[i].message);
  }
  EXPECT_EQ(a.infoLog, b.infoLog);
}

TEST(CacheEntry, RoundTrips) {
  CacheKey key = cacheKey("ptx", "sm_90a");
  std::string bytes = encodeCacheEntry(key, sampleKernel());
  EXPECT_EQ(bytes.substr(0, 8), "KILNCUBN");
  std::string why;
  auto k = decodeCacheEntry(bytes, key, why);
  ASSERT_TRUE(k) << why;
  expectSame(*k, sampleKernel());
}

TEST(CacheEntry, RejectsEveryTruncation) {
  CacheKey key = cacheKey("ptx", "sm_90a");
  std::string bytes = encodeCacheEntry(key, sampleKernel());
  for (size_t len = 0; len < bytes.size(); ++len) {
    std::string why;
    EXPECT_FALSE(decodeCacheEntry(std::string_view(bytes).substr(0, len), key, why)) << len;
    EXPECT_TRUE(why.starts_with("truncated")) << len << ": " << why;
  }
}

TEST(CacheEntry, RejectsEveryFlippedByte) {
  CacheKey key = cacheKey("ptx", "sm_90a");
  std::string good = encodeCacheEntry(key, sampleKernel());
  for (size_t at = 0; at < good.size(); ++at) {
    std::string bad = good;
    bad[at] ^= 0x20;
    std::string why;
    EXPECT_FALSE(decodeCacheEntry(bad, key, why)) << "byte " << at << " flipped went unnoticed";
    EXPECT_FALSE(why.empty());
  }
}

TEST(CacheEntry, RejectsForeignEntriesWithReasons) {
  CacheKey key = cacheKey("ptx", "sm_90a");
  std::string bytes = encodeCacheEntry(key, sampleKernel());
  std::string why;
  EXPECT_FALSE(decodeCacheEntry(bytes, cacheKey("ptx", "sm_80"), why));
  EXPECT_EQ(why, "foreign: the entry was written for a different key");

  std::string v2 = bytes;
  v2[8] = 2;
  EXPECT_FALSE(decodeCacheEntry(v2, key, why));
  EXPECT_EQ(why, "foreign: cache format version 2, this Kiln reads version 1");

  EXPECT_FALSE(decodeCacheEntry("GIF89a, not a cache entry at all, but long enough for a header"
                                "..........................................................", key, why));
  EXPECT_EQ(why, "foreign: not a Kiln cache entry (bad magic)");

  EXPECT_FALSE(decodeCacheEntry(bytes + "x", key, why));
  EXPECT_EQ(why, fmt::format("corrupted: 1 bytes after the {}-byte payload", bytes.size() - kCacheHeaderSize));
}

}  // namespace
}  // namespace kiln::backend
