// Integer range analysis over kern IR (contract in int_range.h).
#include "dialects/kern/int_range.h"

#include <algorithm>
#include <initializer_list>

#include "kiln/ir/types.h"

namespace kiln::kern {
using namespace ir;

namespace {

bool isI32(const Value* v) { return v->type().isScalar(ScalarType::I32); }

// [lo, hi] when it fits i32, else the whole range.
IntRange clamp(int64_t lo, int64_t hi) {
  if (lo < INT32_MIN || hi > INT32_MAX || lo > hi) return IntRange::full();
  return {lo, hi};
}

IntRange hull(std::initializer_list<int64_t> xs) {
  return clamp(*std::min_element(xs.begin(), xs.end()), *std::max_element(xs.begin(), xs.end()));
}

// Signed division and remainder by a constant c != 0, rounding toward zero (PTX div.s32 / rem.s32).
IntRange divide(IntRange x, int64_t c) { return hull({x.lo / c, x.hi / c}); }

IntRange remainder(IntRange x, int64_t c) {
  int64_t m = c < 0 ? -c : c;
  if (x.nonNegative()) return x.hi < m ? x : IntRange{0, m - 1};
  if (x.hi <= 0) return x.lo > -m ? x : IntRange{-(m - 1), 0};
  return {-(m - 1), m - 1};
}

// The region of `block` belongs to a kern.role: the warps that run it.
const Operation* enclosingRole(const Block* block) {
  for (const Operation* op = block ? block->parentOp() : nullptr; op; op = op->parentBlock() ? op->parentBlock()->parentOp() : nullptr)
    if (op->is("kern.role")) return op;
  return nullptr;
}

const Operation* enclosingKernel(const Block* block) {
  for (const Operation* op = block ? block->parentOp() : nullptr; op; op = op->parentBlock() ? op->parentBlock()->parentOp() : nullptr)
    if (op->is("kern.kernel")) return op;
  return nullptr;
}

}  // namespace

bool constantInt(const Value* v, int64_t& out) {
  const Operation* d = v->definingOp();
  if (!d || !d->is("arith.constant")) return false;
  const Attribute* a = d->attr("value");
  if (!a || !a->isInt()) return false;
  out = a->asInt();
  return true;
}

IntRange IntRangeAnalysis::of(const Value* v) {
  if (!v || !isI32(v)) return IntRange::full();
  auto it = memo_.find(v);
  if (it != memo_.end()) return it->second;
  // Seed with the whole range first, so a cycle through loop-carried values (which the leaves
  // above never follow) could only ever see the safe answer.
  memo_[v] = IntRange::full();
  IntRange r = compute(v);
  memo_[v] = r;
  return r;
}

IntRange IntRangeAnalysis::compute(const Value* v) {
  if (const Operation* d = v->definingOp()) return ofResult(*d);
  return ofArgument(v);
}

IntRange IntRangeAnalysis::ofArgument(const Value* v) {
  const Block* block = v->ownerBlock();
  const Operation* owner = block ? block->parentOp() : nullptr;
  if (!owner) return IntRange::full();
  if (owner->is("kern.tile_loop")) return {0, INT32_MAX};
  if (owner->is("scf.for") && v->index() == 0 && owner->numOperands() >= 3) {
    int64_t step = 0;
    if (!constantInt(owner->operand(2), step) || step <= 0) return IntRange::full();
    IntRange lb = of(owner->operand(0)), ub = of(owner->operand(1));
    if (ub.hi - 1 < lb.lo) return IntRange::full();  // no iteration: nothing to say, say nothing
    return clamp(lb.lo, ub.hi - 1);
  }
  return IntRange::full();
}

IntRange IntRangeAnalysis::ofResult(const Operation& op) {
  const std::string& n = op.name();
  int64_t c = 0;
  if (n == "arith.constant") return constantInt(op.result(), c) ? clamp(c, c) : IntRange::full();
  if (n == "kern.lane_id") return {0, 31};
  if (n == "kern.grid_dim" || n == "kern.cluster_count") return {1, INT32_MAX};
  if (n == "kern.cluster_id") return {0, INT32_MAX - 1};
  if (n == "kern.assume_range") return clamp(op.intAttr("lo"), op.intAttr("hi"));
  if (n == "kern.thread_id" || n == "kern.warp_id") {
    const Operation* kernel = enclosingKernel(op.parentBlock());
    int64_t threads = kernel ? kernel->intAttr("threads", 0) : 0;
    if (threads <= 0) return IntRange::full();
    if (n == "kern.thread_id") return {0, threads - 1};
    IntRange warps{0, threads / 32 - 1};
    if (const Operation* role = enclosingRole(op.parentBlock())) {
      auto wg = role->intsAttr("warpgroups");
      if (wg.size() == 2) warps = {std::max<int64_t>(warps.lo, 4 * wg[0]), std::min<int64_t>(warps.hi, 4 * (wg[0] + wg[1]) - 1)};
      if (warps.lo > warps.hi) return IntRange::full();
    }
    return warps;
  }
  if (op.numOperands() != 2 || op.numResults() != 1 || !isI32(op.result())) {
    if (n == "arith.select" && op.numOperands() == 3 && isI32(op.result())) {
      IntRange a = of(op.operand(1)), b = of(op.operand(2));
      return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
    }
    return IntRange::full();
  }
  IntRange a = of(op.operand(0)), b = of(op.operand(1));
  bool bConst = constantInt(op.operand(1), c);
  if (n == "arith.addi") return clamp(a.lo + b.lo, a.hi + b.hi);
  if (n == "arith.subi") return clamp(a.lo - b.hi, a.hi - b.lo);
  if (n == "arith.muli") {
    if (a.isFull() || b.isFull()) return IntRange::full();
    return hull({a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi});
  }
  if (n == "arith.minsi") return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
  if (n == "arith.maxsi") return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
  // Unsigned division by a divisor known positive: the remainder lies below it whatever the
  // dividend's bits; the quotient of a non-negative dividend is non-negative and no larger.
  if (n == "arith.remui" && b.lo >= 1) return {0, b.hi - 1};
  if (n == "arith.divui" && b.lo >= 1 && a.nonNegative()) return {a.lo / b.hi, a.hi / b.lo};
  if (!bConst) return IntRange::full();
  if (n == "arith.divsi") return c == 0 ? IntRange::full() : divide(a, c);
  if (n == "arith.remsi") return c == 0 ? IntRange::full() : remainder(a, c);
  if (n == "arith.andi") return c >= 0 ? IntRange{0, a.nonNegative() ? std::min(a.hi, c) : c} : IntRange::full();
  if (n == "arith.shrui") return a.nonNegative() && c >= 0 && c < 32 ? IntRange{a.lo >> c, a.hi >> c} : IntRange::full();
  if (n == "arith.shli") return c >= 0 && c < 31 && !a.isFull() ? clamp(a.lo * (int64_t(1) << c), a.hi * (int64_t(1) << c)) : IntRange::full();
  return IntRange::full();
}

}  // namespace kiln::kern
