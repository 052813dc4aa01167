#pragma once
// The arith.* scalar ops (core_ops.def) on interpreter Scalars.
//  * Integer ops wrap at the type's width (two's complement); shifts by the width or more give 0;
//    divsi rounds toward zero; divui / remui read the bits as unsigned; division by zero is a user
//    error.
//  * arith.addf / arith.mulf follow the tile dialect's float rule: one f32 operation, rounded once
//    to a narrower type (Reference mode: double, unrounded).
//  * arith.cast: integer -> integer wraps (sign-extends or truncates); float -> integer rounds to
//    nearest even and saturates (NaN -> 0); -> float rounds to nearest even (Reference mode: the
//    identity for float targets).
#include <optional>
#include <vector>

#include "interp/runtime_values.h"

namespace kiln::interp {

// Evaluates the arith op `op` on `args`; nullopt after reporting a user error.
std::optional<Scalar> evalArith(const ir::Operation& op, const std::vector<Scalar>& args, RunContext& ctx);

// An integer wrapped to the width of `t` (i1: 0 or 1; i32: sign-extended low 32 bits).
int64_t wrapInt(int64_t v, ir::ScalarType t);

}  // namespace kiln::interp
