#pragma once
// Shared-memory swizzles for ldmatrix-fed tiles.
//
// Hardware contract. Shared memory has 32 banks of 4 bytes; a warp's access is conflict-free when
// the addresses of one phase fall in distinct banks. ldmatrix (PTX ISA, "Warp-level matrix load
// instruction: ldmatrix") reads each 8x8 b16 matrix as 8 rows of 16 bytes whose addresses come
// from 8 lanes; those 8 rows are one 128-byte phase, so the 8 row addresses must differ in bits
// [4, 7) (which 16-byte chunk of a 128-byte line they hit). A row-major tile whose rows are 64,
// 128 or more bytes long puts the same column of 8 consecutive rows in the same chunk: an 8-way
// conflict. cp.async writes (PTX ISA, "cp.async") 16-byte chunks and has the same constraint.
//
// The fix is an XOR swizzle on byte offsets within a stage, written Swizzle<B, M, S> as in the
// CUTLASS/CuTe literature:
//
//   phys(o) = o ^ (((o >> (M + S)) & (2^B - 1)) << M)
//
// With M = 4 (16-byte chunks) and B = 3 (8 chunks of a 128-byte line), the chunk index is XORed
// with 3 bits of the row: S is chosen so that bit M + S is the lowest bit that selects a new
// 128-byte line *and* belongs to the row index, i.e. 2^(M+S) = max(rowBytes, 128). For 64-byte
// rows two rows share a line and the XOR uses (row / 2) mod 8; the 8 rows an ldmatrix phase reads
// then still land in 8 distinct chunks (tested exhaustively in tests/unit/schedule/).
//
// Displacements. Kern ops address a tile as "a per-thread offset computed once, plus a
// compile-time displacement (rows, cols)". A displacement composes with the swizzle without
// recomputing it when:
//   * the row displacement is a multiple of the swizzle period, 2^(B+M+S) / rowBytes rows, so the
//     XOR mask bits do not change (it becomes a plain add), and
//   * the column displacement is a whole number of 16-byte chunks whose low 3 chunk bits are
//     disjoint from the low 3 chunk bits of every column the per-thread offset can hold (then
//     adding equals XORing, and XOR commutes with the swizzle). Chunk bits above the line
//     (>= 128 bytes) are not swizzled and add.
// displace() checks both, given the set of low chunk values the per-thread column can take (a bit
// set over 0..7; the kern verifier derives it from the op that made the offset). A column
// displacement may also move inside a 16-byte chunk (a piece of a chunk copied by a narrower
// cp.async, an element stored alone) when the per-thread column is known to start a chunk: its
// bytes 0..15 are then zero, so adding those of the displacement carries into nothing the swizzle
// touches.
#include <cstdint>
#include <optional>
#include <string>

#include "kiln/ir/attribute.h"

namespace kiln {

struct Swizzle {
  int bits = 0;   // B: 0 means no swizzle
  int base = 4;   // M: log2 of the unit that stays together (16-byte chunks)
  int shift = 3;  // S

  bool none() const { return bits == 0; }
  int64_t apply(int64_t offset) const {
    if (none()) return offset;
    int64_t mask = (int64_t(1) << bits) - 1;
    return offset ^ (((offset >> (base + shift)) & mask) << base);
  }
  // Bytes over which the pattern repeats: 2^(B+M+S).
  int64_t periodBytes() const { return none() ? 1 : int64_t(1) << (bits + base + shift); }

  // The conflict-free swizzle for a tile with rows of `rowBytes` (a power of two >= 16).
  static Swizzle forRowBytes(int64_t rowBytes);
  // As a type parameter: [B, M, S]; parse returns nullopt for anything else.
  ir::Attribute toAttr() const;
  static std::optional<Swizzle> fromAttr(const ir::Attribute& a);
  std::string str() const;  // "Swizzle<3,4,3>"
  bool operator==(const Swizzle&) const = default;
};

// A compile-time displacement resolved against a swizzled tile: the address of the displaced
// element is (offset ^ xorBytes) + addBytes.
struct Displacement {
  int64_t xorBytes = 0;
  int64_t addBytes = 0;
};

// Resolves a displacement of (rows, cols) elements in a tile with rows of rowBytes and elements of
// elemBytes, added to a per-thread position whose column's low 3 chunk bits (column / (16 /
// elemBytes) mod 8) are one of the values in `runtimeChunks` (bit v set: value v possible; 0xff:
// unknown). Returns nullopt (with a reason) when it does not compose with the swizzle.
std::optional<Displacement> displace(const Swizzle& s, int64_t rowBytes, int elemBytes, int64_t rows, int64_t cols,
                                     uint8_t runtimeChunks = 0xff, std::string* why = nullptr,
                                     bool runtimeChunkAligned = false);

// True when the 8 row addresses of every ldmatrix phase (8 consecutive rows, one 16-byte column
// chunk, rows starting at a multiple of 8) fall in 8 distinct 16-byte chunks of their lines.
bool ldmatrixConflictFree(const Swizzle& s, int64_t rowBytes, int64_t rows);

}  // namespace kiln
