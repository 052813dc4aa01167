// Swizzles: bijective, conflict-free for ldmatrix, and displacements that compose exactly.
#include <gtest/gtest.h>

#include <set>

#include "target/swizzle.h"

namespace kiln {
namespace {

TEST(Swizzle, ChoiceByRowBytes) {
  EXPECT_EQ(Swizzle::forRowBytes(64), (Swizzle{3, 4, 3}));
  EXPECT_EQ(Swizzle::forRowBytes(128), (Swizzle{3, 4, 3}));
  EXPECT_EQ(Swizzle::forRowBytes(256), (Swizzle{3, 4, 4}));
  EXPECT_EQ(Swizzle::forRowBytes(512), (Swizzle{3, 4, 5}));
  EXPECT_EQ(Swizzle::forRowBytes(64).str(), "Swizzle<3,4,3>");
}

TEST(Swizzle, IsABijectionWithinEachLine) {
  for (int64_t rowBytes : {64, 128, 256, 512}) {
    Swizzle s = Swizzle::forRowBytes(rowBytes);
    std::set<int64_t> seen;
    for (int64_t o = 0; o < 64 * rowBytes; o += 16) {
      int64_t p = s.apply(o);
      EXPECT_EQ(p / 128, o / 128) << "a chunk left its 128-byte line";
      seen.insert(p);
    }
    EXPECT_EQ(seen.size(), size_t(64 * rowBytes / 16));
    EXPECT_EQ(s.apply(s.apply(12345 * 16)), 12345 * 16) << "the XOR swizzle is its own inverse";
  }
}

TEST(Swizzle, LdmatrixPhasesAreConflictFree) {
  for (int64_t rowBytes : {64, 128, 256, 512}) {
    EXPECT_TRUE(ldmatrixConflictFree(Swizzle::forRowBytes(rowBytes), rowBytes, 64)) << rowBytes;
    EXPECT_FALSE(ldmatrixConflictFree(Swizzle{}, rowBytes, 64)) << "unswizzled rows of " << rowBytes << " conflict";
  }
}

// For every runtime position allowed by `chunks`, the displaced address computed by XOR/add equals
// the swizzle of the displaced element.
void expectComposes(int64_t rowBytes, int64_t dr, int64_t dc, uint8_t chunks) {
  Swizzle s = Swizzle::forRowBytes(rowBytes);
  auto d = displace(s, rowBytes, 2, dr, dc, chunks);
  ASSERT_TRUE(d) << rowBytes << " " << dr << " " << dc;
  int64_t cols = rowBytes / 2;
  for (int64_t r = 0; r < 32; ++r)
    for (int64_t c = 0; c + dc < cols; c += 8) {
      if (!((chunks >> ((c / 8) % 8)) & 1)) continue;
      int64_t off = s.apply(r * rowBytes + c * 2);
      EXPECT_EQ((off ^ d->xorBytes) + d->addBytes, s.apply((r + dr) * rowBytes + (c + dc) * 2))
          << "rowBytes " << rowBytes << " at (" << r << ", " << c << ") + (" << dr << ", " << dc << ")";
    }
}

TEST(Swizzle, DisplacementsCompose) {
  expectComposes(64, 16, 16, 0b00000011);    // A tile, bk = 32: k16 step, lanes at chunk 0 or 1
  expectComposes(128, 48, 32, 0b00000011);   // A tile, bk = 64
  expectComposes(256, 16, 16, 0b00010001);   // B row-major, bn = 128: warp column chunks 0 or 4
  expectComposes(256, 0, 64, 0b00000011);    // a displacement past the first line adds
  expectComposes(128, 8, 0, 0xff);           // rows only: any column
}

TEST(Swizzle, DisplacementsThatDoNotCompose) {
  std::string why;
  Swizzle s = Swizzle::forRowBytes(64);
  EXPECT_FALSE(displace(s, 64, 2, 8, 0, 0xff, &why));
  EXPECT_EQ(why, "row displacement 8 is not a multiple of the swizzle period (16 rows)");
  EXPECT_FALSE(displace(s, 64, 2, 0, 8, 0b11, &why));
  EXPECT_EQ(why, "column displacement 8 shares 16-byte chunk bits with the per-thread column");
  EXPECT_FALSE(displace(s, 64, 2, 0, 3, 0xff, &why));
  EXPECT_EQ(why, "column displacement 3 is not a whole number of 16-byte chunks");
  EXPECT_TRUE(displace(Swizzle{}, 96, 2, 3, 5));
  EXPECT_EQ(displace(Swizzle{}, 96, 2, 3, 5)->addBytes, 3 * 96 + 10);
}

}  // namespace
}  // namespace kiln
