#pragma once
// The reductions of one pass over a row (docs/rowwise-strategy.md, "Reductions"): each thread
// keeps one f32 partial per reduction, updated vector by vector; after the pass the row's threads
// combine them, within a warp by butterfly shuffles (every lane ends with the total) and, when a
// row spans several warps, through shared memory (each warp's total, then every thread combines
// them in warp order, so all threads agree bit for bit), and the results become the row values
// the next passes read.
//
// The online sum of exp(a - m) (a Plan's onlineMax) keeps its running sum relative to the
// running maximum of its max reduction: when a vector raises the maximum from m to m', the sum is
// rescaled by exp(m - m'); two threads' (m, s) combine as (max, s1 exp(m1 - max) + s2 exp(m2 - max)).
// A maximum of -inf stands for "nothing yet" (the exponent base is taken as 0 then, so no -inf -
// -inf appears); a whole row of -inf gives NaN, as the sum of exp(-inf - -inf) does.
#include <vector>

#include "schedule/rowwise/row_values.h"

namespace kiln::rowwise {

class PassReductions {
 public:
  // The reductions that `pass` of the context's plan accumulates, in program order.
  PassReductions(Context& cx, Values& vals, int pass);
  bool empty() const { return red_.empty(); }
  size_t size() const { return red_.size(); }

  // The partials before the first vector: each reduction's identity (0, -inf, +inf).
  std::vector<ir::Value*> init();
  // The partials after vector `ch` (skipped where ch is outside the row).
  std::vector<ir::Value*> update(const std::vector<ir::Value*>& acc, Chunk& ch);
  // Combines the partials across the row's threads and stores the results as row values.
  void finish(std::vector<ir::Value*> acc);

 private:
  // The combination of partials x and y (index i, y at `other`); the online sum needs its max's.
  std::vector<ir::Value*> combine(const std::vector<ir::Value*>& x, const std::vector<ir::Value*>& y);
  int partnerOf(size_t i) const;  // index in red_ of the online sum's max, or -1

  Context& cx_;
  Values& vals_;
  std::vector<const Reduction*> red_;
  std::vector<size_t> index_;  // each one's index in RowProgram::reductions
};

// The most partials one pass of either plan combines.
int64_t mostPartials(const RowProgram& rp);
// Shared memory the cross-warp combination needs (0 when rows fit in a warp): a row of slots per
// partial, a slot per warp of the block, rows padded to whole 128-byte lines (reduceSlots floats).
int64_t reduceSlots(const Geometry& g);
int64_t reduceSmemBytes(const RowProgram& rp, const Geometry& g);

}  // namespace kiln::rowwise
