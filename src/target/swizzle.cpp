// XOR swizzles and displacements (contract in swizzle.h).
#include "target/swizzle.h"

#include <fmt/format.h>

namespace kiln {

Swizzle Swizzle::forRowBytes(int64_t rowBytes) {
  // 2^(M+S) = max(rowBytes, 128), M = 4.
  int log = 0;
  while ((int64_t(1) << log) < rowBytes) ++log;
  if (log < 7) log = 7;
  return Swizzle{3, 4, log - 4};
}

ir::Attribute Swizzle::toAttr() const { return ir::Attribute::ints({bits, base, shift}); }

std::optional<Swizzle> Swizzle::fromAttr(const ir::Attribute& a) {
  auto v = a.asInts();
  if (!v || v->size() != 3) return std::nullopt;
  Swizzle s{int((*v)[0]), int((*v)[1]), int((*v)[2])};
  if (s.bits < 0 || s.bits > 3 || s.base != 4 || s.shift < s.bits || s.shift > 8) return std::nullopt;
  return s;
}

std::string Swizzle::str() const { return fmt::format("Swizzle<{},{},{}>", bits, base, shift); }

std::optional<Displacement> displace(const Swizzle& s, int64_t rowBytes, int elemBytes, int64_t rows, int64_t cols,
                                     uint8_t runtimeChunks, std::string* why, bool runtimeChunkAligned) {
  auto fail = [&](std::string m) -> std::optional<Displacement> {
    if (why) *why = std::move(m);
    return std::nullopt;
  };
  if (rows < 0 || cols < 0) return fail("a displacement must not be negative");
  int64_t colBytes = cols * elemBytes;
  if (colBytes >= rowBytes) return fail(fmt::format("column displacement {} leaves the {}-byte row", cols, rowBytes));
  if (s.none()) return Displacement{0, rows * rowBytes + colBytes};
  if (colBytes % 16 != 0 && !runtimeChunkAligned)
    return fail(fmt::format("column displacement {} is not a whole number of 16-byte chunks", cols));
  if ((rows * rowBytes) % s.periodBytes() != 0)
    return fail(fmt::format("row displacement {} is not a multiple of the swizzle period ({} rows)", rows,
                            s.periodBytes() / rowBytes > 0 ? s.periodBytes() / rowBytes : 1));
  int64_t lineMask = ((int64_t(1) << s.bits) - 1) << s.base;  // chunk bits inside a line
  unsigned low = unsigned((colBytes & lineMask) >> s.base);
  for (unsigned v = 0; v < 8; ++v)
    if ((runtimeChunks >> v & 1) && (v & low))
      return fail(fmt::format("column displacement {} shares 16-byte chunk bits with the per-thread column", cols));
  return Displacement{colBytes & lineMask, rows * rowBytes + (colBytes & ~lineMask)};
}

bool ldmatrixConflictFree(const Swizzle& s, int64_t rowBytes, int64_t rows) {
  for (int64_t r0 = 0; r0 + 8 <= rows; r0 += 8) {
    for (int64_t chunk = 0; chunk < rowBytes / 16; ++chunk) {
      unsigned seen = 0;
      for (int64_t r = r0; r < r0 + 8; ++r) {
        int64_t phys = s.apply(r * rowBytes + chunk * 16);
        unsigned slot = unsigned((phys % 128) / 16);
        if (seen & (1u << slot)) return false;
        seen |= 1u << slot;
      }
    }
  }
  return true;
}

}  // namespace kiln
