#pragma once
// The scalar float math, casts and the packing of narrow elements that the kern simulator (kern_sim.h)
// runs, written from the op definitions (kern_ops.h, core_ops.def) rather than from the compiler's
// lowering: every function is the exact one (std::exp2 for ex2.approx, ...), so the simulator
// checks a kernel's algorithm -- which values meet where -- and the hardware's approximations are
// left to the GPU tests.
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kiln/ir/operation.h"

namespace kiln::testing {

// arith.addf ... arith.minf, arith.negf, arith.absf and the math.* functions on f32 (y unused for
// unary ones); throws for any other name.
float simFloatOp(const std::string& name, float x, float y);
// arith.cmpf {pred}: IEEE, false with a NaN operand except ne.
bool simCmpf(const std::string& pred, float x, float y);
// arith.cast of a value's bits from `from` to `to` (integers of any width, f32 to and from bf16 and
// f16, integers to f32); throws for another pair.
uint64_t simCast(const ir::Type& from, const ir::Type& to, uint64_t bits);
// kern.cvt_pack of `v` (1, 2 or 4 values) into `elem`: the word's or the element's bits.
uint64_t simPack(ir::ScalarType elem, const std::vector<float>& v);
// kern.cvt_unpack: the n elements (1, 2 or 4) of `bits`, lowest first.
std::vector<float> simUnpack(ir::ScalarType elem, uint64_t bits, size_t n);

// One warp's kern.mma_sync (m16n8k16 or m16n8k32), from the PTX ISA's fragment tables:
// reg(operand, lane) is a lane's register of operand 0..9 (A, B, then the f32 accumulators' bits);
// the result is each lane's four result registers (f32 bits), out[register][lane]. Products are
// summed in double and rounded to f32 once.
std::array<std::array<uint64_t, 32>, 4> simMmaWarp(const ir::Operation& op,
                                                   const std::function<uint64_t(unsigned, int)>& reg);

}  // namespace kiln::testing
