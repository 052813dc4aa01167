// Verify hooks of the ops the tile scheduler is written in once expand-tile-loop has run (table in
// kern_ops.def, semantics in kern_ops.h, "The tile scheduler as IR"): a range promise.
// kern.cluster_id and kern.cluster_count are checked with the cluster ops (kern_cluster_ops.cpp),
// kern.grid_dim with the vector ops (kern_vector_ops.cpp).
#include <cstdint>

#include "dialects/kern/kern_ops.h"
#include "dialects/kern/kern_verify.h"

namespace kiln::kern {
using namespace kiln::ir;

bool verifyAssumeRange(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  if (!op.operand(0)->type().isScalar(ScalarType::I32) || !op.result()->type().isScalar(ScalarType::I32))
    return d.error(op.loc()) << "'kern.assume_range' takes and produces i32";
  const Attribute *lo = op.attr("lo"), *hi = op.attr("hi");
  if (!lo || !hi || !lo->isInt() || !hi->isInt() || lo->asInt() > hi->asInt() || lo->asInt() < INT32_MIN ||
      hi->asInt() > INT32_MAX)
    return d.error(op.loc()) << "'kern.assume_range' needs {lo, hi}: integers with -2^31 <= lo <= hi <= 2^31 - 1";
  return true;
}

}  // namespace kiln::kern
