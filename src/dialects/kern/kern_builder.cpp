// KernBuilder's constant sharing and folding (see kern_builder.h).
#include "dialects/kern/kern_builder.h"

namespace kiln {
using namespace ir;

std::optional<int64_t> KernBuilder::intConstant(const Value* v) {
  const Operation* d = v->definingOp();
  if (!d || !d->is("arith.constant") || !d->attr("value") || !d->attr("value")->isInt()) return std::nullopt;
  return d->attr("value")->asInt();
}

Value* KernBuilder::constant(const Type& t, Attribute value) {
  std::string ts = t.str(), vs = value.str();
  // Reuse a constant of this block or of any block around it (those dominate the insertion point).
  for (const Block* blk = insertionBlock(); blk;) {
    auto it = constants_.find({blk, ts, vs});
    if (it != constants_.end()) return it->second;
    const Operation* parent = blk->parentOp();
    blk = parent ? parent->parentBlock() : nullptr;
  }
  Value* c = op1("arith.constant", {}, t, {{"value", std::move(value)}});
  constants_[{insertionBlock(), ts, vs}] = c;
  return c;
}

void KernBuilder::adoptVisibleConstants() {
  const Operation* stop = insertionOp();
  for (Block* blk = insertionBlock(); blk;) {
    for (const auto& op : blk->operations()) {
      if (op.get() == stop) break;
      if (op->is("arith.constant") && op->attr("value"))
        constants_.emplace(std::make_tuple(blk, op->result()->type().str(), op->attr("value")->str()), op->result());
    }
    stop = blk->parentOp();
    blk = stop ? stop->parentBlock() : nullptr;
  }
}

Value* KernBuilder::intBin(const std::string& name, Value* a, Value* b) {
  auto x = intConstant(a), y = intConstant(b);
  // Identities: a + 0, 0 + b, a - 0, a * 1, 1 * b, a / 1.
  if (y && *y == 0 && (name == "arith.addi" || name == "arith.subi")) return a;
  if (x && *x == 0 && name == "arith.addi") return b;
  if (y && *y == 1 && (name == "arith.muli" || name == "arith.divsi")) return a;
  if (x && *x == 1 && name == "arith.muli") return b;
  if (x && y) {
    int64_t r = 0;
    if (name == "arith.addi") r = *x + *y;
    else if (name == "arith.subi") r = *x - *y;
    else if (name == "arith.muli") r = *x * *y;
    else if (name == "arith.divsi" && *y != 0) r = *x / *y;
    else if (name == "arith.remsi" && *y != 0) r = *x % *y;
    else return op1(name, {a, b}, a->type());
    if (a->type().isScalar(ScalarType::I32)) r = int32_t(r);
    return constant(a->type(), r);
  }
  return op1(name, {a, b}, a->type());
}

}  // namespace kiln
