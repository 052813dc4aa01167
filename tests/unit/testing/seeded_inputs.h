#pragma once
// Seeded random inputs for the simulator's functional tests: uniform values in [-1, 1], and BF16,
// FP16 and e4m3 operands drawn from them kept away from zero (zeros run faster and hide bugs, as
// shared/BENCH.md says of the benchmarks' inputs). One generator per test problem, seeded from its
// shape, so a failure reproduces.
#include <cstdint>
#include <random>
#include <vector>

#include "kiln/float_formats.h"

namespace kiln::testing {

class SeededInputs {
 public:
  explicit SeededInputs(uint32_t seed) : rng_(seed) {}
  float uniform() { return dist_(rng_); }
  std::vector<uint16_t> bf16(size_t n) { return sixteenBit(n, floatToBf16Bits); }
  std::vector<uint16_t> f16(size_t n) { return sixteenBit(n, floatToF16Bits); }
  // e4m3 bytes of values in [-2, 2], at least 1/64 away from zero (e4m3's subnormals start at 2^-6).
  std::vector<uint8_t> e4m3(size_t n) {
    std::vector<uint8_t> v(n);
    for (auto& x : v) {
      float f = 2 * uniform();
      x = floatToFp8Bits(f + (f >= 0 ? 1.f / 64 : -1.f / 64), Fp8Format::E4M3);
    }
    return v;
  }

 private:
  std::vector<uint16_t> sixteenBit(size_t n, uint16_t (*round)(float)) {
    std::vector<uint16_t> v(n);
    for (auto& x : v) {
      float f = uniform();
      x = round(f + (uniform() > 0 ? 0.01f : -0.01f));
    }
    return v;
  }

  std::mt19937 rng_;
  std::uniform_real_distribution<float> dist_{-1.f, 1.f};
};

}  // namespace kiln::testing
