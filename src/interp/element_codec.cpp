// Element encodings and roundings (contract in element_codec.h).
#include "interp/element_codec.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kiln/float_formats.h"
#include "kiln/ir/diagnostics.h"

namespace kiln::interp {
namespace {

using ir::ScalarType;

template <typename Int>
Int saturateToInt(double v) {
  if (std::isnan(v)) return 0;
  double r = std::nearbyint(v);  // the default rounding mode: to nearest, ties to even
  // Compare against the first double past the range: Int's max is not a double for 64 bits.
  constexpr double lo = static_cast<double>(std::numeric_limits<Int>::min());
  constexpr double hiExclusive = -lo;
  if (r < lo) return std::numeric_limits<Int>::min();
  if (r >= hiExclusive) return std::numeric_limits<Int>::max();
  return static_cast<Int>(r);
}

Fp8Format fp8Format(ScalarType t) { return t == ScalarType::F8E4M3 ? Fp8Format::E4M3 : Fp8Format::E5M2; }

// Every 8- and 16-bit pattern decoded once through float_formats.h, so that a load is a lookup:
// those conversions stay the one definition of the formats, and loads, which are most of a GEMM's
// interpretation time, stay cheap. Built on first use (about 131k conversions).
struct DecodeTables {
  std::vector<float> f16, bf16, e4m3, e5m2;
  DecodeTables() : f16(1 << 16), bf16(1 << 16), e4m3(1 << 8), e5m2(1 << 8) {
    for (uint32_t b = 0; b < (1u << 16); ++b) {
      f16[b] = f16BitsToFloat(static_cast<uint16_t>(b));
      bf16[b] = bf16BitsToFloat(static_cast<uint16_t>(b));
    }
    for (uint32_t b = 0; b < (1u << 8); ++b) {
      e4m3[b] = fp8BitsToFloat(static_cast<uint8_t>(b), Fp8Format::E4M3);
      e5m2[b] = fp8BitsToFloat(static_cast<uint8_t>(b), Fp8Format::E5M2);
    }
  }
};
const DecodeTables& decode() {
  static const DecodeTables tables;
  return tables;
}

template <typename T>
T readLE(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));  // hosts are little-endian (x86-64, aarch64)
  return v;
}
template <typename T>
void writeLE(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

}  // namespace

double loadElement(const uint8_t* p, ScalarType t) {
  switch (t) {
    case ScalarType::I1: return p[0] & 1;
    case ScalarType::I32: return readLE<int32_t>(p);
    case ScalarType::I64:
    case ScalarType::Index: return static_cast<double>(readLE<int64_t>(p));
    case ScalarType::F32: return readLE<float>(p);
    case ScalarType::F16: return decode().f16[readLE<uint16_t>(p)];
    case ScalarType::BF16: return decode().bf16[readLE<uint16_t>(p)];
    case ScalarType::F8E4M3: return decode().e4m3[p[0]];
    case ScalarType::F8E5M2: return decode().e5m2[p[0]];
  }
  KILN_ICE("loadElement: unknown scalar type");
}

void storeElement(uint8_t* p, ScalarType t, double v) {
  switch (t) {
    case ScalarType::I1: p[0] = saturateToInt<int64_t>(v) >= 1 ? 1 : 0; return;
    case ScalarType::I32: writeLE(p, saturateToInt<int32_t>(v)); return;
    case ScalarType::I64:
    case ScalarType::Index: writeLE(p, saturateToInt<int64_t>(v)); return;
    case ScalarType::F32: writeLE(p, static_cast<float>(v)); return;
    case ScalarType::F16: writeLE(p, floatToF16Bits(roundToOddFloat(v))); return;
    case ScalarType::BF16: writeLE(p, floatToBf16Bits(roundToOddFloat(v))); return;
    case ScalarType::F8E4M3:
    case ScalarType::F8E5M2: p[0] = floatToFp8Bits(roundToOddFloat(v), fp8Format(t), Fp8Overflow::Saturate); return;
  }
  KILN_ICE("storeElement: unknown scalar type");
}

double roundToType(double v, ScalarType t) {
  uint8_t buf[8] = {};
  storeElement(buf, t, v);
  return loadElement(buf, t);
}

double narrowF32(float v, ScalarType t) {
  switch (t) {
    case ScalarType::F32: return v;
    case ScalarType::F16: return roundToF16(v);
    case ScalarType::BF16: return roundToBf16(v);
    case ScalarType::F8E4M3:
    case ScalarType::F8E5M2: return roundToFp8(v, fp8Format(t), Fp8Overflow::Saturate);
    default: KILN_ICE("narrowF32: not a float type");
  }
}

}  // namespace kiln::interp
