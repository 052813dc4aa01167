#pragma once
// The operands the gemv functional tests share (gemv_functional_test.cpp, unsplit;
// gemv_split_functional_test.cpp, split_k): the layouts' names and the strided, batched, shared-B
// case whose leading dimensions and batch strides are padded past the rows they step over.
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

// M = 3, N = 48, K = 80 in two batches; every leading dimension a multiple of 8 elements and 8 past
// its row (16-byte aligned rows with a gap), batches 8 elements past their matrices.
inline std::map<std::string, int64_t> stridedSharedBDims() {
  std::map<std::string, int64_t> d = layouts::dimsFor(3, 48, 80, 0, 2);
  for (const char* ld : {"lda", "ldb", "ldc"}) d[ld] = (d[ld] + 7) / 8 * 8 + 8;
  d["sa"] = d["lda"] * 80 + 8;
  d["sc"] = d["ldc"] * 3 + 8;
  return d;
}

}  // namespace kiln::gemv_cases
