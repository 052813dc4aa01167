// The kern simulator's scalar math and packing (contract in kern_sim_math.h).
#include "tests/unit/testing/kern_sim_math.h"

#include <cmath>
#include <stdexcept>

#include "kiln/float_formats.h"

namespace kiln::testing {
using ir::ScalarType;

float simFloatOp(const std::string& n, float x, float y) {
  if (n == "arith.addf") return x + y;
  if (n == "arith.subf") return x - y;
  if (n == "arith.mulf") return x * y;
  if (n == "arith.divf") return x / y;
  if (n == "arith.maxf") return std::isnan(x) || std::isnan(y) ? NAN : std::max(x, y);
  if (n == "arith.minf") return std::isnan(x) || std::isnan(y) ? NAN : std::min(x, y);
  if (n == "arith.negf") return -x;
  if (n == "arith.absf") return std::fabs(x);
  if (n == "math.exp") return std::exp(x);
  if (n == "math.tanh") return std::tanh(x);
  if (n == "math.exp2") return std::exp2(x);
  if (n == "math.log2") return std::log2(x);
  if (n == "math.sqrt") return std::sqrt(x);
  if (n == "math.rsqrt") return 1.0f / std::sqrt(x);
  if (n == "math.erf") return std::erf(x);
  throw std::runtime_error("the simulator does not run '" + n + "'");
}

bool simCmpf(const std::string& p, float x, float y) {
  if (p == "eq") return x == y;
  if (p == "ne") return x != y;
  if (p == "lt") return x < y;
  if (p == "le") return x <= y;
  if (p == "gt") return x > y;
  return x >= y;
}

namespace {

unsigned bitsOf(ScalarType e) { return unsigned(ir::bitWidth(e)); }

uint32_t encode(ScalarType e, float v) {
  switch (e) {
    case ScalarType::BF16: return floatToBf16Bits(v);
    case ScalarType::F16: return floatToF16Bits(v);
    case ScalarType::F8E4M3: return floatToFp8Bits(v, Fp8Format::E4M3);
    case ScalarType::F8E5M2: return floatToFp8Bits(v, Fp8Format::E5M2);
    default: throw std::runtime_error("cvt_pack into " + std::string(ir::scalarName(e)));
  }
}

float decode(ScalarType e, uint32_t b) {
  switch (e) {
    case ScalarType::BF16: return bf16BitsToFloat(uint16_t(b));
    case ScalarType::F16: return f16BitsToFloat(uint16_t(b));
    case ScalarType::F8E4M3: return fp8BitsToFloat(uint8_t(b), Fp8Format::E4M3);
    case ScalarType::F8E5M2: return fp8BitsToFloat(uint8_t(b), Fp8Format::E5M2);
    default: throw std::runtime_error("cvt_unpack of " + std::string(ir::scalarName(e)));
  }
}

}  // namespace

uint64_t simPack(ScalarType elem, const std::vector<float>& v) {
  uint64_t r = 0;
  for (size_t i = 0; i < v.size(); ++i) r |= uint64_t(encode(elem, v[i])) << (bitsOf(elem) * i);
  return r;
}

std::vector<float> simUnpack(ScalarType elem, uint64_t bits, size_t n) {
  std::vector<float> r;
  uint64_t mask = (uint64_t(1) << bitsOf(elem)) - 1;
  for (size_t i = 0; i < n; ++i) r.push_back(decode(elem, uint32_t((bits >> (bitsOf(elem) * i)) & mask)));
  return r;
}

}  // namespace kiln::testing
