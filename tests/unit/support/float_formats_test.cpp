// Tests for kiln/float_formats.h.
//
// Three kinds of evidence, each independent of how src/support/float_formats.cpp is written:
//   * hand-written tables of inputs and the exact FP8 bits the OCP spec / PTX ISA demand, built
//     around the places conversions go wrong (subnormal ties, the overflow threshold, inf, NaN);
//   * exhaustive decode -> encode round trips over every 8- and 16-bit pattern;
//   * float -> bf16 / f16 / FP8 against references computed another way: the well-known integer
//     bias trick for bf16, the compiler's _Float16 (libgcc soft-float) for f16, and a
//     double-arithmetic nearest-even rounder for all four, on millions of random and edge inputs.
#include "kiln/float_formats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace kiln {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr auto kSat = Fp8Overflow::Saturate;
constexpr auto kNonSat = Fp8Overflow::NonSaturating;

uint32_t bitsOf(float f) { return std::bit_cast<uint32_t>(f); }
float fromBits(uint32_t b) { return std::bit_cast<float>(b); }

// ---------------------------------------------------------------------------------------------
// FP8 value tables. Expected bits are written by hand from OCP OFP8 v1.0 (encodings) and the PTX
// ISA cvt .satfinite rule (saturating column).

struct Fp8Case {
  const char* what;
  float in;
  uint8_t saturate;
  uint8_t nonSaturating;
};

void checkTable(Fp8Format fmt, const std::vector<Fp8Case>& table) {
  for (const Fp8Case& c : table) {
    SCOPED_TRACE(testing::Message() << c.what << " (input " << std::hexfloat << c.in << ")");
    EXPECT_EQ(int{floatToFp8Bits(c.in, fmt, kSat)}, int{c.saturate});
    EXPECT_EQ(int{floatToFp8Bits(c.in, fmt, kNonSat)}, int{c.nonSaturating});
    EXPECT_EQ(int{floatToFp8Bits(c.in, fmt)}, int{c.saturate}) << "default mode is Saturate";
  }
}

TEST(Fp8E4M3, ValueTable) {
  checkTable(Fp8Format::E4M3, {
      {"+0", 0.0f, 0x00, 0x00},
      {"-0 keeps its sign", -0.0f, 0x80, 0x80},
      {"smallest subnormal 2^-9", 0x1p-9f, 0x01, 0x01},
      {"-smallest subnormal", -0x1p-9f, 0x81, 0x81},
      {"half the smallest subnormal: tie, to even 0", 0x1p-10f, 0x00, 0x00},
      {"negative half-min underflows to -0", -0x1p-10f, 0x80, 0x80},
      {"just above half the smallest subnormal", 0x1.000002p-10f, 0x01, 0x01},
      {"just below half the smallest subnormal", 0x1.fffffep-11f, 0x00, 0x00},
      {"1.5 * 2^-9: subnormal tie, to even 0x02", 0x1.8p-9f, 0x02, 0x02},
      {"2.5 * 2^-9: subnormal tie, to even 0x02", 0x1.4p-8f, 0x02, 0x02},
      {"largest subnormal 7 * 2^-9", 0x1.cp-7f, 0x07, 0x07},
      {"7.5 * 2^-9: tie rounds up into the smallest normal", 0x1.ep-7f, 0x08, 0x08},
      {"smallest normal 2^-6", 0x1p-6f, 0x08, 0x08},
      {"1.0", 1.0f, 0x38, 0x38},
      {"1.0625: normal tie, to even 1.0", 1.0625f, 0x38, 0x38},
      {"1.1875: normal tie, to even 1.25", 1.1875f, 0x3A, 0x3A},
      {"-3.0", -3.0f, 0xC4, 0xC4},
      {"256: exponent field 15 is a normal number in E4M3", 256.0f, 0x78, 0x78},
      {"max normal 448", 448.0f, 0x7E, 0x7E},
      {"-448", -448.0f, 0xFE, 0xFE},
      {"449 rounds down to 448", 449.0f, 0x7E, 0x7E},
      {"just below 464", 0x1.cffffep8f, 0x7E, 0x7E},
      {"464 = 448 + ulp/2: tie, to even 448 (not overflow)", 464.0f, 0x7E, 0x7E},
      {"-464", -464.0f, 0xFE, 0xFE},
      {"just above 464 overflows", 0x1.d00002p8f, 0x7E, 0x7F},
      {"-(just above 464) overflows", -0x1.d00002p8f, 0xFE, 0xFF},
      {"480 (would-be 1.111b * 2^8) overflows", 480.0f, 0x7E, 0x7F},
      {"1e30", 1e30f, 0x7E, 0x7F},
      {"FLT_MAX", std::numeric_limits<float>::max(), 0x7E, 0x7F},
      {"+inf: no inf in E4M3", kInf, 0x7E, 0x7F},
      {"-inf", -kInf, 0xFE, 0xFF},
      {"NaN", kNaN, 0x7F, 0x7F},
      {"-NaN keeps its sign", -kNaN, 0xFF, 0xFF},
      {"signalling NaN", fromBits(0x7F800001u), 0x7F, 0x7F},
      {"smallest float subnormal", fromBits(1), 0x00, 0x00},
      {"-smallest float subnormal", fromBits(0x80000001u), 0x80, 0x80},
  });
}

TEST(Fp8E5M2, ValueTable) {
  checkTable(Fp8Format::E5M2, {
      {"+0", 0.0f, 0x00, 0x00},
      {"-0 keeps its sign", -0.0f, 0x80, 0x80},
      {"smallest subnormal 2^-16", 0x1p-16f, 0x01, 0x01},
      {"half the smallest subnormal: tie, to even 0", 0x1p-17f, 0x00, 0x00},
      {"negative half-min underflows to -0", -0x1p-17f, 0x80, 0x80},
      {"just above half the smallest subnormal", 0x1.000002p-17f, 0x01, 0x01},
      {"1.5 * 2^-16: subnormal tie, to even 0x02", 0x1.8p-16f, 0x02, 0x02},
      {"2.5 * 2^-16: subnormal tie, to even 0x02", 0x1.4p-15f, 0x02, 0x02},
      {"largest subnormal 3 * 2^-16", 0x1.8p-15f, 0x03, 0x03},
      {"3.5 * 2^-16: tie rounds up into the smallest normal", 0x1.cp-15f, 0x04, 0x04},
      {"smallest normal 2^-14", 0x1p-14f, 0x04, 0x04},
      {"1.0", 1.0f, 0x3C, 0x3C},
      {"1.125: normal tie, to even 1.0", 1.125f, 0x3C, 0x3C},
      {"1.375: normal tie, to even 1.5", 1.375f, 0x3E, 0x3E},
      {"-3.0", -3.0f, 0xC2, 0xC2},
      {"max normal 57344", 57344.0f, 0x7B, 0x7B},
      {"-57344", -57344.0f, 0xFB, 0xFB},
      {"just below 61440 rounds down to max", 0x1.dffffep15f, 0x7B, 0x7B},
      {"61440 = max + ulp/2: tie, to even 2^16, so it overflows", 61440.0f, 0x7B, 0x7C},
      {"-61440 overflows", -61440.0f, 0xFB, 0xFC},
      {"65536", 65536.0f, 0x7B, 0x7C},
      {"FLT_MAX", std::numeric_limits<float>::max(), 0x7B, 0x7C},
      {"+inf: satfinite clamps even though E5M2 has inf", kInf, 0x7B, 0x7C},
      {"-inf", -kInf, 0xFB, 0xFC},
      {"NaN", kNaN, 0x7F, 0x7F},
      {"-NaN keeps its sign", -kNaN, 0xFF, 0xFF},
      {"smallest float subnormal", fromBits(1), 0x00, 0x00},
  });
}

// Decoding, written as the values the encodings stand for (OCP OFP8 v1.0 tables 1 and 2).
TEST(Fp8, DecodesKnownEncodings) {
  struct Case { uint8_t bits; Fp8Format fmt; float value; };
  const Case cases[] = {
      {0x01, Fp8Format::E4M3, 0x1p-9f},   {0x07, Fp8Format::E4M3, 0x1.cp-7f},
      {0x08, Fp8Format::E4M3, 0x1p-6f},   {0x38, Fp8Format::E4M3, 1.0f},
      {0x7E, Fp8Format::E4M3, 448.0f},    {0xFE, Fp8Format::E4M3, -448.0f},
      {0x7D, Fp8Format::E4M3, 416.0f},    {0x78, Fp8Format::E4M3, 256.0f},
      {0x01, Fp8Format::E5M2, 0x1p-16f},  {0x03, Fp8Format::E5M2, 0x1.8p-15f},
      {0x04, Fp8Format::E5M2, 0x1p-14f},  {0x3C, Fp8Format::E5M2, 1.0f},
      {0x7B, Fp8Format::E5M2, 57344.0f},  {0xFB, Fp8Format::E5M2, -57344.0f},
      {0x7C, Fp8Format::E5M2, kInf},      {0xFC, Fp8Format::E5M2, -kInf},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(fp8BitsToFloat(c.bits, c.fmt), c.value) << "bits 0x" << std::hex << int{c.bits};
  }
  for (Fp8Format fmt : {Fp8Format::E4M3, Fp8Format::E5M2}) {
    EXPECT_TRUE(std::signbit(fp8BitsToFloat(0x80, fmt)));
    EXPECT_EQ(fp8BitsToFloat(0x80, fmt), 0.0f);
    EXPECT_FALSE(std::signbit(fp8BitsToFloat(0x00, fmt)));
  }
  EXPECT_TRUE(std::isnan(fp8BitsToFloat(0x7F, Fp8Format::E4M3)));
  EXPECT_TRUE(std::isnan(fp8BitsToFloat(0xFF, Fp8Format::E4M3)));
  EXPECT_TRUE(std::signbit(fp8BitsToFloat(0xFF, Fp8Format::E4M3)));
  for (uint8_t b : {0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF}) {
    EXPECT_TRUE(std::isnan(fp8BitsToFloat(b, Fp8Format::E5M2))) << int{b};
  }
}

TEST(Fp8, RoundToFp8IsEncodeThenDecode) {
  EXPECT_EQ(roundToFp8(1.1f, Fp8Format::E4M3), 1.125f);
  EXPECT_EQ(roundToFp8(1000.0f, Fp8Format::E4M3), 448.0f);
  EXPECT_TRUE(std::isnan(roundToFp8(1000.0f, Fp8Format::E4M3, kNonSat)));
  EXPECT_EQ(roundToFp8(1e6f, Fp8Format::E5M2), 57344.0f);
  EXPECT_EQ(roundToFp8(1e6f, Fp8Format::E5M2, kNonSat), kInf);
  EXPECT_EQ(roundToFp8(-kInf, Fp8Format::E5M2, kNonSat), -kInf);
  EXPECT_TRUE(std::signbit(roundToFp8(-1e-10f, Fp8Format::E5M2)));
}

// ---------------------------------------------------------------------------------------------
// Exhaustive round trips.

bool isFp8NanPattern(uint8_t b, Fp8Format fmt) {
  if (fmt == Fp8Format::E4M3) return (b & 0x7F) == 0x7F;
  return (b & 0x7C) == 0x7C && (b & 0x03) != 0;
}

TEST(Fp8, EveryPatternRoundTrips) {
  for (Fp8Format fmt : {Fp8Format::E4M3, Fp8Format::E5M2}) {
    int nanPatterns = 0;
    for (int i = 0; i < 256; ++i) {
      uint8_t b = static_cast<uint8_t>(i);
      SCOPED_TRACE(testing::Message() << (fmt == Fp8Format::E4M3 ? "E4M3" : "E5M2") << " 0x"
                                      << std::hex << i);
      float v = fp8BitsToFloat(b, fmt);
      if (isFp8NanPattern(b, fmt)) {
        ++nanPatterns;
        EXPECT_TRUE(std::isnan(v));
        EXPECT_TRUE(isFp8NanPattern(floatToFp8Bits(v, fmt, kSat), fmt));
        EXPECT_TRUE(isFp8NanPattern(floatToFp8Bits(v, fmt, kNonSat), fmt));
        continue;
      }
      EXPECT_EQ(int{floatToFp8Bits(v, fmt, kNonSat)}, i);
      // Saturate maps E5M2's infinities to max normal, by design; everything else is unchanged.
      bool isInf = std::isinf(v);
      EXPECT_EQ(isInf, fmt == Fp8Format::E5M2 && (b & 0x7F) == 0x7C);
      int expectedSat = isInf ? (b & 0x80) | 0x7B : i;
      EXPECT_EQ(int{floatToFp8Bits(v, fmt, kSat)}, expectedSat);
    }
    EXPECT_EQ(nanPatterns, fmt == Fp8Format::E4M3 ? 2 : 6);
  }
}

// Positive encodings of an IEEE-style format, read as integers, must be ordered like their values;
// the encoder relies on it, so check the decoder honours it (strictly increasing up to max normal).
TEST(Fp8, PositiveEncodingsAreOrderedLikeValues) {
  for (auto [fmt, maxCode] : {std::pair{Fp8Format::E4M3, 0x7E}, std::pair{Fp8Format::E5M2, 0x7C}}) {
    for (int b = 1; b <= maxCode; ++b) {
      EXPECT_LT(fp8BitsToFloat(static_cast<uint8_t>(b - 1), fmt),
                fp8BitsToFloat(static_cast<uint8_t>(b), fmt)) << b;
    }
  }
}

// For 16-bit formats a NaN pattern may only change by gaining the quiet bit (bit 6 for bf16,
// bit 9 for f16); everything else must come back unchanged.
void checkSixteenBitRoundTrip(float (*decode)(uint16_t), uint16_t (*encode)(float), int manBits) {
  const uint32_t expMask = ((1u << (15 - manBits)) - 1) << manBits;
  const uint32_t manMask = (1u << manBits) - 1;
  const uint32_t quietBit = 1u << (manBits - 1);
  for (uint32_t i = 0; i < 65536; ++i) {
    uint16_t b = static_cast<uint16_t>(i);
    float v = decode(b);
    bool nanPattern = (i & expMask) == expMask && (i & manMask) != 0;
    EXPECT_EQ(std::isnan(v), nanPattern) << std::hex << i;
    EXPECT_EQ(std::signbit(v), (i & 0x8000) != 0) << std::hex << i;
    uint32_t expected = nanPattern ? (i | quietBit) : i;
    ASSERT_EQ(uint32_t{encode(v)}, expected) << "pattern 0x" << std::hex << i;
  }
}

TEST(Bf16, EveryPatternRoundTrips) { checkSixteenBitRoundTrip(bf16BitsToFloat, floatToBf16Bits, 7); }
TEST(F16, EveryPatternRoundTrips) { checkSixteenBitRoundTrip(f16BitsToFloat, floatToF16Bits, 10); }

// bf16 is the top half of a float, so decoding has an obvious independent definition.
TEST(Bf16, DecodeIsTheTopHalfOfAFloat) {
  for (uint32_t i = 0; i < 65536; ++i) {
    float v = bf16BitsToFloat(static_cast<uint16_t>(i));
    float ref = fromBits(i << 16);
    if (std::isnan(ref)) continue;  // NaNs are quieted; covered by the round trip
    ASSERT_EQ(bitsOf(v), bitsOf(ref)) << std::hex << i;
  }
}

TEST(F16, DecodeMatchesCompilerFloat16) {
  for (uint32_t i = 0; i < 65536; ++i) {
    uint16_t b = static_cast<uint16_t>(i);
    float ref = static_cast<float>(std::bit_cast<_Float16>(b));
    float v = f16BitsToFloat(b);
    if (std::isnan(ref)) {
      ASSERT_TRUE(std::isnan(v)) << std::hex << i;
      continue;
    }
    ASSERT_EQ(bitsOf(v), bitsOf(ref)) << std::hex << i;
  }
}

TEST(Float16Formats, NanAndInfinity) {
  EXPECT_EQ(floatToBf16Bits(kInf), 0x7F80);
  EXPECT_EQ(floatToBf16Bits(-kInf), 0xFF80);
  EXPECT_EQ(floatToF16Bits(kInf), 0x7C00);
  EXPECT_EQ(floatToF16Bits(-kInf), 0xFC00);
  EXPECT_EQ(floatToBf16Bits(kNaN), 0x7FC0);
  EXPECT_EQ(floatToBf16Bits(-kNaN), 0xFFC0);
  EXPECT_EQ(floatToF16Bits(kNaN), 0x7E00);
  EXPECT_EQ(floatToF16Bits(-kNaN), 0xFE00);
  // A signalling NaN whose payload sits only in the bits the narrowing drops must still be NaN.
  EXPECT_EQ(floatToBf16Bits(fromBits(0x7F800001u)), 0x7FC0);
  EXPECT_EQ(floatToF16Bits(fromBits(0xFF800001u)), 0xFE00);
  // Payload bits that fit are kept.
  EXPECT_EQ(floatToBf16Bits(fromBits(0x7FA50000u)), 0x7FE5);
  EXPECT_EQ(floatToF16Bits(fromBits(0x7F8AA000u)), 0x7E55);
  EXPECT_EQ(floatToF16Bits(65504.0f), 0x7BFF);
  EXPECT_EQ(floatToF16Bits(65519.996f), 0x7BFF);
  EXPECT_EQ(floatToF16Bits(65520.0f), 0x7C00) << "tie at max + ulp/2 goes to even: inf";
  EXPECT_EQ(floatToBf16Bits(-0.0f), 0x8000);
  EXPECT_EQ(floatToF16Bits(-0.0f), 0x8000);
  EXPECT_EQ(floatToF16Bits(0x1p-24f), 0x0001);
  EXPECT_EQ(floatToF16Bits(0x1p-25f), 0x0000) << "half the smallest subnormal ties to 0";
  EXPECT_EQ(floatToF16Bits(-0x1p-25f), 0x8000);
  EXPECT_EQ(floatToBf16Bits(fromBits(0x00008000u)), 0x0000) << "bf16 subnormal tie to even";
  EXPECT_EQ(floatToBf16Bits(fromBits(0x00018000u)), 0x0002) << "bf16 subnormal tie to even";
  EXPECT_EQ(roundToBf16(1.00390625f), 1.0f);        // 1 + 2^-8: tie, to even
  EXPECT_EQ(roundToBf16(1.01171875f), 1.015625f);   // 1 + 3 * 2^-8: tie, to even
  EXPECT_EQ(roundToF16(1.0f + 0x1p-11f), 1.0f);
  EXPECT_EQ(roundToF16(1.0f + 0x3p-11f), 1.0f + 0x1p-9f);
}


// ---------------------------------------------------------------------------------------------
// float -> narrow against independent references, on random and edge inputs.

// A narrow format as the double-arithmetic reference sees it.
struct RefFormat {
  int manBits;       // stored mantissa bits
  int minExp;        // exponent of the smallest normal
  double maxNormal;  // largest finite value
};
constexpr RefFormat kRefBf16{7, -126, 0x1.fep127};
constexpr RefFormat kRefF16{10, -14, 65504.0};
constexpr RefFormat kRefE4M3{3, -6, 448.0};
constexpr RefFormat kRefE5M2{2, -14, 57344.0};

// Round x (finite) to the format's precision, nearest-even, with no exponent ceiling: scale so the
// format's ulp at x is 1, let nearbyint round (ties to even in the default rounding mode), scale
// back. All steps are exact in double because x has 24 significant bits.
double referenceRound(float x, const RefFormat& f) {
  double a = std::fabs(static_cast<double>(x));
  if (a == 0.0) return x;
  int e = 0;
  std::frexp(a, &e);  // a = m * 2^e with m in [0.5, 1): x's exponent is e - 1
  int exp = std::max(e - 1, f.minExp);  // below the normal range the ulp stops shrinking
  double ulp = std::ldexp(1.0, exp - f.manBits);
  return std::copysign(std::nearbyint(a / ulp) * ulp, static_cast<double>(x));
}

// Random floats: uniform bit patterns (every exponent, inf and NaN included) plus values whose
// exponent lies in [lo, hi], where a narrow format has something to round.
std::vector<float> randomInputs(int lo, int hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> out;
  constexpr int kEach = 2'000'000;
  out.reserve(2 * kEach);
  for (int i = 0; i < kEach; ++i) out.push_back(fromBits(rng()));
  std::uniform_int_distribution<int> expDist(lo, hi);
  for (int i = 0; i < kEach; ++i) {
    uint32_t signAndMan = rng() & 0x807FFFFFu;
    uint32_t exp = static_cast<uint32_t>(expDist(rng) + 127);
    out.push_back(fromBits(signAndMan | (exp << 23)));
  }
  return out;
}

// The places rounding can go wrong: every representable value, the midpoint between each pair of
// neighbours (a tie), the floats just either side of each, and the same for the overflow
// threshold max + ulp/2. `positiveFinite` lists the format's values >= 0 in increasing order.
std::vector<float> edgeInputs(const std::vector<float>& positiveFinite) {
  std::vector<float> points;
  for (size_t i = 0; i < positiveFinite.size(); ++i) {
    float a = positiveFinite[i];
    // After max comes the value one ulp above it, in double: for bf16 it is 2^128, not a float.
    double b = i + 1 < positiveFinite.size() ? double{positiveFinite[i + 1]}
                                             : 2.0 * a - positiveFinite[i - 1];
    float mid = static_cast<float>((a + b) / 2);  // exact: a narrow value has few bits
    for (float p : {a, mid}) {
      for (float q : {p, std::nextafter(p, 0.0f), std::nextafter(p, kInf)}) {
        points.push_back(q);
        points.push_back(-q);
      }
    }
  }
  return points;
}

std::vector<float> positiveFiniteValues(int count, float (*decode)(uint32_t)) {
  std::vector<float> v;
  for (int i = 0; i < count; ++i) {
    float x = decode(static_cast<uint32_t>(i));
    if (std::isfinite(x)) v.push_back(x);
  }
  return v;
}

bool sameFloat(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return bitsOf(a) == bitsOf(b);  // also tells -0 from +0
}

// The well-known integer form of round-to-nearest-even onto the top 16 bits: add just under half
// an ulp, plus one more when the kept part is odd, and truncate. Carries run into the exponent and
// on to inf by themselves.
uint16_t bf16ByBiasTrick(float f) {
  uint32_t b = bitsOf(f);
  return static_cast<uint16_t>((b + 0x7FFFu + ((b >> 16) & 1u)) >> 16);
}

void checkBf16(float x) {
  uint16_t got = floatToBf16Bits(x);
  if (std::isnan(x)) {
    ASSERT_TRUE(std::isnan(bf16BitsToFloat(got))) << std::hexfloat << x;
    ASSERT_EQ(got >> 15, bitsOf(x) >> 31) << "NaN sign";
    return;
  }
  ASSERT_EQ(got, bf16ByBiasTrick(x)) << std::hexfloat << x;
  double ref = std::isinf(x) ? x : referenceRound(x, kRefBf16);
  if (std::fabs(ref) > kRefBf16.maxNormal) ref = std::copysign(kInf, ref);
  ASSERT_TRUE(sameFloat(roundToBf16(x), static_cast<float>(ref))) << std::hexfloat << x;
}

void checkF16(float x) {
  uint16_t got = floatToF16Bits(x);
  uint16_t compiler = std::bit_cast<uint16_t>(static_cast<_Float16>(x));
  if (std::isnan(x)) {
    ASSERT_TRUE(std::isnan(f16BitsToFloat(got))) << std::hexfloat << x;
    ASSERT_EQ(got >> 15, bitsOf(x) >> 31) << "NaN sign";
    return;
  }
  ASSERT_EQ(got, compiler) << std::hexfloat << x;
  double ref = std::isinf(x) ? x : referenceRound(x, kRefF16);
  if (std::fabs(ref) > kRefF16.maxNormal) ref = std::copysign(kInf, ref);
  ASSERT_TRUE(sameFloat(roundToF16(x), static_cast<float>(ref))) << std::hexfloat << x;
}

void checkFp8(float x, Fp8Format fmt, const RefFormat& rf) {
  for (Fp8Overflow mode : {kSat, kNonSat}) {
    double ref;
    if (std::isnan(x)) {
      ref = kNaN;
    } else {
      ref = std::isinf(x) ? x : referenceRound(x, rf);
      if (std::fabs(ref) > rf.maxNormal) {
        if (mode == kSat) ref = std::copysign(rf.maxNormal, ref);
        else ref = fmt == Fp8Format::E5M2 ? std::copysign(kInf, ref) : kNaN;
      }
    }
    float got = roundToFp8(x, fmt, mode);
    ASSERT_TRUE(sameFloat(got, static_cast<float>(ref)))
        << std::hexfloat << "input " << x << " got " << got << " want " << ref
        << (mode == kSat ? " (saturate)" : " (non-saturating)");
  }
}

TEST(Bf16, MatchesReferencesOnRandomAndEdgeInputs) {
  for (float x : randomInputs(-140, 127, 1)) checkBf16(x);
  for (float x : edgeInputs(positiveFiniteValues(0x8000, [](uint32_t b) {
         return bf16BitsToFloat(static_cast<uint16_t>(b)); })))
    checkBf16(x);
}

TEST(F16, MatchesReferencesOnRandomAndEdgeInputs) {
  for (float x : randomInputs(-30, 17, 2)) checkF16(x);
  for (float x : edgeInputs(positiveFiniteValues(0x8000, [](uint32_t b) {
         return f16BitsToFloat(static_cast<uint16_t>(b)); })))
    checkF16(x);
}

TEST(Fp8E4M3, MatchesReferenceOnRandomAndEdgeInputs) {
  auto decode = [](uint32_t b) { return fp8BitsToFloat(static_cast<uint8_t>(b), Fp8Format::E4M3); };
  for (float x : randomInputs(-12, 10, 3)) checkFp8(x, Fp8Format::E4M3, kRefE4M3);
  for (float x : edgeInputs(positiveFiniteValues(0x80, decode))) {
    checkFp8(x, Fp8Format::E4M3, kRefE4M3);
  }
}

TEST(Fp8E5M2, MatchesReferenceOnRandomAndEdgeInputs) {
  auto decode = [](uint32_t b) { return fp8BitsToFloat(static_cast<uint8_t>(b), Fp8Format::E5M2); };
  for (float x : randomInputs(-19, 17, 4)) checkFp8(x, Fp8Format::E5M2, kRefE5M2);
  for (float x : edgeInputs(positiveFiniteValues(0x80, decode))) {
    checkFp8(x, Fp8Format::E5M2, kRefE5M2);
  }
}

}  // namespace
}  // namespace kiln
