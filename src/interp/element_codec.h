#pragma once
// One element of a dtype: its bytes, its value as a double, and rounding a double to it.
//
// These are the only places where the interpreter changes a value's type, so that every rounding
// rule (round to nearest even, FP8 satfinite, integer saturation) is written once. The float
// encodings themselves come from kiln/float_formats.h.
#include <cstdint>

#include "kiln/ir/types.h"

namespace kiln::interp {

// `v` rounded once to `t`:
//  * f32: the nearest float, ties to even (plain double -> float conversion).
//  * bf16, f16, f8e4m3, f8e5m2: round to nearest even, directly from the double (no double
//    rounding through f32: see roundToOddF32 in the .cpp); bf16/f16 overflow to +-inf, FP8
//    saturates to +-max normal (inf too), NaN stays NaN.
//  * i1, i32, i64, index: round to nearest even, saturate to the type's range; NaN gives 0.
double roundToType(double v, ir::ScalarType t);

// An f32 result rounded to a float element type: the "compute in f32, round once" step of the
// tile dialect's elementwise semantics. `t` must be a float type.
double narrowF32(float v, ir::ScalarType t);

// Reads the element at `p` exactly. `p` points at elementBytes(t) little-endian bytes.
double loadElement(const uint8_t* p, ir::ScalarType t);
// Writes roundToType(v, t) at `p`.
void storeElement(uint8_t* p, ir::ScalarType t, double v);

}  // namespace kiln::interp
