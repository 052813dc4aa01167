#pragma once
// A bf16 GEMM-with-bias signature and a valid set of arguments for it; each launch_args test
// breaks one rule and asserts the exact diagnostic.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kiln/runtime/launch_args.h"

namespace kiln::runtime::testing {

using ir::Extent;
using ir::ScalarType;

// C[M, N] = alpha * A[M, K] @ B[K, N] + bias[N]; K and N multiples of 8 (16-byte bf16 rows).
inline KernelSignature gemmSignature() {
  KernelSignature s;
  s.dims = {"M", "N", "K"};
  s.tensors = {
      {"A", ScalarType::BF16, {Extent::of("M"), Extent::of("K")}, {}, 16, false},
      {"B", ScalarType::BF16, {Extent::of("K"), Extent::of("N")}, {}, 16, false},
      {"bias", ScalarType::F32, {Extent::of("N")}, {}, 16, false},
      {"C", ScalarType::BF16, {Extent::of("M"), Extent::of("N")}, {}, 16, true},
  };
  s.scalars = {{"alpha", ScalarType::F32}};
  s.dimMultipleOf = {{"K", 8}, {"N", 8}};
  return s;
}

// M = 128, N = 64, K = 32, each tensor in its own range: A at 0x10000 (8 KB), B at 0x20000 (4 KB),
// bias at 0x30000 (256 B), C at 0x40000 (16 KB).
inline LaunchArgs gemmArgs() {
  LaunchArgs a;
  a.dims = {{"M", 128}, {"N", 64}, {"K", 32}};
  a.tensors = {
      {0x10000, ScalarType::BF16, {128, 32}, {}},
      {0x20000, ScalarType::BF16, {32, 64}, {}},
      {0x30000, ScalarType::F32, {64}, {}},
      {0x40000, ScalarType::BF16, {128, 64}, {}},
  };
  a.scalars = {1.0};
  return a;
}

inline std::vector<std::string> messages(const ir::DiagnosticEngine& diag) {
  std::vector<std::string> m;
  for (const auto& d : diag.diagnostics()) m.push_back(d.message);
  return m;
}

// Validates and returns the messages; a valid launch returns none.
inline std::vector<std::string> check(const KernelSignature& sig, const LaunchArgs& args) {
  ir::DiagnosticEngine diag;
  const bool ok = validateLaunch(sig, args, diag);
  EXPECT_EQ(ok, !diag.hadError());
  return messages(diag);
}

using Messages = std::vector<std::string>;

}  // namespace kiln::runtime::testing
