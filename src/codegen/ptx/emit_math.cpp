// Emitters for the math.* functions, in f32. Where the GPU has a unit for a function, its
// approximation is used (PTX ISA, "Floating-Point Instructions"; maximum errors as the ISA states
// them):
//   math.exp    x log2(e) rounded, then ex2.approx.f32 (2 ulp over the full range; the rounding of
//               the product adds |x| 2^-24 relative)
//   math.exp2   ex2.approx.ftz.f32 (2 ulp; subnormal results flush to zero)
//   math.log2   lg2.approx.ftz.f32 (2^-22.6 absolute for x in [0.5, 2], 2^-22 relative elsewhere)
//   math.rsqrt  rsqrt.approx.ftz.f32 (2^-22.9 relative)
//   math.tanh   tanh.approx.f32 (2^-10.987 relative)
//   math.sqrt   sqrt.rn.f32: correctly rounded, as the interpreter's
//   math.erf    no unit: below |x| = 0.5 the series x (2/sqrt(pi)) (1 - x^2/3 + x^4/10 - ... + x^12/9360)
//               (truncation below 2^-31), above it Abramowitz & Stegun 7.1.26, 1 - t p(t) e^(-x^2)
//               with t = 1 / (1 + 0.3275911 |x|) (1.5e-7 absolute), the sign of x copied on
// The .ftz forms are the fast ones; a subnormal input or output (below 2^-126) is read or written
// as zero, which no value a row kernel reduces or stores depends on.
#include <cmath>
#include <fmt/format.h>

#include "codegen/ptx/emitter.h"

namespace kiln::ptx {
using namespace ir;

namespace {

// d = a * b + c, one rounding (fma.rn.f32); c and b are immediates.
void fmaImm(PtxBuilder& b, const Reg& d, const Reg& a, double m, double c) {
  b.inst(fmt::format("fma.rn.f32 {}, {}, {}, {}", d.str(), a.str(), f32Immediate(m), f32Immediate(c)));
}

void emitErf(PtxBuilder& b, const Reg& r, const Reg& x) {
  const double kTwoOverSqrtPi = 1.1283791670955126;
  Reg ax = b.reg(RegClass::F32), s = b.reg(RegClass::F32);
  b.inst(fmt::format("abs.f32 {}, {}", ax.str(), x.str()));
  b.inst(fmt::format("mul.rn.f32 {}, {}, {}", s.str(), x.str(), x.str()));
  // Series, Horner in s = x^2: 1 - s/3 + s^2/10 - s^3/42 + s^4/216 - s^5/1320 + s^6/9360.
  const double series[] = {1.0 / 9360, -1.0 / 1320, 1.0 / 216, -1.0 / 42, 1.0 / 10, -1.0 / 3, 1.0};
  Reg q = b.reg(RegClass::F32);
  b.inst(fmt::format("mov.f32 {}, {}", q.str(), f32Immediate(series[0])));
  for (size_t i = 1; i < std::size(series); ++i) {
    Reg n = b.reg(RegClass::F32);
    b.inst(fmt::format("fma.rn.f32 {}, {}, {}, {}", n.str(), q.str(), s.str(), f32Immediate(series[i])));
    q = n;
  }
  Reg xs = b.reg(RegClass::F32), small = b.reg(RegClass::F32);
  b.inst(fmt::format("mul.rn.f32 {}, {}, {}", xs.str(), x.str(), f32Immediate(kTwoOverSqrtPi)));
  b.inst(fmt::format("mul.rn.f32 {}, {}, {}", small.str(), xs.str(), q.str()));
  // Abramowitz & Stegun 7.1.26.
  Reg den = b.reg(RegClass::F32), t = b.reg(RegClass::F32);
  fmaImm(b, den, ax, 0.3275911, 1.0);
  b.inst(fmt::format("rcp.approx.ftz.f32 {}, {}", t.str(), den.str()));
  const double as[] = {1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592};
  Reg p = b.reg(RegClass::F32);
  b.inst(fmt::format("mov.f32 {}, {}", p.str(), f32Immediate(as[0])));
  for (size_t i = 1; i < std::size(as); ++i) {
    Reg n = b.reg(RegClass::F32);
    b.inst(fmt::format("fma.rn.f32 {}, {}, {}, {}", n.str(), p.str(), t.str(), f32Immediate(as[i])));
    p = n;
  }
  Reg pt = b.reg(RegClass::F32), arg = b.reg(RegClass::F32), e = b.reg(RegClass::F32);
  b.inst(fmt::format("mul.rn.f32 {}, {}, {}", pt.str(), p.str(), t.str()));
  b.inst(fmt::format("mul.rn.f32 {}, {}, {}", arg.str(), s.str(), f32Immediate(-1.4426950408889634)));
  b.inst(fmt::format("ex2.approx.ftz.f32 {}, {}", e.str(), arg.str()));
  Reg tail = b.reg(RegClass::F32), mag = b.reg(RegClass::F32), large = b.reg(RegClass::F32);
  b.inst(fmt::format("mul.rn.f32 {}, {}, {}", tail.str(), pt.str(), e.str()));
  b.inst(fmt::format("sub.rn.f32 {}, {}, {}", mag.str(), f32Immediate(1.0), tail.str()));
  b.inst(fmt::format("copysign.f32 {}, {}, {}", large.str(), x.str(), mag.str()));
  Reg isSmall = b.reg(RegClass::Pred);
  b.inst(fmt::format("setp.lt.f32 {}, {}, {}", isSmall.str(), ax.str(), f32Immediate(0.5)));
  b.inst(fmt::format("selp.f32 {}, {}, {}, {}", r.str(), small.str(), large.str(), isSmall.str()));
}

}  // namespace

bool emitMath(KernelEmitter& e, const Operation& op) {
  if (!op.result()->type().isScalar(ScalarType::F32)) return e.fail(op, "math functions are emitted in f32 only");
  Reg a = e.use(op.operand(0)), r = e.def(op.result());
  PtxBuilder& b = e.b();
  const std::string& n = op.name();
  if (n == "math.exp") {
    // e^x = 2^(x log2 e)
    Reg t = b.reg(RegClass::F32);
    b.inst(fmt::format("mul.rn.f32 {}, {}, {}", t.str(), a.str(), f32Immediate(1.4426950408889634)));
    b.inst(fmt::format("ex2.approx.f32 {}, {}", r.str(), t.str()));
  } else if (n == "math.tanh") {
    b.inst(fmt::format("tanh.approx.f32 {}, {}", r.str(), a.str()));
  } else if (n == "math.exp2") {
    b.inst(fmt::format("ex2.approx.ftz.f32 {}, {}", r.str(), a.str()));
  } else if (n == "math.log2") {
    b.inst(fmt::format("lg2.approx.ftz.f32 {}, {}", r.str(), a.str()));
  } else if (n == "math.sqrt") {
    b.inst(fmt::format("sqrt.rn.f32 {}, {}", r.str(), a.str()));
  } else if (n == "math.rsqrt") {
    b.inst(fmt::format("rsqrt.approx.ftz.f32 {}, {}", r.str(), a.str()));
  } else if (n == "math.erf") {
    emitErf(b, r, a);
  } else {
    return e.fail(op, "unknown math function");
  }
  return true;
}

}  // namespace kiln::ptx
