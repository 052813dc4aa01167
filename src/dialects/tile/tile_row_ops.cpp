// Verify hooks of the tile dialect's row ops (tile_ops.def): tile.span, tile.iota,
// tile.reduce_axis, tile.cmp, tile.select, tile.pow. Semantics in tile_ops.h.
#include <algorithm>

#include "dialects/tile/tile_ops.h"
#include "dialects/tile/tile_verify.h"

namespace kiln::tile {
using namespace kiln::ir;

namespace {

bool isFloatValue(const Type& t) { return (isTileType(t) || t.isScalar()) && isFloat(t.elem()); }
// Values tile.cmp orders: floats and the integers that are not predicates.
bool isOrdered(const Type& t) {
  return (isTileType(t) || t.isScalar()) && (isFloat(t.elem()) || (isInteger(t.elem()) && t.elem() != ScalarType::I1));
}

// The tile type among `types` (they must agree on the shape), or the first when all are scalars.
const Type* shapeOf(std::initializer_list<const Type*> types) {
  for (const Type* t : types)
    if (isTileType(*t)) return t;
  return *types.begin();
}

bool sameShapeOrScalar(std::initializer_list<const Type*> types) {
  const Type* s = shapeOf(types);
  for (const Type* t : types)
    if (isTileType(*t) && t->shape() != s->shape()) return false;
  return true;
}

}  // namespace

bool verifySpan(const Operation& op, DiagnosticEngine& d) {
  std::string dim = op.stringAttr("dim");
  if (!hasDim(programDims(op), dim))
    return d.error(op.loc()) << "'tile.span' needs {dim = \"...\"} naming a dim of the program, got \"" << dim << "\"";
  if (!op.enclosing("tile.for_tiles")) return d.error(op.loc()) << "'tile.span' must be inside a tile.for_tiles";
  if (std::string why = blockedBy(op, dim); !why.empty())
    return d.error(op.loc()) << "'tile.span' spans dim '" << dim << "' whole, but " << why
                             << "; a dim is either spanned whole or split by a loop";
  if (op.result()->type() != types::coord(dim))
    return d.error(op.loc()) << "'tile.span' of dim '" << dim << "' produces coord<[" << dim << "]>";
  return true;
}

bool verifyIota(const Operation& op, DiagnosticEngine& d) {
  std::string dim = coordDim(op.operand(0));
  if (dim.empty()) return d.error(op.loc()) << "'tile.iota' takes a coord, got " << op.operand(0)->type().str();
  if (op.result()->type() != types::tile(ScalarType::I32, {Extent::of(dim)}))
    return d.error(op.loc()) << "'tile.iota' of a coord<[" << dim << "]> produces tile<i32, [" << dim << "]>";
  return true;
}

bool verifyReduceAxis(const Operation& op, DiagnosticEngine& d) {
  const Type& x = op.operand(0)->type();
  if (!isTileType(x) || !isFloat(x.elem()))
    return d.error(op.loc()) << "'tile.reduce_axis' reduces a float tile, got " << x.str();
  std::string kind = op.stringAttr("kind");
  if (kind != "sum" && kind != "max" && kind != "min")
    return d.error(op.loc()) << "'tile.reduce_axis' needs {kind = \"sum\"|\"max\"|\"min\"}, got \"" << kind << "\"";
  std::string dim = op.stringAttr("dim");
  auto axis = std::find(x.shape().begin(), x.shape().end(), Extent::of(dim));
  if (dim.empty() || axis == x.shape().end())
    return d.error(op.loc()) << "'tile.reduce_axis' reduces along {dim = \"" << dim << "\"}, which " << x.str()
                             << " does not span";
  if (std::string why = blockedBy(op, dim); !why.empty())
    return d.error(op.loc()) << "'tile.reduce_axis' along '" << dim << "' would reduce one block at a time: " << why
                             << "; span the whole dim with tile.span (p.span in the DSL) and let the loops split the "
                                "others";
  Shape rest = x.shape();
  rest.erase(rest.begin() + (axis - x.shape().begin()));
  const Type& r = op.result()->type();
  bool elemOk = r.hasElem() && (r.elem() == ScalarType::F32 || r.elem() == x.elem());
  bool shapeOk = rest.empty() ? r.isScalar() : isTileType(r) && r.shape() == rest;
  if (!elemOk || !shapeOk) {
    std::string shape = rest.empty() ? "a scalar" : shapeStr(rest);
    std::string elems = x.elem() == ScalarType::F32 ? "f32" : "f32 or " + std::string(scalarName(x.elem()));
    return d.error(op.loc()) << "'tile.reduce_axis' of " << x.str() << " along '" << dim << "' produces " << shape
                             << " of " << elems << ", not " << r.str();
  }
  return true;
}

bool verifyCmp(const Operation& op, DiagnosticEngine& d) {
  static const char* preds[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  std::string p = op.stringAttr("pred");
  if (std::none_of(std::begin(preds), std::end(preds), [&](const char* q) { return p == q; }))
    return d.error(op.loc()) << "'tile.cmp' needs {pred = ...} of eq, ne, lt, le, gt, ge; got \"" << p << "\"";
  const Type &a = op.operand(0)->type(), &b = op.operand(1)->type(), &r = op.result()->type();
  if (!isOrdered(a) || !isOrdered(b) || a.elem() != b.elem())
    return d.error(op.loc()) << "'tile.cmp' compares two float or integer values of one element type, got " << a.str()
                             << " and " << b.str();
  if (!sameShapeOrScalar({&a, &b}))
    return d.error(op.loc()) << "'tile.cmp' operands have shapes " << shapeStr(a.shape()) << " and "
                             << shapeStr(b.shape()) << "; broadcast one with tile.broadcast";
  Type expect = shapeOf({&a, &b})->withElem(ScalarType::I1);
  if (r != expect) return d.error(op.loc()) << "'tile.cmp' result must be " << expect.str();
  return true;
}

bool verifySelect(const Operation& op, DiagnosticEngine& d) {
  const Type &c = op.operand(0)->type(), &a = op.operand(1)->type(), &b = op.operand(2)->type();
  if (!(isTileType(c) || c.isScalar()) || c.elem() != ScalarType::I1)
    return d.error(op.loc()) << "'tile.select' condition must be i1 (a tile.cmp result), got " << c.str();
  if (!(isTileType(a) || a.isScalar()) || !(isTileType(b) || b.isScalar()) || a.elem() != b.elem())
    return d.error(op.loc()) << "'tile.select' chooses between two values of one element type, got " << a.str()
                             << " and " << b.str();
  if (!sameShapeOrScalar({&c, &a, &b}))
    return d.error(op.loc()) << "'tile.select' operands must have one shape (or be scalars), got " << c.str() << ", "
                             << a.str() << " and " << b.str();
  Type expect = shapeOf({&c, &a, &b})->withElem(a.elem());
  if (op.result()->type() != expect) return d.error(op.loc()) << "'tile.select' result must be " << expect.str();
  return true;
}

bool verifyPow(const Operation& op, DiagnosticEngine& d) {
  const Type& a = op.operand(0)->type();
  if (!isFloatValue(a)) return d.error(op.loc()) << "'tile.pow' works on float tiles or scalars, got " << a.str();
  const Attribute* e = op.attr("exponent");
  if (!e || !(e->isInt() || e->isFloat()))
    return d.error(op.loc()) << "'tile.pow' needs a numeric {exponent}: x is raised to a constant power";
  if (op.result()->type() != a) return d.error(op.loc()) << "'tile.pow' result must be " << a.str();
  return true;
}

}  // namespace kiln::tile
