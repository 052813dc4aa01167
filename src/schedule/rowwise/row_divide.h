#pragma once
// Quotients by a divisor uniform over the row (a row value such as softmax's sum, or a scalar):
// the correctly rounded x / d that div.rn.f32 gives, from one reciprocal per row and a multiply and
// two FMAs per element, instead of div.rn's reciprocal unit, two refinements and range check per
// element (about 10 SASS instructions; docs/rowwise-strategy.md, "Numerics").
//
//   before (per element)             after
//                                    per row (d):   r = div.rn(1, d)            RN(1/d), exact
//                                                   nd = -d
//                                                   safe = 2^-62 <= |d| <= 2^62
//   q_i = div.rn(x_i, d)             per vector:    ok = safe && every 2^-62 <= |x_i| <= 2^62
//                                                   scf.if (ok)  q0 = x_i * r                 (mul.rn)
//                                                                e  = fma(nd, q0, x_i)        (exact)
//                                                                q_i = fma(e, r, q0)          (RN(x_i / d))
//                                                   else         q_i = div.rn(x_i, d)
//
// Why it is exact. With r = RN(1/d), q0 = RN(x r) is within a few ulp of x / d, its residual
// x - d q0 is exactly representable (the FMA computes it with no rounding), and q0 + (x - d q0) r
// rounded once is RN(x / d): Markstein's correction (IBM J. Res. Dev. 34(1), 1990; Muller et al.,
// "Handbook of Floating-Point Arithmetic", division with an FMA). In the guarded ranges every
// intermediate (r, q0, the residual, q) is a normal number, so the computation is that of the
// significands scaled by a power of two, and its correctness is a property of the 2^23 x 2^23
// significand pairs: tests/unit/schedule/rowwise/row_divide_test.cpp checks every x significand
// against several thousand divisors, the worst-placed ones (significands near 2) among them, and
// runs the emitted sequence in the kern simulator on the edge cases.
//
// What the guards send to the exact path: a divisor that is zero, subnormal, infinite, NaN or
// outside [2^-62, 2^62] (the whole row), and elements that are zero, subnormal, infinite, NaN or
// outside the same range (their vector: V elements). With both in range, |x / d| lies in
// [2^-124, 2^124], far from underflow and overflow. Zeros take the exact path because the
// sequence gives -0 / d as +0; a row with many exact zeros runs at about the speed of div.rn.
#include "schedule/rowwise/row_context.h"

namespace kiln::rowwise {

// The per-row (or per-kernel, for a scalar) part (UniformDivisor, row_context.h), emitted where
// `d` is defined.
UniformDivisor prepareDivisor(KernBuilder& b, ir::Value* d);

// x_i / d for every element of a vector, each exactly div.rn.f32's.
Elems divideByUniform(KernBuilder& b, const Elems& x, const UniformDivisor& d);

}  // namespace kiln::rowwise
