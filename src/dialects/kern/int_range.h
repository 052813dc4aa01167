#pragma once
// Integer range analysis over kern IR: for an i32 value, an interval [lo, hi] that holds for every
// thread that computes it. Fail-closed: anything the analysis does not understand is the whole i32
// range, so a rewrite that needs "x >= 0" only happens where it is provable.
//
// What is known at the leaves:
//   arith.constant                   its value
//   kern.lane_id                     [0, 31]
//   kern.thread_id                   [0, threads - 1]           (the kernel's {threads})
//   kern.warp_id                     [0, threads / 32 - 1], and inside kern.role {warpgroups =
//                                    [f, c]} [4 f, 4 (f + c) - 1]: only those warps run the region
//   kern.tile_loop body arguments    [0, 2^31 - 1]: iteration counts, tile origins, batch indices,
//                                    K-step counts (kern_ops.h), all non-negative by construction
//   kern.grid_dim, kern.cluster_count [1, 2^31 - 1]; kern.cluster_id [0, 2^31 - 2]
//   kern.assume_range                [lo, hi]: the promise of the op that wrote it
//   scf.for induction variable       [lb.lo, ub.hi - 1] for a constant step > 0
// and interval arithmetic carries them through addi, subi, muli, divsi / remsi (by a constant),
// divui / remui (by a positive divisor), andi (with a non-negative constant), shli / shrui (by a
// constant), minsi, maxsi and select. A
// result that could leave the i32 range is the whole range (the hardware wraps; intervals do not).
#include <cstdint>
#include <unordered_map>

#include "kiln/ir/operation.h"

namespace kiln::kern {

struct IntRange {
  int64_t lo = INT32_MIN;
  int64_t hi = INT32_MAX;

  static IntRange full() { return {}; }
  static IntRange exactly(int64_t v) { return {v, v}; }
  bool nonNegative() const { return lo >= 0; }
  bool isFull() const { return lo == INT32_MIN && hi == INT32_MAX; }
  bool operator==(const IntRange&) const = default;
};

// Memoizes per value; valid while the IR it looked at is unchanged (a rewrite that keeps every
// value's meaning, such as replacing x / 4 by x >> 2 for x >= 0, keeps it valid).
class IntRangeAnalysis {
 public:
  IntRange of(const ir::Value* v);

 private:
  IntRange compute(const ir::Value* v);
  IntRange ofResult(const ir::Operation& op);
  IntRange ofArgument(const ir::Value* v);
  std::unordered_map<const ir::Value*, IntRange> memo_;
};

// The constant an i32/i64 value is defined as (arith.constant), if it is one.
bool constantInt(const ir::Value* v, int64_t& out);

}  // namespace kiln::kern
