#pragma once
// The operands the gemv functional tests share (gemv_functional_test.cpp, unsplit;
// gemv_split_functional_test.cpp, split_k): the layouts' names and the strided, batched, shared-B
// case whose leading dimensions and batch strides are padded past the rows they step over.
#include <cstdint>
#include <map>
#include <string>

#include "tests/unit/schedule/gemm_layouts_program.h"

namespace kiln::gemv_cases {

// BLAS's name of a layout: A then B, "N" row-major, "T" column-major (B stored [N][K]).
inline std::string name(const layouts::Layout& l) { return std::string(l.aCol ? "T" : "N") + (l.bKMajor ? "T" : "N"); }

// A, B and C strided, two batches of A and C over one B (batch stride 0).
inline layouts::Layout stridedSharedB(bool aCol, bool bKMajor) {
  layouts::Layout l{aCol, bKMajor, true, true, true};
  l.batched = true;
  l.bShared = true;
  return l;
}

// M = 3 (or m), N = 48, K = 80 in two batches; every leading dimension a multiple of 8 elements and
// 8 past its row (16-byte aligned rows with a gap), batches 8 elements past their matrices.
inline std::map<std::string, int64_t> stridedSharedBDims(int64_t m = 3) {
  std::map<std::string, int64_t> d = layouts::dimsFor(m, 48, 80, 0, 2);
  for (const char* ld : {"lda", "ldb", "ldc"}) d[ld] = (d[ld] + 7) / 8 * 8 + 8;
  d["sa"] = d["lda"] * 80 + 8;
  d["sc"] = d["ldc"] * m + 8;
  return d;
}

// The config words for A's alignment: a column-major A loads along M (VM rows a load, gemv.cpp), as
// wide as align_a says A's rows, M long, are aligned, so a config for an M that is not a multiple
// of 8 states it (" align_a=2" at an odd M, as the family's configFor does); nothing for a
// row-major A.
inline std::string alignAFor(bool aCol, int64_t m) {
  int a = 16;
  while (a > 2 && (2 * m) % a) a /= 2;
  return aCol && a < 16 ? " align_a=" + std::to_string(a) : "";
}

}  // namespace kiln::gemv_cases
