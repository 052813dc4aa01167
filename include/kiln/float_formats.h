#pragma once
// Bit-exact conversions between float (IEEE 754 binary32) and the narrow formats Kiln computes in:
// bf16, f16 (IEEE 754 binary16), and the two OCP 8-bit formats E4M3 and E5M2.
//
// These functions are the numerical contract of the whole compiler: the interpreter, constant
// folding and the GPU tests' references all round through them, so they must give the same bits
// a store from a GPU register would.
//
// Formats (value of a finite encoding = (-1)^s * 2^(e - bias) * 1.m, or 2^(1 - bias) * 0.m when the
// exponent field e is 0):
//   format  exp  man  bias  max normal  min normal  min subnormal  inf           NaN
//   bf16     8    7   127   ~3.39e38    2^-126      2^-133         S.11111111.0  S.11111111.(m!=0)
//   f16      5   10    15   65504       2^-14       2^-24          S.11111.0     S.11111.(m!=0)
//   E5M2     5    2    15   57344       2^-14       2^-16          S.11111.00    S.11111.{01,10,11}
//   E4M3     4    3     7   448         2^-6        2^-9           none          S.1111.111 only
// E4M3 gives up infinities so the top exponent holds normal numbers; that is why its max is 448 and
// not 240 (OCP 8-bit Floating Point Specification (OFP8) v1.0, section 4).
//
// Rules, applied identically by every float -> narrow conversion below:
//  * Rounding is to nearest, ties to even (IEEE 754-2019 roundTiesToEven, section 4.3.1), applied
//    once, directly from the float's bits (never through an intermediate format, which could round
//    twice). Subnormal results are rounded exactly like normal ones; no format flushes to zero.
//  * The sign of zero is kept: -0.0f -> the format's -0, and a negative value too small for the
//    format rounds to -0.
//  * Overflow is decided after rounding, as IEEE 754 section 7.4 does: a value overflows when RNE
//    with an unbounded exponent would give something above max normal. So the threshold is
//    max normal + half an ulp, and a value exactly on it is a tie that goes to the even neighbour:
//      E4M3: 448 < |x| <= 464 rounds to 448 (464 is a tie between 448 = 1.110b*2^8, even, and the
//            would-be 480 = 1.111b*2^8, odd), so only |x| > 464 overflows.
//      E5M2: 57344 < |x| < 61440 rounds to 57344; 61440 is a tie between 57344 = 1.11b*2^15 (odd)
//            and 2^16 (even), so |x| >= 61440 overflows. Likewise f16 at 65520 and bf16 at
//            0x1.ffp127: their max normals have odd mantissas, so the tie overflows.
//  * bf16 and f16 overflow to +-inf and map +-inf to +-inf (IEEE 754).
//  * NaN in gives NaN out. For bf16/f16 the result is a quiet NaN with the input's sign and the top
//    bits of its payload (IEEE 754 section 6.2.3 asks conversions to keep the payload). For FP8 it
//    is the sign-preserving all-ones pattern S.1111.111 (E4M3) / S.11111.11 (E5M2): E4M3 has no
//    other NaN, and E5M2's two-bit payload keeps nothing useful.
//    NaN *bits* are the one place this differs from the GPU on purpose: on an H200, cvt.rn.{bf16,
//    f16}.f32 returns the canonical 0x7FFF, cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 returns 0x7F and
//    cvt.f32.f16 returns 0x7FFFFFFF, whatever the input NaN's sign and payload. Compare NaNs with
//    isnan, never bitwise.
//  * FP8 overflow and infinities depend on Fp8Overflow:
//      Saturate       what PTX `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32` does (PTX ISA, cvt, the
//                     .satfinite modifier): "if the absolute value of input (ignoring sign) is
//                     greater than MAX_NORM ..., the result is sign-preserved MAX_NORM". Infinity
//                     is greater than MAX_NORM, so +-inf -> +-max normal in BOTH formats (E5M2 too,
//                     although it has an infinity); NaN stays NaN.
//      NonSaturating  OCP OFP8 v1.0 non-saturating mode: out-of-range values and +-inf become
//                     NaN in E4M3 (it has no inf) and +-inf in E5M2.
//    These match CUDA's __nv_cvt_float_to_fp8 with __NV_SATFINITE / __NV_NOSAT respectively.
//
// Checked once, outside the unit tests, over all 2^32 floats: every non-NaN result equals the
// H200's cvt.rn.bf16.f32, cvt.rn.f16.f32 and cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32, and CUDA 13's
// __nv_cvt_float_to_fp8 in both modes; decoding equals cvt.f32.{f16,bf16} and
// cvt.rn.f16x2.{e4m3x2,e5m2x2} for every pattern.
//
// narrow -> float is exact (every narrow value is a float). A NaN decodes to a quiet float NaN with
// the same sign and payload, so decoding then re-encoding returns every non-NaN pattern unchanged
// and every quiet NaN pattern unchanged; a signalling bf16/f16 NaN comes back quieted.
#include <cstdint>

namespace kiln {

uint16_t floatToBf16Bits(float f);
float bf16BitsToFloat(uint16_t b);

uint16_t floatToF16Bits(float f);
float f16BitsToFloat(uint16_t h);

enum class Fp8Format { E4M3, E5M2 };
// Saturate: out-of-range finite values and infinities -> +-max normal (PTX cvt .satfinite).
// NonSaturating: out-of-range and infinities -> NaN for E4M3, +-inf for E5M2 (OCP non-saturating).
enum class Fp8Overflow { Saturate, NonSaturating };

uint8_t floatToFp8Bits(float f, Fp8Format fmt, Fp8Overflow mode = Fp8Overflow::Saturate);
float fp8BitsToFloat(uint8_t b, Fp8Format fmt);

// A double rounded to odd into a float: the float toward zero from v, with its last bit forced to 1
// when v is not exactly a float. Rounding to odd at p + 2 or more bits, then to nearest even at p
// bits, equals rounding to nearest even at p bits directly (Boldo & Melquiond, "Emulation of FMA
// and correctly rounded sums: proved algorithms using rounding to odd", 2008). f32 has 24 bits and
// a subnormal quantum of 2^-149; every narrow format has at most 11 bits and a quantum of at least
// 2^-133, so a double goes to a narrow format in one rounding through this and the conversions above.
float roundToOddFloat(double v);

// Round a float through a narrow format and back: the value a store then a load would give.
float roundToBf16(float f);
float roundToF16(float f);
float roundToFp8(float f, Fp8Format fmt, Fp8Overflow mode = Fp8Overflow::Saturate);

}  // namespace kiln
