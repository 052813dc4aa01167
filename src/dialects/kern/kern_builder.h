#pragma once
// KernBuilder: an OpBuilder with one-line helpers for the scalar arith and kern ops that strategies
// and kern passes emit. It only spells ops; what to emit is its caller's business. It sits with the
// dialect so that the generic passes (src/transforms/) build kern IR the way the strategies do.
//
// Two small conveniences keep the generated IR readable: integer constants are created once per
// block and reused wherever that block is visible, and integer arithmetic on two constants folds.
// Both assume the builder appends at the end of its block (setInsertionPointToEnd), which is the
// only way strategies use it.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "dialects/kern/kern_ops.h"
#include "kiln/ir/builder.h"

namespace kiln {

class KernBuilder : public ir::OpBuilder {
 public:
  using ir::OpBuilder::OpBuilder;

  ir::Value* named(ir::Value* v, const std::string& hint) {
    v->setNameHint(hint);
    return v;
  }
  ir::Value* op1(const std::string& name, std::vector<ir::Value*> operands, ir::Type result,
                 std::vector<ir::NamedAttr> attrs = {}) {
    return create(name, std::move(operands), {std::move(result)}, std::move(attrs))->result(0);
  }

  // scf.if (cond) { fill() } with an empty else: the one-armed conditionals (an elected thread, a
  // guarded release) the strategies emit. fill runs with the insertion point inside the then-block.
  void ifThen(ir::Value* cond, const std::function<void()>& fill) {
    ir::Operation* op = create("scf.if", {cond}, {}, {}, 2);
    ir::InsertionGuard guard(*this);
    setInsertionPointToEnd(op->region(0).addBlock());
    fill();
    create("scf.yield", {}, {});
    setInsertionPointToEnd(op->region(1).addBlock());
    create("scf.yield", {}, {});
  }

  // Constants, shared within the visible scope.
  ir::Value* i32(int64_t v) { return constant(ir::types::i32(), v); }
  ir::Value* i64(int64_t v) { return constant(ir::types::i64(), v); }
  ir::Value* f32(double v) { return constant(ir::types::f32(), v); }
  ir::Value* i1(bool v) { return constant(ir::types::i1(), v); }
  ir::Value* constant(const ir::Type& t, ir::Attribute value);
  // Takes the constants visible at the insertion point as its own (the first of each type and value
  // in its block before it, and in each enclosing block before the op that holds it), as the builder
  // that made them would share them: a pass that writes ops where a strategy's builder wrote them
  // then shares the same constants, and makes the others where that builder would have.
  void adoptVisibleConstants();
  // The integer value of an arith.constant, if v is one.
  static std::optional<int64_t> intConstant(const ir::Value* v);

  // Integer arithmetic on two values of one type (folded when both are constants).
  ir::Value* add(ir::Value* a, ir::Value* b) { return intBin("arith.addi", a, b); }
  ir::Value* sub(ir::Value* a, ir::Value* b) { return intBin("arith.subi", a, b); }
  ir::Value* mul(ir::Value* a, ir::Value* b) { return intBin("arith.muli", a, b); }
  ir::Value* div(ir::Value* a, ir::Value* b) { return intBin("arith.divsi", a, b); }
  ir::Value* rem(ir::Value* a, ir::Value* b) { return intBin("arith.remsi", a, b); }
  ir::Value* intBin(const std::string& name, ir::Value* a, ir::Value* b);
  ir::Value* min(ir::Value* a, ir::Value* b) { return op1("arith.minsi", {a, b}, a->type()); }
  ir::Value* andi(ir::Value* a, ir::Value* b) { return op1("arith.andi", {a, b}, a->type()); }
  ir::Value* cmp(const char* pred, ir::Value* a, ir::Value* b) {
    return op1("arith.cmpi", {a, b}, ir::types::i1(), {{"pred", pred}});
  }
  ir::Value* select(ir::Value* c, ir::Value* a, ir::Value* b) { return op1("arith.select", {c, a, b}, a->type()); }
  ir::Value* cast(ir::Value* v, ir::Type t) { return v->type() == t ? v : op1("arith.cast", {v}, std::move(t)); }
  // a + k for a compile-time k (no op when k == 0).
  ir::Value* addConst(ir::Value* a, int64_t k) {
    if (k == 0) return a;
    return add(a, a->type().isScalar(ir::ScalarType::I64) ? i64(k) : i32(k));
  }
  ir::Value* mulConst(ir::Value* a, int64_t k) {
    if (k == 1) return a;
    return mul(a, a->type().isScalar(ir::ScalarType::I64) ? i64(k) : i32(k));
  }

  // Float arithmetic.
  ir::Value* fbin(const std::string& name, ir::Value* a, ir::Value* b) { return op1(name, {a, b}, a->type()); }
  ir::Value* fun(const std::string& name, ir::Value* a) { return op1(name, {a}, a->type()); }

  // Pointers: p + elems (elems i64).
  ir::Value* ptrAdd(ir::Value* p, ir::Value* elems) { return op1("kern.ptr_add", {p, elems}, p->type()); }

 private:
  std::map<std::tuple<const ir::Block*, std::string, std::string>, ir::Value*> constants_;
};

}  // namespace kiln
