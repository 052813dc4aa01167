// Quotients by a divisor uniform over the row (contract and proof sketch in row_divide.h).
#include "schedule/rowwise/row_divide.h"

#include <cmath>

namespace kiln::rowwise {
using namespace ir;

namespace {

// The range of divisors and dividends the refined quotient takes: 2^-62 .. 2^62.
const double kLow = std::ldexp(1.0, -62);
const double kHigh = std::ldexp(1.0, 62);

// lo <= |v| <= hi (false for NaN).
Value* inRange(KernBuilder& b, Value* v) {
  Value* mag = b.fun("arith.absf", v);
  Value* low = b.f32(kLow);
  Value* aboveLow = b.op1("arith.cmpf", {mag, low}, types::i1(), {{"pred", "ge"}});
  Value* high = b.f32(kHigh);
  Value* belowHigh = b.op1("arith.cmpf", {mag, high}, types::i1(), {{"pred", "le"}});
  return b.andi(aboveLow, belowHigh);
}

}  // namespace

UniformDivisor prepareDivisor(KernBuilder& b, Value* d) {
  UniformDivisor u;
  u.d = d;
  u.neg = b.fun("arith.negf", d);
  Value* one = b.f32(1.0);
  u.recip = b.fbin("arith.divf", one, d);
  u.safe = inRange(b, d);
  return u;
}

Elems divideByUniform(KernBuilder& b, const Elems& x, const UniformDivisor& d) {
  Value* ok = d.safe;
  for (Value* xi : x) ok = b.andi(ok, inRange(b, xi));
  Operation* branch = b.create("scf.if", {ok}, std::vector<Type>(x.size(), types::f32()), {}, 2);
  for (unsigned arm = 0; arm < 2; ++arm) {
    InsertionGuard guard(b);
    b.setInsertionPointToEnd(branch->region(arm).addBlock());
    Elems q;
    for (Value* xi : x) {
      if (arm == 1) {
        q.push_back(b.fbin("arith.divf", xi, d.d));
        continue;
      }
      Value* q0 = b.fbin("arith.mulf", xi, d.recip);
      Value* e = b.op1("arith.fmaf", {d.neg, q0, xi}, types::f32());
      q.push_back(b.op1("arith.fmaf", {e, d.recip, q0}, types::f32()));
    }
    b.create("scf.yield", q, {});
  }
  Elems r;
  for (unsigned i = 0; i < branch->numResults(); ++i) r.push_back(branch->result(i));
  return r;
}

}  // namespace kiln::rowwise
