#pragma once
// Register fragment layouts of mma.sync m16n8k16 (16-bit operands) and m16n8k32 (8-bit FP8
// operands), and the ldmatrix lane patterns that produce them.
//
// Hardware contract (PTX ISA, "Warp-level matrix multiply-accumulate instructions", section
// "Matrix fragments for mma.m16n8k16 with floating point type"). In a warp, lane l has
// groupID g = l / 4 and threadID_in_group t = l % 4.
//  * A (16x16, .row, 16-bit): four 32-bit registers a0..a3, each two consecutive k elements:
//      a0: (row g,     k 2t, 2t+1)    a1: (row g + 8, k 2t, 2t+1)
//      a2: (row g,     k 2t+8, +9)    a3: (row g + 8, k 2t+8, +9)
//  * B (16x8, .col, 16-bit): two registers b0, b1:
//      b0: (k 2t, 2t+1, col g)        b1: (k 2t+8, 2t+9, col g)
//  * C / D (16x8, f32): four registers c0..c3:
//      c0, c1: (row g, cols 2t, 2t+1)     c2, c3: (row g + 8, cols 2t, 2t+1)
//
// ldmatrix (PTX ISA, "Warp-level matrix load instruction: ldmatrix") loads 8x8 b16 matrices;
// without .trans, lane l receives row l / 4, elements 2(l % 4) and 2(l % 4) + 1 of each matrix;
// with .trans it receives the same of the transposed matrix. Matrix i's rows are addressed by lanes
// 8i .. 8i+7. Hence:
//  * A from a row-major [m][k] tile: x4 with matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7),
//    (rows 0-7, k 8-15), (rows 8-15, k 8-15) gives exactly a0..a3: lane quads [0,0] [8,0] [0,8] [8,8].
//  * B from a row-major [k][n] tile: .trans with matrices (k 0-7, n 0-7), (k 8-15, n 0-7) gives
//    b0, b1 of the n8 tile; a second n8 tile at n + 8 forms an x4: quads [0,0] [8,0] [0,8] [8,8]
//    in (k, n) storage coordinates.
//  * B from a K-major [n][k] tile: no .trans, matrices (n 0-7, k 0-7), (n 0-7, k 8-15) give b0, b1;
//    the next n8 tile is 8 storage rows down: quads [0,0] [0,8] [8,0] [8,8] in (n, k) coordinates.
//  * A from a column-major [k][m] tile: .trans turns each stored 8x8 block (k rows, m columns) into
//    the (m, k) block a0..a3 need, so x4 with matrices (m 0-7, k 0-7), (m 8-15, k 0-7), (m 0-7,
//    k 8-15), (m 8-15, k 8-15) has quads [0,0] [0,8] [8,0] [8,8] in (k, m) storage coordinates.
#include <array>
#include <cstdint>

namespace kiln::mma16816 {

// Accumulator element e (0..3) of lane l: its row and column within the 16x8 tile.
inline int accRow(int lane, int e) { return lane / 4 + (e >= 2 ? 8 : 0); }
inline int accCol(int lane, int e) { return 2 * (lane % 4) + (e & 1); }

// A register r (0..3), half h (0, 1): row and k of the element.
inline int aRow(int lane, int r) { return lane / 4 + (r % 2) * 8; }
inline int aK(int lane, int r, int h) { return 2 * (lane % 4) + h + (r / 2) * 8; }
// B register r (0..1), half h: k and column of the element.
inline int bK(int lane, int r, int h) { return 2 * (lane % 4) + h + r * 8; }
inline int bCol(int lane) { return lane / 4; }

// Lane quads (row, col offsets of the 8x8 matrix each lane group addresses) in storage
// coordinates, for the three operand layouts above: [r0, c0, r1, c1, r2, c2, r3, c3].
using Quads = std::array<int64_t, 8>;
constexpr Quads kQuadsA = {0, 0, 8, 0, 0, 8, 8, 8};
constexpr Quads kQuadsBRowMajor = {0, 0, 8, 0, 0, 8, 8, 8};
constexpr Quads kQuadsBKMajor = {0, 0, 0, 8, 8, 0, 8, 8};
constexpr Quads kQuadsAColMajor = {0, 0, 0, 8, 8, 0, 8, 8};

}  // namespace kiln::mma16816

// mma.sync m16n8k32 with .e4m3 / .e5m2 operands (PTX ISA, "Matrix fragments for mma.m16n8k32",
// the 8-bit floating point rows of its tables; needs sm_89+). With g = lane / 4, t = lane % 4:
//  * A (16x32, .row): four 32-bit registers of four consecutive k elements each (element 0 in the
//    low byte):
//      a0: (row g,     k 4t .. 4t+3)      a1: (row g + 8, k 4t .. 4t+3)
//      a2: (row g,     k 4t+16 .. +19)    a3: (row g + 8, k 4t+16 .. +19)
//  * B (32x8, .col): two registers: b0: (k 4t .. 4t+3, col g)   b1: (k 4t+16 .. +19, col g)
//  * C / D: the f32 layout of m16n8k16 above (mma16816::accRow / accCol).
// ldmatrix .b16 moves bytes in pairs: lane l receives row l / 4, bytes 4 (l % 4) .. 4 (l % 4) + 3 of
// each 8x16-byte matrix, i.e. four consecutive 8-bit elements of one row -- exactly one A or B
// register above when the rows are M (or N) and the 16 bytes are consecutive k. Hence, in element
// coordinates of 8-bit tiles (a 16-byte row segment is 16 elements):
//  * A from a row-major [m][k] tile: x4 with quads [0,0] [8,0] [0,16] [8,16] gives a0..a3;
//  * B from a K-major [n][k] tile: x2 with quads [0,0] [0,16] gives b0, b1 of one n8 tile; the next
//    n8 tile is 8 storage rows down, so an x4 has quads [0,0] [0,16] [8,0] [8,16].
// There is no 8-bit .trans (ldmatrix .trans transposes 16-bit elements), so B stored row-major
// [k][n] cannot be loaded this way: FP8 B must be K-major.
namespace kiln::mma16832 {

inline int aRow(int lane, int r) { return lane / 4 + (r % 2) * 8; }
inline int aK(int lane, int r, int byte) { return 4 * (lane % 4) + byte + (r / 2) * 16; }
inline int bK(int lane, int r, int byte) { return 4 * (lane % 4) + byte + r * 16; }
inline int bCol(int lane) { return lane / 4; }

using Quads = mma16816::Quads;
constexpr Quads kQuadsA = {0, 0, 8, 0, 0, 16, 8, 16};
constexpr Quads kQuadsBKMajor = {0, 0, 0, 16, 8, 0, 8, 16};

}  // namespace kiln::mma16832
