// Float <-> bf16 / f16 / FP8 conversions. The contract (rounding, overflow, NaN, inf) is written out
// in include/kiln/float_formats.h; this file says how it is met.
//
// Every float -> narrow conversion is split in two:
//   1. roundMagnitude() rounds |f| to the target's precision, nearest-even, as if the target's
//      exponent range had no top. Its result is the target encoding without the sign bit: for
//      in-range values exactly the bits to store; for values too big it is simply a larger integer.
//      Because encodings of same-signed IEEE-style numbers are ordered like their values, "rounded
//      to something above max normal" is then just "code > maxNormalCode" -- the overflow decision
//      happens after rounding, which is what IEEE 754 section 7.4 asks for.
//   2. One function per format family handles NaN, infinity and overflow, which is where the
//      formats (and the FP8 overflow modes) actually differ.
#include "kiln/float_formats.h"

#include <bit>
#include <cmath>

namespace kiln {
namespace {

constexpr uint32_t kFloatSign = 0x80000000u;
constexpr uint32_t kFloatExpMask = 0x7F800000u;
constexpr uint32_t kFloatManMask = 0x007FFFFFu;
constexpr int kFloatManBits = 23;
constexpr int kFloatBias = 127;

bool isNanBits(uint32_t bits) { return (bits & ~kFloatSign) > kFloatExpMask; }
bool isInfBits(uint32_t bits) { return (bits & ~kFloatSign) == kFloatExpMask; }

// v / 2^shift rounded to nearest, ties to even. v < 2^24 (a float significand).
uint32_t shiftRightRoundEven(uint32_t v, int shift) {
  if (shift == 0) return v;
  // v < 2^24 <= 2^(shift-1) here, so the quotient is below one half: round to 0. This also keeps
  // the shifts below defined.
  if (shift > 24) return 0;
  uint32_t q = v >> shift;
  uint32_t rem = v & ((1u << shift) - 1);
  uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1))) ++q;
  return q;
}

// The unsigned encoding of |f| in a format with `manBits` stored mantissa bits and exponent bias
// `bias`, rounded to nearest even, with no upper exponent limit. `absBits` is a finite, non-NaN
// float's bits without the sign.
//
// Why the addition below is right: a normal target value with exponent field E and mantissa m is
// encoded (E << manBits) | m == ((E - 1) << manBits) + (1 << manBits | m), i.e. the exponent part
// plus the significand including its leading 1. Rounding the significand may carry into the next
// power of two (1.111..1 -> 10.000..0); the addition then moves into the next exponent with a zero
// mantissa, which is exactly the right encoding. Subnormal targets (E == 0) are the significand
// shifted further right by how far the exponent lies below the minimum; a carry out of the top
// subnormal lands on the smallest normal for the same reason.
uint32_t roundMagnitude(uint32_t absBits, int manBits, int bias) {
  int floatExp = static_cast<int>(absBits >> kFloatManBits);
  uint32_t significand = absBits & kFloatManMask;
  if (floatExp == 0) {
    floatExp = 1;  // float subnormal: same scale as the smallest normal, no implicit 1
  } else {
    significand |= 1u << kFloatManBits;
  }
  int targetExp = floatExp - kFloatBias + bias;  // biased exponent field the value would have
  int shift = kFloatManBits - manBits;
  uint32_t exponentPart = 0;
  if (targetExp >= 1) {
    exponentPart = static_cast<uint32_t>(targetExp - 1) << manBits;
  } else {
    shift += 1 - targetExp;  // subnormal in the target: scale down to the target's 2^(1-bias)
  }
  return exponentPart + shiftRightRoundEven(significand, shift);
}

// IEEE-style binary formats with infinities (bf16, f16): the overflow result is the infinity code,
// which is also the code one ulp above max normal.
uint16_t floatToIeeeHalfWidth(float f, int manBits, int bias) {
  uint32_t bits = std::bit_cast<uint32_t>(f);
  uint16_t sign = static_cast<uint16_t>((bits & kFloatSign) >> 16);
  uint32_t absBits = bits & ~kFloatSign;
  uint32_t expField = (1u << (15 - manBits)) - 1;  // all-ones exponent of the narrow format
  uint32_t infCode = expField << manBits;
  if (isNanBits(bits)) {
    // Quiet bit = top mantissa bit; keep as much of the payload as fits (IEEE 754 6.2.3).
    uint32_t payload = (absBits & kFloatManMask) >> (kFloatManBits - manBits);
    uint32_t quiet = 1u << (manBits - 1);
    return static_cast<uint16_t>(sign | infCode | quiet | payload);
  }
  if (isInfBits(bits)) return static_cast<uint16_t>(sign | infCode);
  uint32_t code = roundMagnitude(absBits, manBits, bias);
  if (code >= infCode) code = infCode;  // rounded above max normal: overflow to inf
  return static_cast<uint16_t>(sign | code);
}

// Narrow IEEE-style bits -> float, exact. NaNs come back quiet, with sign and payload.
float ieeeNarrowBitsToFloat(uint32_t bits, int totalBits, int manBits, int bias) {
  int expBits = totalBits - 1 - manBits;
  uint32_t sign = (bits >> (totalBits - 1)) & 1;
  uint32_t expField = (bits >> manBits) & ((1u << expBits) - 1);
  uint32_t man = bits & ((1u << manBits) - 1);
  uint32_t outSign = sign << 31;
  if (expField == (1u << expBits) - 1) {
    if (man == 0) return std::bit_cast<float>(outSign | kFloatExpMask);
    uint32_t quiet = 1u << (kFloatManBits - 1);
    return std::bit_cast<float>(outSign | kFloatExpMask | quiet | (man << (kFloatManBits - manBits)));
  }
  // Finite: man * 2^(1 - bias - manBits) for subnormals, (2^manBits + man) * 2^(E - bias - manBits)
  // otherwise. Every such value is a float, so ldexp is exact.
  float magnitude = expField == 0
                        ? std::ldexp(static_cast<float>(man), 1 - bias - manBits)
                        : std::ldexp(static_cast<float>((1u << manBits) | man),
                                     static_cast<int>(expField) - bias - manBits);
  return sign ? -magnitude : magnitude;
}

struct Fp8Layout {
  int manBits;
  int bias;
  uint8_t maxNormalCode;  // without sign
  uint8_t nanCode;        // the NaN we produce, without sign
  bool hasInf;
};

constexpr Fp8Layout layoutOf(Fp8Format fmt) {
  // E4M3: 0x7E = 1.110b * 2^8 = 448; 0x7F is its only NaN (OCP OFP8 v1.0, table 1).
  // E5M2: 0x7B = 1.11b * 2^15 = 57344; 0x7C is inf, 0x7D..0x7F are NaN.
  return fmt == Fp8Format::E4M3 ? Fp8Layout{3, 7, 0x7E, 0x7F, false}
                                : Fp8Layout{2, 15, 0x7B, 0x7F, true};
}

}  // namespace

uint16_t floatToBf16Bits(float f) { return floatToIeeeHalfWidth(f, 7, 127); }
float bf16BitsToFloat(uint16_t b) { return ieeeNarrowBitsToFloat(b, 16, 7, 127); }

uint16_t floatToF16Bits(float f) { return floatToIeeeHalfWidth(f, 10, 15); }
float f16BitsToFloat(uint16_t h) { return ieeeNarrowBitsToFloat(h, 16, 10, 15); }

uint8_t floatToFp8Bits(float f, Fp8Format fmt, Fp8Overflow mode) {
  const Fp8Layout l = layoutOf(fmt);
  uint32_t bits = std::bit_cast<uint32_t>(f);
  uint8_t sign = static_cast<uint8_t>((bits & kFloatSign) >> 24);
  // What an out-of-range value (or an infinity) becomes in this mode; see the header.
  uint8_t overflowCode = mode == Fp8Overflow::Saturate ? l.maxNormalCode
                         : l.hasInf                    ? static_cast<uint8_t>(l.maxNormalCode + 1)
                                                       : l.nanCode;
  if (isNanBits(bits)) return sign | l.nanCode;
  if (isInfBits(bits)) return sign | overflowCode;
  uint32_t code = roundMagnitude(bits & ~kFloatSign, l.manBits, l.bias);
  if (code > l.maxNormalCode) return sign | overflowCode;
  return static_cast<uint8_t>(sign | code);
}

float fp8BitsToFloat(uint8_t b, Fp8Format fmt) {
  const Fp8Layout l = layoutOf(fmt);
  if (fmt == Fp8Format::E4M3) {
    // E4M3's all-ones exponent holds normal numbers except for S.1111.111, so it cannot go through
    // the IEEE-style decoder.
    if ((b & 0x7F) == l.nanCode) {
      return std::bit_cast<float>((uint32_t{b} >> 7 << 31) | kFloatExpMask | (1u << 22));
    }
    uint32_t expField = (b >> 3) & 0xF;
    uint32_t man = b & 0x7;
    float magnitude = expField == 0 ? std::ldexp(static_cast<float>(man), 1 - l.bias - 3)
                                    : std::ldexp(static_cast<float>(8 | man),
                                                 static_cast<int>(expField) - l.bias - 3);
    return (b & 0x80) ? -magnitude : magnitude;
  }
  return ieeeNarrowBitsToFloat(b, 8, l.manBits, l.bias);
}

float roundToBf16(float f) { return bf16BitsToFloat(floatToBf16Bits(f)); }
float roundToF16(float f) { return f16BitsToFloat(floatToF16Bits(f)); }
float roundToFp8(float f, Fp8Format fmt, Fp8Overflow mode) {
  return fp8BitsToFloat(floatToFp8Bits(f, fmt, mode), fmt);
}

float roundToOddFloat(double v) {
  float f = static_cast<float>(v);
  if (std::isnan(v) || static_cast<double>(f) == v) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);
  return std::bit_cast<float>(std::bit_cast<uint32_t>(f) | 1u);
}

}  // namespace kiln
