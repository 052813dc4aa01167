#pragma once
// Compares a kernel's output with its fp64 reference two ways, as the GPU tests' numerical checks
// do: the relative Frobenius error ||out - ref|| / ||ref|| over the finite outputs (how wrong the
// output is on the whole), and a bound on every element (so that a few wrong fragments of a large
// output, which move the Frobenius norm by almost nothing, still fail):
//
//   |out[i] - ref[i]| <= rel * |ref[i]| + absOfRms * rms(ref)
//
// The first term is the output type's rounding and the accumulation's (relative to the element);
// the second covers elements that cancel to near zero, scaled to the output's typical magnitude. A
// wrong element (garbage, a zero, another tile's value) is off by about rms(ref), far past a bound
// of a few percent of it. Non-finite outputs are counted apart (a poisoned, never written element
// shows up there).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <sstream>
#include <string>
#include <vector>

namespace kiln::testing {

struct OutputCheck {
  double relFrobenius = 0;
  size_t nonFinite = 0;
  size_t outOfBound = 0;  // finite elements past the per-element bound
  // The element furthest past its bound (in multiples of the bound), when outOfBound > 0.
  size_t worst = 0;
  double worstGot = 0, worstWant = 0, worstBound = 0;

  // "3 of 65536 elements past the per-element bound; the worst, element 1234: 0.5, expected 2.25
  // (bound 0.03)", or "" when every element is within it.
  std::string str(size_t elements) const {
    if (outOfBound == 0) return "";
    std::ostringstream s;
    s << outOfBound << " of " << elements << " elements past the per-element bound; the worst, element " << worst
      << ": " << worstGot << ", expected " << worstWant << " (bound " << worstBound << ")";
    return s.str();
  }
};

inline OutputCheck checkOutput(std::span<const double> out, std::span<const double> ref, double rel,
                               double absOfRms) {
  OutputCheck c;
  double num = 0, den = 0;
  for (double r : ref) den += r * r;
  const double rms = ref.empty() ? 0 : std::sqrt(den / double(ref.size()));
  double worstRatio = 0;
  for (size_t i = 0; i < out.size() && i < ref.size(); ++i) {
    if (!std::isfinite(out[i])) {
      ++c.nonFinite;
      continue;
    }
    double err = std::fabs(out[i] - ref[i]);
    num += err * err;
    double bound = rel * std::fabs(ref[i]) + absOfRms * rms;
    if (!(err <= bound)) {
      ++c.outOfBound;
      double ratio = bound > 0 ? err / bound : INFINITY;
      if (c.outOfBound == 1 || ratio > worstRatio) {
        worstRatio = ratio;
        c.worst = i;
        c.worstGot = out[i];
        c.worstWant = ref[i];
        c.worstBound = bound;
      }
    }
  }
  c.relFrobenius = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  return c;
}

// The same for outputs stored as 16-bit floats (bf16, f16), decoded by `decode`.
inline OutputCheck checkOutput(const std::vector<uint16_t>& out, std::span<const double> ref, double rel,
                               double absOfRms, float (*decode)(uint16_t)) {
  std::vector<double> wide(out.size());
  for (size_t i = 0; i < out.size(); ++i) wide[i] = decode(out[i]);
  return checkOutput(std::span<const double>(wide), ref, rel, absOfRms);
}

// The bounds the BF16/FP16-output GEMM checks use: the output's own rounding is 2^-9 of the
// element at most (bf16) and the f32 accumulation's is far smaller; four times that covers both
// with room, and the absolute part allows for cancellation. A wrong fragment is off by about
// rms(ref), 64 times the absolute part.
inline constexpr double kGemmRel = 1.0 / 128, kGemmAbsOfRms = 1.0 / 64;

}  // namespace kiln::testing
