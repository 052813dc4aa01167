// Math on tiles for the C++ DSL: each function checks its operands in the user's terms, broadcasts
// rows and columns the way the user wrote them (bias(n) added to an [M, N] tile), and emits tile ops.
#include <algorithm>

#include "kiln/ir/diagnostics.h"
#include "kiln/program_builder.h"

namespace kiln {
using namespace kiln::ir;

namespace {

ProgramBuilder* builderOf(const Operand& a, const Operand* b = nullptr, const Operand* c = nullptr) {
  for (const Operand* o : {&a, b, c})
    if (o && !o->isNumber && o->tile.builder()) return o->tile.builder();
  throw Error(Location::fromCpp(a.loc), "math on plain numbers needs at least one tile operand");
}

// Materializes an operand as a value of element type `like` (numbers become scalar constants).
Value* valueOf(ProgramBuilder& pb, const Operand& o, ScalarType like) {
  if (!o.isNumber) {
    pb.checkVisible(o.tile.value(), o.loc, "tile");
    return o.tile.value();
  }
  return pb.emit(o.loc, "tile.constant", {}, {Type::scalar(like)}, {{"value", o.number}})->result();
}

ScalarType elemOf(const Operand& a, const Operand& b) {
  return !a.isNumber ? a.tile.type().elem() : b.tile.type().elem();
}

// Broadcasts `small` to `big`'s shape when its dims are a subsequence of big's.
Value* broadcastTo(ProgramBuilder& pb, Value* small, const Type& big, const SrcLoc& loc) {
  return pb.emit(loc, "tile.broadcast", {small}, {big.withElem(small->type().elem())})->result();
}

bool isSubsequence(const Shape& small, const Shape& big) {
  size_t j = 0;
  for (const auto& e : big)
    if (j < small.size() && small[j] == e) ++j;
  return j == small.size();
}

// Two operands of elementwise math, of one element type, the smaller broadcast to the larger.
struct Paired {
  ProgramBuilder* pb;
  Value *x, *y;
  Type shape;  // the tile type (or scalar type) the pair spans
};

Paired pairUp(const char* symbol, const Operand& a, const Operand& b) {
  ProgramBuilder& pb = *builderOf(a, &b);
  ScalarType et = elemOf(a, b);
  Value* x = valueOf(pb, a, et);
  Value* y = valueOf(pb, b, et);
  const Type &tx = x->type(), &ty = y->type();
  if (tx.elem() != ty.elem())
    pb.fail(a.loc, std::string("operands of ") + symbol + " have different element types: " + tx.str() + " and " +
                       ty.str() + "; convert one with kiln::cast");
  if (tx.isKind("tile") && ty.isKind("tile") && tx.shape() != ty.shape()) {
    if (tx.rank() < ty.rank() && isSubsequence(tx.shape(), ty.shape())) {
      x = broadcastTo(pb, x, ty, a.loc);
    } else if (ty.rank() < tx.rank() && isSubsequence(ty.shape(), tx.shape())) {
      y = broadcastTo(pb, y, tx, a.loc);
    } else {
      pb.fail(a.loc, std::string("operands of ") + symbol + " have incompatible shapes " + shapeStr(tx.shape()) +
                         " and " + shapeStr(ty.shape()) + "; one must span a subset of the other's dims");
    }
  }
  return {&pb, x, y, x->type().isKind("tile") ? x->type() : y->type()};
}

Tile binary(const char* op, const char* symbol, const Operand& a, const Operand& b) {
  Paired p = pairUp(symbol, a, b);
  return Tile(p.pb->emit(a.loc, op, {p.x, p.y}, {p.shape})->result(), p.pb);
}

Tile compare(const char* pred, const char* symbol, const Operand& a, const Operand& b) {
  Paired p = pairUp(symbol, a, b);
  Operation* op = p.pb->emit(a.loc, "tile.cmp", {p.x, p.y}, {p.shape.withElem(ScalarType::I1)}, {{"pred", pred}});
  return Tile(op->result(), p.pb);
}

// tile.reduce_axis of x along d; sum returns f32, max and min keep x's element type.
Tile reduceAlong(const char* kind, const char* fn, const Operand& x, const Dim& d) {
  ProgramBuilder& pb = *builderOf(x);
  Value* v = valueOf(pb, x, ScalarType::F32);
  const Type& t = v->type();
  if (!t.isKind("tile") || !isFloat(t.elem()))
    pb.fail(x.loc, std::string("kiln::") + fn + " along a dim reduces a float tile, got " + t.str());
  Shape rest = t.shape();
  auto axis = std::find(rest.begin(), rest.end(), Extent::of(d.name));
  if (axis == rest.end())
    pb.fail(x.loc, std::string("kiln::") + fn + " along " + d.name + ": the tile spans " + shapeStr(t.shape()) +
                       ", which does not include " + d.name + "; reduce along one of its dims");
  rest.erase(axis);
  ScalarType elem = std::string_view(kind) == "sum" ? ScalarType::F32 : t.elem();
  Type rt = rest.empty() ? Type::scalar(elem) : types::tile(elem, rest);
  return Tile(pb.emit(x.loc, "tile.reduce_axis", {v}, {rt}, {{"kind", kind}, {"dim", d.name}})->result(), &pb);
}

Tile unary(const char* op, const Operand& a) {
  ProgramBuilder& pb = *builderOf(a);
  Value* x = valueOf(pb, a, ScalarType::F32);
  if (!isFloat(x->type().elem()))
    pb.fail(a.loc, std::string(op + 5) + " needs a float tile, got " + x->type().str());
  return Tile(pb.emit(a.loc, op, {x}, {x->type()})->result(), &pb);
}

}  // namespace

Tile operator+(const Operand& a, const Operand& b) { return binary("tile.add", "+", a, b); }
Tile operator-(const Operand& a, const Operand& b) { return binary("tile.sub", "-", a, b); }
Tile operator*(const Operand& a, const Operand& b) { return binary("tile.mul", "*", a, b); }
Tile operator/(const Operand& a, const Operand& b) { return binary("tile.div", "/", a, b); }
Tile max(const Operand& a, const Operand& b) { return binary("tile.max", "max", a, b); }
Tile min(const Operand& a, const Operand& b) { return binary("tile.min", "min", a, b); }
Tile operator-(const Operand& a) { return unary("tile.neg", a); }
Tile abs(const Operand& x) { return unary("tile.abs", x); }
Tile exp(const Operand& x) { return unary("tile.exp", x); }
Tile relu(const Operand& x) { return unary("tile.relu", x); }
Tile gelu_tanh(const Operand& x) { return unary("tile.gelu_tanh", x); }
Tile gelu_erf(const Operand& x) { return unary("tile.gelu_erf", x); }
Tile silu(const Operand& x) { return unary("tile.silu", x); }
Tile sigmoid(const Operand& x) { return unary("tile.sigmoid", x); }

Tile exp2(const Operand& x) { return unary("tile.exp2", x); }
Tile log(const Operand& x) { return unary("tile.log", x); }
Tile sqrt(const Operand& x) { return unary("tile.sqrt", x); }
Tile rsqrt(const Operand& x) { return unary("tile.rsqrt", x); }
Tile tanh(const Operand& x) { return unary("tile.tanh", x); }
Tile erf(const Operand& x) { return unary("tile.erf", x); }

Tile pow(const Operand& x, double exponent) {
  ProgramBuilder& pb = *builderOf(x);
  Value* v = valueOf(pb, x, ScalarType::F32);
  if (!isFloat(v->type().elem())) pb.fail(x.loc, "pow needs a float tile, got " + v->type().str());
  return Tile(pb.emit(x.loc, "tile.pow", {v}, {v->type()}, {{"exponent", exponent}})->result(), &pb);
}

Tile operator<(const Operand& a, const Operand& b) { return compare("lt", "<", a, b); }
Tile operator<=(const Operand& a, const Operand& b) { return compare("le", "<=", a, b); }
Tile operator>(const Operand& a, const Operand& b) { return compare("gt", ">", a, b); }
Tile operator>=(const Operand& a, const Operand& b) { return compare("ge", ">=", a, b); }
Tile eq(const Operand& a, const Operand& b) { return compare("eq", "eq", a, b); }
Tile ne(const Operand& a, const Operand& b) { return compare("ne", "ne", a, b); }

Tile where(const Operand& cond, const Operand& a, const Operand& b) {
  ProgramBuilder& pb = *builderOf(cond, &a, &b);
  Value* c = valueOf(pb, cond, ScalarType::I1);
  if (c->type().elem() != ScalarType::I1)
    pb.fail(cond.loc, "kiln::where needs an i1 condition (a comparison such as x > 0), got " + c->type().str());
  Value *x, *y;
  if (a.isNumber && b.isNumber) {  // two numbers: f32 values
    x = valueOf(pb, a, ScalarType::F32);
    y = valueOf(pb, b, ScalarType::F32);
  } else {
    Paired p = pairUp("where", a, b);
    x = p.x;
    y = p.y;
  }
  // The condition and the pair meet at the larger shape.
  const Type& ct = c->type();
  const Type& vt = x->type().isKind("tile") ? x->type() : y->type();
  if (ct.isKind("tile") && vt.isKind("tile") && ct.shape() != vt.shape()) {
    if (ct.rank() < vt.rank() && isSubsequence(ct.shape(), vt.shape())) {
      c = broadcastTo(pb, c, vt, cond.loc);
    } else if (vt.rank() < ct.rank() && isSubsequence(vt.shape(), ct.shape())) {
      if (x->type().isKind("tile")) x = broadcastTo(pb, x, ct, cond.loc);
      if (y->type().isKind("tile")) y = broadcastTo(pb, y, ct, cond.loc);
    } else {
      pb.fail(cond.loc, "kiln::where: the condition spans " + shapeStr(ct.shape()) + " and the values " +
                            shapeStr(vt.shape()) + "; one must span a subset of the other's dims");
    }
  }
  const Type* shape = c->type().isKind("tile") ? &c->type() : x->type().isKind("tile") ? &x->type() : &y->type();
  Type rt = shape->withElem(x->type().elem());
  return Tile(pb.emit(cond.loc, "tile.select", {c, x, y}, {rt})->result(), &pb);
}

Tile broadcast(const Operand& x, std::vector<Coord> shape) {
  ProgramBuilder& pb = *builderOf(x);
  Value* v = valueOf(pb, x, ScalarType::F32);
  Shape s;
  for (const auto& c : shape) {
    pb.checkVisible(c.value, x.loc, "coord");
    s.push_back(Extent::of(c.dim));
  }
  const Type& t = v->type();
  if (t.isKind("tile") && (t.rank() >= s.size() || !isSubsequence(t.shape(), s)))
    pb.fail(x.loc, "kiln::broadcast extends a tile to more dims: " + shapeStr(t.shape()) + " cannot become " +
                       shapeStr(s) + " (its dims must appear there, in order)");
  return Tile(broadcastTo(pb, v, types::tile(t.elem(), s), x.loc), &pb);
}

Tile sum(const Operand& x, const Dim& dim) { return reduceAlong("sum", "sum", x, dim); }
Tile max(const Operand& x, const Dim& dim) { return reduceAlong("max", "max", x, dim); }
Tile min(const Operand& x, const Dim& dim) { return reduceAlong("min", "min", x, dim); }
Tile mean(const Operand& x, const Dim& dim) {
  Tile s = reduceAlong("sum", "mean", x, dim);
  return binary("tile.div", "mean", Operand(s, x.loc), Operand(dim.pb->extent(dim, x.loc), x.loc));
}

Tile cast(ScalarType dtype, const Operand& x) {
  ProgramBuilder& pb = *builderOf(x);
  Value* v = valueOf(pb, x, dtype);
  return Tile(pb.emit(x.loc, "tile.cast", {v}, {v->type().withElem(dtype)})->result(), &pb);
}

// The rules of a matrix product in the user's words: x [M, K] times y [K, N] into c, an f32
// [M, N] accumulator (the ops' verifiers say the same in the IR's words).
static void checkMatmul(ProgramBuilder& pb, const SrcLoc& loc, const char* what, const Value* x, const Value* y,
                        const Value* c) {
  const Type &ta = x->type(), &tb = y->type(), &tc = c->type();
  const std::string w = what;
  if (ta.rank() != 2 || tb.rank() != 2 || tc.rank() != 2)
    pb.fail(loc, w + " multiplies [M, K] by [K, N] into an [M, N] accumulator; got " + ta.str() + ", " + tb.str() +
                     " and " + tc.str());
  if (ta.shape()[1] != tb.shape()[0])
    pb.fail(loc, w + ": a spans " + shapeStr(ta.shape()) + " and b spans " + shapeStr(tb.shape()) +
                     ", so their inner dims differ; a's second dim must be b's first");
  if (tc.elem() != ScalarType::F32)
    pb.fail(loc, w + " accumulates in f32, but the accumulator is " + tc.str() + "; start it with p.zeros(kiln::f32, ...)");
  if (tc.shape()[0] != ta.shape()[0] || tc.shape()[1] != tb.shape()[1])
    pb.fail(loc, w + ": the accumulator spans " + shapeStr(tc.shape()) + " but a @ b spans [" + ta.shape()[0].str() +
                     ", " + tb.shape()[1].str() + "]");
}

Tile dot(const Operand& a, const Operand& b, const Operand& acc) {
  ProgramBuilder& pb = *builderOf(a, &b, &acc);
  Value* x = valueOf(pb, a, ScalarType::BF16);
  Value* y = valueOf(pb, b, ScalarType::BF16);
  Value* c = valueOf(pb, acc, ScalarType::F32);
  checkMatmul(pb, a.loc, "dot", x, y, c);
  return Tile(pb.emit(a.loc, "tile.dot", {x, y, c}, {c->type()})->result(), &pb);
}

namespace {

// The block along K of the p.scales tensor a scale operand is loaded from: 0 when it is not a
// load, or its tensor has no block (then the caller must say block_k).
int64_t scaleBlockK(const Value* scale, const Extent& k) {
  const Operation* load = scale->definingOp();
  if (!load || !load->is("tile.load") || !load->operand(0)->type().param("block")) return 0;
  std::vector<int64_t> block = blockOf(load->operand(0)->type());
  for (unsigned i = 1; i < load->numOperands(); ++i)
    if (load->operand(i)->type().isKind("coord") && load->operand(i)->type().shape()[0] == k) return block[i - 1];
  return 0;
}

}  // namespace

Tile dot_scaled(const Operand& a, const Operand& aScale, const Operand& b, const Operand& bScale, const Operand& acc,
                int64_t blockK) {
  ProgramBuilder& pb = *builderOf(a, &aScale, &b);
  Value* x = valueOf(pb, a, ScalarType::BF16);
  Value* y = valueOf(pb, b, ScalarType::BF16);
  Value* sx = valueOf(pb, aScale, ScalarType::F32);
  Value* sy = valueOf(pb, bScale, ScalarType::F32);
  Value* c = valueOf(pb, acc, ScalarType::F32);
  checkMatmul(pb, a.loc, "dot_scaled", x, y, c);
  for (auto [scale, operand, what] : {std::tuple{sx, x, "a"}, std::tuple{sy, y, "b"}})
    if (scale->type().rank() != 2 || scale->type().shape() != operand->type().shape())
      pb.fail(a.loc, std::string("dot_scaled: the scales of ") + what + " must be loaded at " + what + "'s indices (" +
                         shapeStr(operand->type().shape()) + "), got " + scale->type().str());
  const Extent& k = x->type().shape()[1];
  if (blockK == 0) {
    int64_t ka = scaleBlockK(sx, k), kb = scaleBlockK(sy, k);
    if (ka && kb && ka != kb)
      pb.fail(a.loc, "dot_scaled: the scales of a change every " + std::to_string(ka) + " along " + k.str() +
                         " and those of b every " + std::to_string(kb) + "; pass blockK, the slice of " + k.str() +
                         " whose partial sums are scaled");
    blockK = ka ? ka : kb;
    if (blockK == 0)
      pb.fail(a.loc, "dot_scaled: neither scale is loaded from a p.scales tensor with a block along " + k.str() +
                         ", so pass blockK, the slice of " + k.str() + " whose partial sums are scaled");
  }
  return Tile(pb.emit(a.loc, "tile.dot_scaled", {x, sx, y, sy, c}, {c->type()}, {{"block_k", blockK}})->result(), &pb);
}

Tile scale(const Operand& x, const Operand& scales) {
  ProgramBuilder& pb = *builderOf(x, &scales);
  Value* v = valueOf(pb, x, ScalarType::F32);
  Value* s = valueOf(pb, scales, ScalarType::F32);
  return Tile(pb.emit(x.loc, "tile.scale", {v, s}, {v->type()})->result(), &pb);
}

// ---- tensor access ----

TensorAccess::TensorAccess(const Tensor& t, std::vector<Idx> idx)
    : tensor_(t.value()), pb_(t.builder()), idx_(std::move(idx)), loc_(idx_.front().loc) {}

static std::vector<Value*> accessOperands(ProgramBuilder& pb, Value* tensor, const std::vector<Idx>& idx,
                                          const SrcLoc& loc) {
  const Type& t = tensor->type();
  if (idx.size() != t.rank())
    pb.fail(loc, "tensor " + pb.describe(tensor) + " has rank " + std::to_string(t.rank()) + " but is indexed with " +
                     std::to_string(idx.size()) + " indices");
  std::vector<Value*> ops{tensor};
  for (size_t i = 0; i < idx.size(); ++i) {
    pb.checkVisible(idx[i].value, loc, "index");
    const Type& it = idx[i].value->type();
    if (it.isKind("coord") && t.shape()[i] != it.shape()[0])
      pb.fail(loc, "axis " + std::to_string(i) + " of the tensor is " + t.shape()[i].str() + ", but it is indexed with the coord of " +
                       it.shape()[0].str() + "; pass the coord of " + t.shape()[i].str() + " there");
    ops.push_back(idx[i].value);
  }
  return ops;
}

static Shape accessShape(const std::vector<Idx>& idx) {
  Shape s;
  for (const auto& i : idx)
    if (i.value->type().isKind("coord")) s.push_back(i.value->type().shape()[0]);
  return s;
}

Tile TensorAccess::load(double other) const {
  auto ops = accessOperands(*pb_, tensor_, idx_, loc_);
  std::vector<NamedAttr> attrs;
  if (other != 0.0) attrs.push_back({"other", other});
  Type rt = types::tile(tensor_->type().elem(), accessShape(idx_));
  if (rt.rank() == 0) pb_->fail(loc_, "a tensor access needs at least one coord index to form a tile");
  return Tile(pb_->emit(loc_, "tile.load", ops, {rt}, attrs)->result(), pb_);
}

void TensorAccess::operator=(const Tile& value) const {
  auto ops = accessOperands(*pb_, tensor_, idx_, loc_);
  pb_->checkVisible(value.value(), loc_, "tile");
  const Operation* def = tensor_->definingOp();
  if (def && def->is("tile.input"))
    pb_->fail(loc_, "'" + def->stringAttr("name") + "' is an input and cannot be written; declare it with p.output");
  Shape shape = accessShape(idx_);
  const Type& vt = value.type();
  if (vt.elem() != tensor_->type().elem())
    pb_->fail(loc_, "storing a " + std::string(scalarName(vt.elem())) + " tile into " + std::string(scalarName(tensor_->type().elem())) +
                        " tensor '" + def->stringAttr("name") + "'; convert it first with kiln::cast(kiln::" +
                        std::string(scalarName(tensor_->type().elem())) + ", ...)");
  if (!vt.isKind("tile") || vt.shape() != shape)
    pb_->fail(loc_, "storing a tile of shape " + (vt.isKind("tile") ? shapeStr(vt.shape()) : vt.str()) +
                        " where the indices select a block of shape " + shapeStr(shape));
  ops.push_back(value.value());
  pb_->emit(loc_, "tile.store", ops, {});
}

}  // namespace kiln
