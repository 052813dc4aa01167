// The kern simulator's scalar math and packing (contract in kern_sim_math.h).
#include "tests/unit/testing/kern_sim_math.h"

#include <bit>
#include <cmath>
#include <stdexcept>

#include "kiln/float_formats.h"
#include "tests/unit/testing/sim_values.h"

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

uint64_t simCast(const ir::Type& from, const ir::Type& to, uint64_t x) {
  using namespace simvalues;
  if (from.isScalar(ScalarType::F32) && to.isScalar(ScalarType::BF16)) return floatToBf16Bits(asF(x));
  if (from.isScalar(ScalarType::F32) && to.isScalar(ScalarType::F16)) return floatToF16Bits(asF(x));
  if (from.isScalar(ScalarType::BF16) && to.isScalar(ScalarType::F32)) return fromF(bf16BitsToFloat(uint16_t(x)));
  if (from.isScalar(ScalarType::F16) && to.isScalar(ScalarType::F32)) return fromF(f16BitsToFloat(uint16_t(x)));
  if (to.isScalar(ScalarType::F32) && (from.isScalar(ScalarType::I32) || from.isScalar(ScalarType::I64)))
    return fromF(float(asI(x, from)));
  if (from.isScalar(ScalarType::F32) || to.isScalar(ScalarType::F32))
    throw std::runtime_error("unsupported cast " + from.str() + " -> " + to.str());
  return fromI(asI(x, from), to);
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

// PTX ISA mma.m16n8k16 fragments (g = lane / 4, t = lane % 4), and mma.m16n8k32 with 8-bit
// floats ("Matrix fragments for mma.m16n8k32"): A register r holds row g + 8 (r % 2), k 4t + 16
// (r / 2) + byte; B register r holds k 4t + 16 r + byte, column g; bytes low to high.
std::array<std::array<uint64_t, 32>, 4> simMmaWarp(const ir::Operation& op,
                                                   const std::function<uint64_t(unsigned, int)>& regOf) {
  bool k32 = op.stringAttr("shape") == "m16n8k32";
  int K = k32 ? 32 : 16;
  auto decoder = [](ScalarType e) -> std::function<double(uint32_t)> {
    switch (e) {
      case ScalarType::BF16: return [](uint32_t b) { return double(bf16BitsToFloat(uint16_t(b))); };
      case ScalarType::F16: return [](uint32_t b) { return double(f16BitsToFloat(uint16_t(b))); };
      case ScalarType::F8E4M3: return [](uint32_t b) { return double(fp8BitsToFloat(uint8_t(b), Fp8Format::E4M3)); };
      case ScalarType::F8E5M2: return [](uint32_t b) { return double(fp8BitsToFloat(uint8_t(b), Fp8Format::E5M2)); };
      default: throw std::runtime_error("mma_sync of an unsupported element type");
    }
  };
  auto decA = decoder(op.operand(0)->type().elem()), decB = decoder(op.operand(4)->type().elem());
  std::array<std::array<uint64_t, 32>, 4> out{};
  double A[16][32], B[32][8], C[16][8];
  for (int l = 0; l < 32; ++l) {
    int g = l / 4, t = l % 4;
    auto reg = [&](unsigned operand) { return uint32_t(regOf(operand, l)); };
    if (k32) {
      for (int byte = 0; byte < 4; ++byte) {
        auto bv = [&](unsigned operand, const std::function<double(uint32_t)>& dec) {
          return dec((reg(operand) >> (8 * byte)) & 0xFF);
        };
        A[g][4 * t + byte] = bv(0, decA);
        A[g + 8][4 * t + byte] = bv(1, decA);
        A[g][4 * t + 16 + byte] = bv(2, decA);
        A[g + 8][4 * t + 16 + byte] = bv(3, decA);
        B[4 * t + byte][g] = bv(4, decB);
        B[4 * t + 16 + byte][g] = bv(5, decB);
      }
    } else {
      for (int h = 0; h < 2; ++h) {
        auto hv = [&](unsigned operand, const std::function<double(uint32_t)>& dec) {
          return dec((reg(operand) >> (16 * h)) & 0xFFFF);
        };
        A[g][2 * t + h] = hv(0, decA);
        A[g + 8][2 * t + h] = hv(1, decA);
        A[g][2 * t + 8 + h] = hv(2, decA);
        A[g + 8][2 * t + 8 + h] = hv(3, decA);
        B[2 * t + h][g] = hv(4, decB);
        B[2 * t + 8 + h][g] = hv(5, decB);
      }
    }
    for (int h = 0; h < 2; ++h) {
      C[g][2 * t + h] = std::bit_cast<float>(uint32_t(regOf(6 + h, l)));
      C[g + 8][2 * t + h] = std::bit_cast<float>(uint32_t(regOf(8 + h, l)));
    }
  }
  for (int l = 0; l < 32; ++l) {
    int g = l / 4, t = l % 4;
    for (int e = 0; e < 4; ++e) {
      int row = g + (e >= 2 ? 8 : 0), col = 2 * t + (e & 1);
      double acc = C[row][col];
      for (int k = 0; k < K; ++k) acc += A[row][k] * B[k][col];
      out[size_t(e)][size_t(l)] = std::bit_cast<uint32_t>(float(acc));
    }
  }
  return out;
}

}  // namespace kiln::testing
