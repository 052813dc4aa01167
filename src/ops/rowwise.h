#pragma once
// The rowwise family: memory-bound programs (elementwise math, reductions along rows and their
// fusions; schedule/rowwise/row_program.h) on the rowwise strategy (DESIGN.md, "Families,
// variants, tuning"). Its variants are config lines (rowwise.cpp's table), one per way of sharing a
// row: from 4 threads a row (128 rows a block) to 1024 (a row a block), with 16-byte vectors or
// element accesses for any row length.
//
// What a variant can run (eligibility) is kept apart from how good it is expected to be
// (preference):
//  * eligible(): the row length a multiple of the vector (16 / the narrowest row element's bytes)
//    unless the variant accesses elements; the registers its vectors need (an estimate: 40 plus one
//    per element of every vector of every row tensor) within what a thread of its block may have.
//  * preference(): a documented heuristic, higher is better, the product of
//      reads     1 when the row fits on chip (C <= capacity = row_threads * vectors * V) or the
//                program takes one pass; else a streamed row is read once per pass, and the later
//                reads come from L2 when the rows in flight (SMs x resident blocks x rows per block,
//                resident blocks = blocks_per_sm or 2048 / block_threads) hold at most 3/4 of the
//                reference L2: 1 / (1 + 0.15 (passes - 1)), or from DRAM: 1 / (1 + 0.9 (passes - 1))
//      fill      C / (steps * capacity), steps = ceil(C / capacity): the vector slots doing work
//      parallel  min(1, R * row_threads / (SMs * 1024)): threads enough to keep the SMs busy
//      depth     1 when each thread has at least two vectors of the row in flight, else 0.85
//      access    0.5 for element accesses (a vector moves 16 bytes per instruction), else 1
//    Ties go to the variant that comes first in the table. Selection can be forced by name; the
//    selection says which variant, why, and whether it was forced or chosen by the heuristic.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"
#include "schedule/config.h"
#include "target/target.h"

namespace kiln::ops {

struct RowProblem {
  int64_t rows = 0, cols = 0;  // R and C (cols 1 for a program without a column dim)
  int elemBytes = 2;           // the narrowest element of the row tensors
  int passes = 1;              // passes over each row (RowProgram::passes)
  int rowTensors = 1;          // the [R, C] and [C] tensors it reads
};

// The problem a program is at `dims` (nullopt after rowwise's diagnostic for a program it cannot
// lower).
std::optional<RowProblem> rowProblemOf(const ir::Operation& program, const Target& t,
                                       const std::map<std::string, int64_t>& dims, ir::DiagnosticEngine& diag);

struct RowVariant {
  std::string name;  // "row_t128_b256_v4"
  Config config;

  bool eligible(const RowProblem& p, const Target& t, std::string* why = nullptr) const;
  double preference(const RowProblem& p, const Target& t) const;
  // Columns a row may have and stay on chip with this variant's vectors.
  int64_t capacity(const RowProblem& p) const;
};

const std::vector<RowVariant>& rowwiseVariants();

struct RowSelection {
  const RowVariant* variant = nullptr;
  std::string source;  // "forced" or "heuristic"
  double score = 0;
  // "row_t128_b256_v4 (heuristic, score 1.000): rows of 4096 fit on chip (4096), one read"
  std::string str(const RowProblem& p) const;
};

std::optional<RowSelection> selectRowwise(const RowProblem& p, const Target& t, ir::DiagnosticEngine& diag,
                                          std::string_view forced = {});

}  // namespace kiln::ops
