// `kiln cache` operations: only Kiln's files are counted as entries and removed, and verify finds
// each kind of bad entry.
#include "backend/cache_admin.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "backend/cache_entry.h"
#include "backend/compile_cache.h"

namespace kiln::backend {
namespace {
namespace fs = std::filesystem;

const std::string kHexA(64, 'a'), kHexB(64, 'b');

struct TempCache {
  fs::path dir;
  TempCache() {
    std::string tmpl = (fs::temp_directory_path() / "kiln-cache-admin-XXXXXX").string();
    dir = mkdtemp(tmpl.data());
  }
  ~TempCache() { fs::remove_all(dir); }
  void write(const std::string& name, const std::string& bytes) { std::ofstream(dir / name, std::ios::binary) << bytes; }
};

TEST(CacheAdmin, ClassifiesFileNames) {
  EXPECT_EQ(classifyCacheFile(kHexA + ".kcubin"), CacheFileKind::Entry);
  EXPECT_EQ(classifyCacheFile("." + kHexA + ".tmp.123.0"), CacheFileKind::Temporary);
  EXPECT_EQ(classifyCacheFile("notes.txt"), CacheFileKind::Other);
  EXPECT_EQ(classifyCacheFile(kHexA.substr(1) + "g.kcubin"), CacheFileKind::Other);
  EXPECT_EQ(classifyCacheFile(std::string(64, 'A') + ".kcubin"), CacheFileKind::Other);
}

TEST(CacheAdmin, StatsAndClearTouchOnlyKilnFiles) {
  TempCache c;
  c.write(kHexA + ".kcubin", "12345");
  c.write("." + kHexB + ".tmp.1.0", "12");
  c.write("notes.txt", "mine");
  std::string error;
  auto s = cacheStats(c.dir, error);
  ASSERT_TRUE(s) << error;
  EXPECT_TRUE(s->exists);
  EXPECT_EQ(s->entries, 1);
  EXPECT_EQ(s->entryBytes, 5);
  EXPECT_EQ(s->temporaries, 1);
  EXPECT_EQ(s->others, 1);
  EXPECT_EQ(clearCache(c.dir, error), 2) << error;
  EXPECT_TRUE(fs::exists(c.dir / "notes.txt"));
  EXPECT_EQ(cacheStats(c.dir, error)->entries, 0);
  EXPECT_EQ(clearCache(c.dir / "missing", error), 0);
}

TEST(CacheAdmin, VerifyReportsEveryBadEntry) {
  TempCache c;
  CacheKey key;
  key.digest.fill(0xaa);
  AssembledKernel k;
  k.arch = "sm_80";
  k.cubin = {'c', 'u', 'b'};
  std::string good = encodeCacheEntry(key, k);
  c.write(kHexA + ".kcubin", good);                        // good: the file name is its key
  c.write(kHexB + ".kcubin", good);                        // copied under another key
  c.write(std::string(64, 'c') + ".kcubin", good.substr(0, 40));
  ASSERT_EQ(mkfifo((c.dir / (std::string(64, 'd') + ".kcubin")).c_str(), 0600), 0);
  int64_t checked = 0;
  std::string error;
  auto bad = verifyCache(c.dir, checked, error);
  ASSERT_TRUE(bad) << error;
  EXPECT_EQ(checked, 4);
  std::map<std::string, std::string> why;
  for (const auto& b : *bad) why[b.path.filename().string().substr(0, 1)] = b.why;
  EXPECT_EQ(why.size(), 3u);
  EXPECT_EQ(why["b"], "foreign: the entry was written for a different key");
  EXPECT_EQ(why["c"], "truncated: 40 bytes, shorter than the 84-byte header");
  EXPECT_EQ(why["d"], "not a regular file");
}

}  // namespace
}  // namespace kiln::backend
