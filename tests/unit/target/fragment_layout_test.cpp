// The ldmatrix lane patterns deliver exactly the mma.m16n8k16 and (8-bit) mma.m16n8k32 fragments
// (PTX ISA definitions, written out here independently of fragment_layout.h's helpers).
#include <gtest/gtest.h>

#include "target/fragment_layout.h"

namespace kiln {
namespace {

// A storage tile whose element (r, c) holds the value r * 1000 + c.
int tileValue(int r, int c) { return r * 1000 + c; }

// ldmatrix semantics (PTX ISA "ldmatrix"): matrix i's 8 rows are addressed by lanes 8i..8i+7;
// without .trans lane l receives, of each matrix, row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1;
// with .trans it receives row/column swapped. Returns [lane][matrix][half] storage values.
std::array<std::array<std::array<int, 2>, 4>, 32> ldmatrixX4(const mma16816::Quads& q, bool trans) {
  std::array<std::array<std::array<int, 2>, 4>, 32> out{};
  for (int lane = 0; lane < 32; ++lane)
    for (int m = 0; m < 4; ++m) {
      int r0 = int(q[2 * m]), c0 = int(q[2 * m + 1]);  // lanes 8m..8m+7 address rows r0.., column c0
      for (int h = 0; h < 2; ++h) {
        int row = lane / 4, col = 2 * (lane % 4) + h;
        out[lane][m][h] = trans ? tileValue(r0 + col, c0 + row) : tileValue(r0 + row, c0 + col);
      }
    }
  return out;
}

TEST(FragmentLayout, AFromRowMajorTile) {
  // Storage (m, k); the A fragment: a0 (g, 2t..), a1 (g+8, 2t..), a2 (g, 2t+8..), a3 (g+8, 2t+8..).
  auto got = ldmatrixX4(mma16816::kQuadsA, false);
  for (int lane = 0; lane < 32; ++lane) {
    int g = lane / 4, t = lane % 4;
    for (int h = 0; h < 2; ++h) {
      EXPECT_EQ(got[lane][0][h], tileValue(g, 2 * t + h));
      EXPECT_EQ(got[lane][1][h], tileValue(g + 8, 2 * t + h));
      EXPECT_EQ(got[lane][2][h], tileValue(g, 2 * t + 8 + h));
      EXPECT_EQ(got[lane][3][h], tileValue(g + 8, 2 * t + 8 + h));
      for (int r = 0; r < 4; ++r)
        EXPECT_EQ(got[lane][r][h], tileValue(mma16816::aRow(lane, r), mma16816::aK(lane, r, h)));
    }
  }
}

TEST(FragmentLayout, BFromRowMajorTileWithTrans) {
  // Storage (k, n); B fragment of n8 tile j: b0 (k 2t.., n g), b1 (k 2t+8.., n g); x4 = tiles j, j+1.
  auto got = ldmatrixX4(mma16816::kQuadsBRowMajor, true);
  for (int lane = 0; lane < 32; ++lane) {
    int g = lane / 4, t = lane % 4;
    for (int h = 0; h < 2; ++h)
      for (int j = 0; j < 2; ++j) {
        EXPECT_EQ(got[lane][2 * j + 0][h], tileValue(2 * t + h, 8 * j + g));
        EXPECT_EQ(got[lane][2 * j + 1][h], tileValue(2 * t + 8 + h, 8 * j + g));
        EXPECT_EQ(got[lane][2 * j][h], tileValue(mma16816::bK(lane, 0, h), 8 * j + mma16816::bCol(lane)));
      }
  }
}

TEST(FragmentLayout, BFromKMajorTile) {
  // Storage (n, k); no .trans.
  auto got = ldmatrixX4(mma16816::kQuadsBKMajor, false);
  for (int lane = 0; lane < 32; ++lane) {
    int g = lane / 4, t = lane % 4;
    for (int h = 0; h < 2; ++h)
      for (int j = 0; j < 2; ++j) {
        EXPECT_EQ(got[lane][2 * j + 0][h], tileValue(8 * j + g, 2 * t + h));
        EXPECT_EQ(got[lane][2 * j + 1][h], tileValue(8 * j + g, 2 * t + 8 + h));
      }
  }
}

// ldmatrix .x4 (no .trans) on a tile of bytes: the hardware moves 16-bit units, so lane l receives
// bytes 4 (l % 4) .. 4 (l % 4) + 3 of row l / 4 of each matrix, whose 8 rows of 16 bytes are
// addressed by lanes 8m..8m+7 at (rows r0.., byte column c0). Returns [lane][matrix][byte].
std::array<std::array<std::array<int, 4>, 4>, 32> ldmatrixX4Bytes(const mma16832::Quads& q) {
  std::array<std::array<std::array<int, 4>, 4>, 32> out{};
  for (int lane = 0; lane < 32; ++lane)
    for (int m = 0; m < 4; ++m)
      for (int byte = 0; byte < 4; ++byte)
        out[lane][m][byte] = tileValue(int(q[2 * m]) + lane / 4, int(q[2 * m + 1]) + 4 * (lane % 4) + byte);
  return out;
}

TEST(FragmentLayout, Fp8AFromRowMajorTile) {
  // PTX ISA m16n8k32, 8-bit A: a0 (g, 4t..4t+3), a1 (g+8, 4t..), a2 (g, 4t+16..), a3 (g+8, 4t+16..).
  auto got = ldmatrixX4Bytes(mma16832::kQuadsA);
  for (int lane = 0; lane < 32; ++lane) {
    int g = lane / 4, t = lane % 4;
    for (int byte = 0; byte < 4; ++byte) {
      EXPECT_EQ(got[lane][0][byte], tileValue(g, 4 * t + byte));
      EXPECT_EQ(got[lane][1][byte], tileValue(g + 8, 4 * t + byte));
      EXPECT_EQ(got[lane][2][byte], tileValue(g, 4 * t + 16 + byte));
      EXPECT_EQ(got[lane][3][byte], tileValue(g + 8, 4 * t + 16 + byte));
      for (int r = 0; r < 4; ++r)
        EXPECT_EQ(got[lane][r][byte], tileValue(mma16832::aRow(lane, r), mma16832::aK(lane, r, byte)));
    }
  }
}

TEST(FragmentLayout, Fp8BFromKMajorTile) {
  // Storage (n, k); 8-bit B of n8 tile j: b0 (k 4t..4t+3, n g), b1 (k 4t+16.., n g); x4 = tiles j, j+1.
  auto got = ldmatrixX4Bytes(mma16832::kQuadsBKMajor);
  for (int lane = 0; lane < 32; ++lane) {
    int g = lane / 4, t = lane % 4;
    for (int byte = 0; byte < 4; ++byte)
      for (int j = 0; j < 2; ++j) {
        EXPECT_EQ(got[lane][2 * j + 0][byte], tileValue(8 * j + g, 4 * t + byte));
        EXPECT_EQ(got[lane][2 * j + 1][byte], tileValue(8 * j + g, 4 * t + 16 + byte));
        for (int r = 0; r < 2; ++r)
          EXPECT_EQ(got[lane][2 * j + r][byte], tileValue(8 * j + mma16832::bCol(lane), mma16832::bK(lane, r, byte)));
      }
  }
}

TEST(FragmentLayout, Accumulator) {
  for (int lane = 0; lane < 32; ++lane) {
    EXPECT_EQ(mma16816::accRow(lane, 0), lane / 4);
    EXPECT_EQ(mma16816::accRow(lane, 3), lane / 4 + 8);
    EXPECT_EQ(mma16816::accCol(lane, 1), 2 * (lane % 4) + 1);
  }
}

}  // namespace
}  // namespace kiln
