// TEMPORARY stand-in for branch `numerics`' float_formats.cpp, so that the interpreter builds and
// is tested before that branch lands. Deleted by the merge of `numerics`. Generic and slow on
// purpose: round |f| at the quantum of its binade (clamped to the subnormal quantum), RNE.
#include <cmath>
#include <cstring>

#include "kiln/float_formats.h"

namespace kiln {
namespace {

struct Format {
  int expBits, manBits, bias;
  double maxNormal;
  bool hasInf;
};
constexpr Format kF16{5, 10, 15, 65504.0, true};
constexpr Format kE4M3{4, 3, 7, 448.0, false};
constexpr Format kE5M2{5, 2, 15, 57344.0, true};

uint32_t encode(float f, const Format& fmt, bool saturate) {
  uint32_t sign = std::signbit(f) ? 1u << (fmt.expBits + fmt.manBits) : 0;
  uint32_t expAll = (1u << fmt.expBits) - 1;
  // f16: the quiet NaN; FP8: the all-ones pattern (the numerics contract).
  uint32_t nan = fmt.manBits == 10 ? (expAll << fmt.manBits) | (1u << (fmt.manBits - 1))
                                   : (expAll << fmt.manBits) | ((1u << fmt.manBits) - 1);
  uint32_t maxCode = 0;
  {
    int e = std::ilogb(fmt.maxNormal);
    maxCode = (uint32_t(e + fmt.bias) << fmt.manBits) |
              uint32_t(std::ldexp(fmt.maxNormal, fmt.manBits - e) - std::ldexp(1.0, fmt.manBits));
  }
  uint32_t infCode = expAll << fmt.manBits;
  if (std::isnan(f)) return sign | nan;
  double a = std::fabs(double(f));
  auto overflow = [&] { return sign | (saturate ? maxCode : (fmt.hasInf ? infCode : nan)); };
  if (std::isinf(a)) return overflow();
  if (a == 0) return sign;
  int emin = 1 - fmt.bias;
  int e = std::max(std::ilogb(a), emin);
  double q = std::ldexp(1.0, e - fmt.manBits);
  double r = std::nearbyint(a / q) * q;
  if (r > fmt.maxNormal) return overflow();
  if (r == 0) return sign;
  if (r < std::ldexp(1.0, emin)) return sign | uint32_t(r / std::ldexp(1.0, emin - fmt.manBits));
  int re = std::ilogb(r);
  uint32_t man = uint32_t(std::ldexp(r, fmt.manBits - re) - std::ldexp(1.0, fmt.manBits));
  return sign | (uint32_t(re + fmt.bias) << fmt.manBits) | man;
}

float decode(uint32_t bits, const Format& fmt) {
  int total = fmt.expBits + fmt.manBits;
  bool neg = (bits >> total) & 1;
  uint32_t exp = (bits >> fmt.manBits) & ((1u << fmt.expBits) - 1);
  uint32_t man = bits & ((1u << fmt.manBits) - 1);
  uint32_t expAll = (1u << fmt.expBits) - 1;
  double v;
  if (exp == expAll && fmt.hasInf) v = man ? NAN : INFINITY;
  else if (exp == expAll && !fmt.hasInf && man == (1u << fmt.manBits) - 1) v = NAN;
  else if (exp == 0) v = std::ldexp(double(man), 1 - fmt.bias - fmt.manBits);
  else v = std::ldexp(double(man | (1u << fmt.manBits)), int(exp) - fmt.bias - fmt.manBits);
  return float(neg ? -v : v);
}

const Format& fp8(Fp8Format f) { return f == Fp8Format::E4M3 ? kE4M3 : kE5M2; }

}  // namespace

uint16_t floatToBf16Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f)) return uint16_t((u >> 16) | 0x40);
  return uint16_t((u + 0x7FFFu + ((u >> 16) & 1)) >> 16);
}
float bf16BitsToFloat(uint16_t b) {
  uint32_t u = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t floatToF16Bits(float f) { return uint16_t(encode(f, kF16, false)); }
float f16BitsToFloat(uint16_t h) { return decode(h, kF16); }
uint8_t floatToFp8Bits(float f, Fp8Format fmt, Fp8Overflow mode) {
  return uint8_t(encode(f, fp8(fmt), mode == Fp8Overflow::Saturate));
}
float fp8BitsToFloat(uint8_t b, Fp8Format fmt) { return decode(b, fp8(fmt)); }
float roundToBf16(float f) { return bf16BitsToFloat(floatToBf16Bits(f)); }
float roundToF16(float f) { return f16BitsToFloat(floatToF16Bits(f)); }
float roundToFp8(float f, Fp8Format fmt, Fp8Overflow mode) { return fp8BitsToFloat(floatToFp8Bits(f, fmt, mode), fmt); }

}  // namespace kiln
