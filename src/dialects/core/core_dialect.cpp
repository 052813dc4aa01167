// Verify hooks and registration for arith.* and scf.* (table in core_ops.def).
#include "kiln/ir/op_registry.h"
#include "kiln/ir/operation.h"

namespace kiln::ir {
namespace {

bool isIntLike(const Type& t) { return t.isScalar() && isInteger(t.elem()); }

bool verifyConstant(const Operation& op, DiagnosticEngine& d) {
  const Attribute* v = op.attr("value");
  const Type& t = op.result()->type();
  if (!v || !(v->isInt() || v->isFloat() || v->isBool()))
    return d.error(op.loc()) << "'arith.constant' needs a numeric {value = ...} attribute";
  if (!t.isScalar()) return d.error(op.loc()) << "'arith.constant' produces a scalar, not " << t.str();
  if (isInteger(t.elem()) && v->isFloat())
    return d.error(op.loc()) << "'arith.constant' of integer type " << t.str() << " has a float value";
  return true;
}

bool verifyIntBinary(const Operation& op, DiagnosticEngine& d) {
  const Type& a = op.operand(0)->type();
  if (!isIntLike(a) || a != op.operand(1)->type() || a != op.result()->type())
    return d.error(op.loc()) << "'" << op.name() << "' needs two integer operands and a result of one type, got "
                             << a.str() << " and " << op.operand(1)->type().str() << " -> " << op.result()->type().str();
  return true;
}

bool verifyFloatBinary(const Operation& op, DiagnosticEngine& d) {
  const Type& a = op.operand(0)->type();
  if (!a.isScalar() || !isFloat(a.elem()) || a != op.operand(1)->type() || a != op.result()->type())
    return d.error(op.loc()) << "'" << op.name() << "' needs two float operands and a result of one type";
  return true;
}

bool verifyFloatTernary(const Operation& op, DiagnosticEngine& d) {
  const Type& a = op.operand(0)->type();
  if (!a.isScalar() || !isFloat(a.elem()) || a != op.operand(1)->type() || a != op.operand(2)->type() ||
      a != op.result()->type())
    return d.error(op.loc()) << "'" << op.name() << "' needs three float operands and a result of one type";
  return true;
}

bool verifyFloatUnary(const Operation& op, DiagnosticEngine& d) {
  const Type& a = op.operand(0)->type();
  if (!a.isScalar() || !isFloat(a.elem()) || a != op.result()->type())
    return d.error(op.loc()) << "'" << op.name() << "' needs a float operand and a result of its type";
  return true;
}

bool verifyCmp(const Operation& op, DiagnosticEngine& d) {
  static const char* preds[] = {"eq", "ne", "slt", "sle", "sgt", "sge", "ult"};
  std::string p = op.stringAttr("pred");
  bool known = false;
  for (const char* q : preds) known = known || p == q;
  if (!known) return d.error(op.loc()) << "'arith.cmpi' needs {pred = ...} of eq, ne, slt, sle, sgt, sge, ult; got \"" << p << "\"";
  if (!isIntLike(op.operand(0)->type()) || op.operand(0)->type() != op.operand(1)->type())
    return d.error(op.loc()) << "'arith.cmpi' compares two integers of one type";
  if (!op.result()->type().isScalar(ScalarType::I1)) return d.error(op.loc()) << "'arith.cmpi' produces i1";
  return true;
}

bool verifyCmpf(const Operation& op, DiagnosticEngine& d) {
  static const char* preds[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  std::string p = op.stringAttr("pred");
  bool known = false;
  for (const char* q : preds) known = known || p == q;
  if (!known) return d.error(op.loc()) << "'arith.cmpf' needs {pred = ...} of eq, ne, lt, le, gt, ge; got \"" << p << "\"";
  const Type& a = op.operand(0)->type();
  if (!a.isScalar() || !isFloat(a.elem()) || a != op.operand(1)->type())
    return d.error(op.loc()) << "'arith.cmpf' compares two floats of one type";
  if (!op.result()->type().isScalar(ScalarType::I1)) return d.error(op.loc()) << "'arith.cmpf' produces i1";
  return true;
}

bool verifySelect(const Operation& op, DiagnosticEngine& d) {
  if (!op.operand(0)->type().isScalar(ScalarType::I1))
    return d.error(op.loc()) << "'arith.select' condition must be i1";
  if (op.operand(1)->type() != op.operand(2)->type() || op.operand(1)->type() != op.result()->type())
    return d.error(op.loc()) << "'arith.select' branches and result must have one type";
  return true;
}

bool verifyScalarCast(const Operation& op, DiagnosticEngine& d) {
  if (!op.operand(0)->type().isScalar() || !op.result()->type().isScalar())
    return d.error(op.loc()) << "'arith.cast' converts between scalar types";
  return true;
}

bool verifyFor(const Operation& op, DiagnosticEngine& d) {
  if (op.numOperands() < 3) return d.error(op.loc()) << "'scf.for' needs lower bound, upper bound and step";
  for (unsigned i = 0; i < 3; ++i)
    if (!isIntLike(op.operand(i)->type()))
      return d.error(op.loc()) << "'scf.for' bounds and step must be integers";
  size_t carried = op.numOperands() - 3;
  if (op.numResults() != carried)
    return d.error(op.loc()) << "'scf.for' has " << carried << " loop-carried values but " << op.numResults() << " results";
  const Block& body = op.body();
  if (body.numArguments() != carried + 1)
    return d.error(op.loc()) << "'scf.for' body needs the induction variable and one argument per carried value";
  if (body.argument(0)->type() != op.operand(0)->type())
    return d.error(op.loc()) << "'scf.for' induction variable must have the type of the bounds";
  const Operation* y = body.back();
  if (y->numOperands() != carried)
    return d.error(y->loc()) << "'scf.yield' in 'scf.for' must yield " << carried << " values";
  for (size_t i = 0; i < carried; ++i) {
    const Type& t = op.operand(3 + i)->type();
    if (body.argument(1 + i)->type() != t || op.result(i)->type() != t || y->operand(i)->type() != t)
      return d.error(op.loc()) << "'scf.for' carried value #" << i << " must keep type " << t.str();
  }
  return true;
}

bool verifyIf(const Operation& op, DiagnosticEngine& d) {
  if (!op.operand(0)->type().isScalar(ScalarType::I1)) return d.error(op.loc()) << "'scf.if' condition must be i1";
  for (unsigned r = 0; r < 2; ++r) {
    const Operation* y = op.body(r).back();
    if (y->numOperands() != op.numResults())
      return d.error(y->loc()) << "'scf.yield' in 'scf.if' must yield " << op.numResults() << " values";
    for (unsigned i = 0; i < op.numResults(); ++i)
      if (y->operand(i)->type() != op.result(i)->type())
        return d.error(y->loc()) << "'scf.yield' value #" << i << " must have type " << op.result(i)->type().str();
  }
  return true;
}

}  // namespace

void registerArithDialect(OpRegistry& r) {
#define CORE_OP(name, nops, nres, nreg, traits, hook, summary, attrs) \
  r.add({name, nops, nres, nreg, traits, hook, summary, words(attrs)});
#include "core_ops.def"
#undef CORE_OP
}

}  // namespace kiln::ir
