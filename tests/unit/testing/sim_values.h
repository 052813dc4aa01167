#pragma once
// How the CPU simulators of kern IR (kern_sim, ws_sim) hold a value per thread: 64 raw bits, read
// and written in the value's type (an i32 keeps its 32 bits, sign-extended when read; an f32 its
// bit pattern).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "kiln/ir/types.h"

namespace kiln::testing::simvalues {

inline float asF(uint64_t b) { return std::bit_cast<float>(uint32_t(b)); }
inline uint64_t fromF(float f) { return std::bit_cast<uint32_t>(f); }
inline int64_t asI(uint64_t b, const ir::Type& t) {
  return t.isScalar(ir::ScalarType::I32) ? int64_t(int32_t(uint32_t(b))) : int64_t(b);
}
inline uint64_t fromI(int64_t v, const ir::Type& t) {
  if (t.isScalar(ir::ScalarType::I32)) return uint32_t(int32_t(v));
  if (t.isScalar(ir::ScalarType::I1)) return uint64_t(v & 1);
  return uint64_t(v);
}
// arith.shrui: the operand's bits (32 of them for i32) shifted right with zeros in.
inline int64_t logicalShiftRight(int64_t x, int64_t y, const ir::Type& t) {
  if (t.isScalar(ir::ScalarType::I32)) return int64_t(uint32_t(x) >> y);
  return int64_t(uint64_t(x) >> y);
}

// arith.divui / arith.remui: the operands' bits (32 of them for i32) as unsigned; 0 for a zero
// divisor, as the simulators' signed division gives.
inline int64_t unsignedDivRem(int64_t x, int64_t y, const ir::Type& t, bool remainder) {
  uint64_t mask = t.isScalar(ir::ScalarType::I32) ? 0xffffffffu : ~uint64_t{0};
  uint64_t ux = uint64_t(x) & mask, uy = uint64_t(y) & mask;
  if (uy == 0) return 0;
  return int64_t(remainder ? ux % uy : ux / uy);
}

// arith.addi, subi, muli, divsi, remsi, divui, remui, minsi, maxsi, andi, ori, xori, shli and shrui
// on x and y read in type t (asI); the result, to be written back in t (fromI). A zero divisor
// gives 0.
inline int64_t simIntOp(const std::string& n, int64_t x, int64_t y, const ir::Type& t) {
  if (n == "arith.addi") return x + y;
  if (n == "arith.subi") return x - y;
  if (n == "arith.muli") return x * y;
  if (n == "arith.divsi") return y ? x / y : 0;
  if (n == "arith.remsi") return y ? x % y : 0;
  if (n == "arith.divui" || n == "arith.remui") return unsignedDivRem(x, y, t, n == "arith.remui");
  if (n == "arith.minsi") return std::min(x, y);
  if (n == "arith.maxsi") return std::max(x, y);
  if (n == "arith.andi") return x & y;
  if (n == "arith.ori") return x | y;
  if (n == "arith.xori") return x ^ y;
  if (n == "arith.shli") return x << y;
  if (n == "arith.shrui") return logicalShiftRight(x, y, t);
  throw std::runtime_error("the simulator does not run '" + n + "'");
}

// arith.cmpi {pred} on x and y read in their type; "ult" compares the bits unsigned.
inline bool simCmpi(const std::string& p, int64_t x, int64_t y) {
  return p == "eq" ? x == y : p == "ne" ? x != y : p == "slt" ? x < y : p == "sle" ? x <= y
       : p == "sgt" ? x > y : p == "sge" ? x >= y : uint64_t(x) < uint64_t(y);
}

}  // namespace kiln::testing::simvalues
