#pragma once
// Shared-memory matrix descriptors of wgmma.mma_async for 128-byte-swizzled operands, as TMA with
// CU_TENSOR_MAP_SWIZZLE_128B writes them.
//
// Hardware contract (PTX ISA, "Asynchronous Warpgroup Level Matrix Shared Memory Layout", sections
// "Matrix Descriptor Format", "Leading Dimension Byte Offset", "Stride Dimension Byte Offset",
// "Canonical Layouts"):
//  * A descriptor is 64 bits: bits 0-13 the start address, 16-29 the leading dimension byte
//    offset (LBO), 32-45 the stride dimension byte offset (SBO), each encoded as (x & 0x3FFFF) >>
//    4; bits 49-51 the base offset; bits 62-63 the swizzle mode (1 = 128-byte swizzle).
//  * The 128B swizzle atom is 8 rows of 128 bytes (1024 bytes); inside it, the 16-byte chunk c of
//    row r is stored at chunk c ^ (r % 8). The pattern is taken from the shared-memory address, so
//    an atom starting on a 1024-byte boundary has base offset 0 (all Kiln stages do).
//    TMA's 128B swizzle writes exactly this (CUDA driver API, CUtensorMapSwizzle: the 16-byte
//    chunks of each 128-byte row are permuted by the row index modulo 8), so a TMA box whose rows
//    are 128 bytes lands in wgmma's canonical layout.
//  * K-major operand (A, and B stored [N][K]): rows are M (or N), each row holds 64 bf16/f16 of K.
//    Canonical layout Swizzle<3,4,3> o ((8,m),(T,2k)):((8T,SBO),(1,T)): SBO is the distance between
//    8-row groups = 1024 bytes; LBO is unused for swizzled K-major layouts ("assumed to be 1").
//    The k16 step kk of a 64-wide K tile starts 32 kk bytes into the row: the hardware applies the
//    swizzle to the full address, so advancing the start address stays inside the pattern.
//  * MN-major operand (B stored [K][N], wgmma imm-trans-b = 1): TMA boxes of 64 N x R K rows
//    (128-byte rows of N), box j at j R 128 bytes. Canonical layout Swizzle<3,4,3> o
//    ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO)): LBO is the distance between 64-element MN atoms = one
//    box = 128 R bytes, SBO the distance between 8-row K groups = 1024 bytes. The k16 step kk starts
//    at K row 16 kk (2048 kk bytes).
#include <cstdint>

namespace kiln::wgmma {

inline constexpr int64_t kSwizzleAtomBytes = 1024;
inline constexpr int64_t kRowBytes = 128;

// The descriptor bits that do not depend on the start address: LBO, SBO and the 128B swizzle mode.
constexpr uint64_t descriptorConstant(int64_t lbo, int64_t sbo) {
  return ((uint64_t(lbo) & 0x3FFFF) >> 4) << 16 | ((uint64_t(sbo) & 0x3FFFF) >> 4) << 32 | uint64_t(1) << 62;
}
// The full descriptor for a shared-memory byte address.
constexpr uint64_t descriptor(uint32_t smemAddress, int64_t lbo, int64_t sbo) {
  return descriptorConstant(lbo, sbo) | ((uint64_t(smemAddress) & 0x3FFFF) >> 4);
}

// LBO / SBO of the two operand layouts above (bytes). `boxRows`: K rows per MN-major TMA box.
inline constexpr int64_t kKMajorLbo = 16;  // unused by the hardware; encodes as 1
inline constexpr int64_t kKMajorSbo = kSwizzleAtomBytes;
constexpr int64_t mnMajorLbo(int64_t boxRows) { return boxRows * kRowBytes; }
inline constexpr int64_t kMnMajorSbo = kSwizzleAtomBytes;

}  // namespace kiln::wgmma
