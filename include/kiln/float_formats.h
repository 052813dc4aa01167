#pragma once
// TEMPORARY copy of the API being written on branch `numerics` (include/kiln/float_formats.h there
// is the real one, with the full contract). The interp branch codes against it until numerics
// lands; the merge takes numerics' header and deletes src/interp/float_formats_stub.cpp.
#include <cstdint>

namespace kiln {

uint16_t floatToBf16Bits(float f);
float bf16BitsToFloat(uint16_t b);

uint16_t floatToF16Bits(float f);
float f16BitsToFloat(uint16_t h);

enum class Fp8Format { E4M3, E5M2 };
enum class Fp8Overflow { Saturate, NonSaturating };

uint8_t floatToFp8Bits(float f, Fp8Format fmt, Fp8Overflow mode = Fp8Overflow::Saturate);
float fp8BitsToFloat(uint8_t b, Fp8Format fmt);

float roundToBf16(float f);
float roundToF16(float f);
float roundToFp8(float f, Fp8Format fmt, Fp8Overflow mode = Fp8Overflow::Saturate);

}  // namespace kiln
