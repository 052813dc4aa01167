// The program's values in the rowwise kernel (contract in row_values.h).
//
// Memory. A thread's vector of a [R, C] or [C] tensor is V elements, V * bytes >= 16 of them, so
// its loads and stores are v4 accesses of 32-bit words (ld/st.global.v4.b32 / .f32): 16 bytes
// each, and the row's threads cover contiguous 16-byte pieces. With scalar=true (V = 1) each
// access is one element. A [R] tensor is one element per row, read by every thread of the row
// (one address: one transaction) and written by the row's first thread.
#include "schedule/rowwise/row_values.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "dialects/tile/tile_ops.h"
#include "kiln/float_formats.h"
#include "schedule/elementwise_lowering.h"

namespace kiln::rowwise {
using namespace ir;
using tile::OpKind;

namespace {

int elemBytes(ScalarType e) { return bitWidth(e) / 8; }

// The element i of an operand's elements (a single value stands for every element).
Value* at(const Elems& x, size_t i) { return x[std::min(i, x.size() - 1)]; }

// A constant rounded once to its float type, as the interpreter rounds it.
double roundFloatConstant(double v, ScalarType e) {
  float odd = roundToOddFloat(v);
  switch (e) {
    case ScalarType::BF16: return bf16BitsToFloat(floatToBf16Bits(odd));
    case ScalarType::F16: return f16BitsToFloat(floatToF16Bits(odd));
    case ScalarType::F8E4M3: return roundToFp8(odd, Fp8Format::E4M3);
    case ScalarType::F8E5M2: return roundToFp8(odd, Fp8Format::E5M2);
    default: return static_cast<float>(v);
  }
}

// An integer constant: to nearest even, saturated to i32.
int64_t roundIntConstant(double v) {
  if (std::isnan(v)) return 0;
  double r = std::nearbyint(v);
  return int64_t(std::clamp(r, double(std::numeric_limits<int32_t>::min()), double(std::numeric_limits<int32_t>::max())));
}

}  // namespace

const Elems& Values::get(const Value* v, Chunk* ch) {
  Space s = cx_.rp.spaceOf(v);
  if (s == Space::Scalar) {
    if (const Operation* d = v->definingOp(); d && d->is("tile.scalar") && !cx_.scalars.count(v))
      cx_.scalars[v] = {cx_.params.at(d->stringAttr("name"))};
    auto it = cx_.scalars.find(v);
    KILN_ASSERT(it != cx_.scalars.end(), "rowwise: a scalar used before it was lowered");
    return it->second;
  }
  if (s == Space::Row) {
    auto it = cx_.rowVals.find(v);
    KILN_ASSERT(it != cx_.rowVals.end(), "rowwise: a row value used before it was computed");
    return it->second;
  }
  KILN_ASSERT(ch, "rowwise: a column or element value outside a vector of the row");
  auto it = ch->vals.find(v);
  if (it != ch->vals.end()) return it->second;
  Elems r = compute(*v->definingOp(), ch);
  return ch->vals[v] = std::move(r);
}

void Values::emitScalar(const Operation& op) { cx_.scalars[op.result()] = compute(op, nullptr); }

void Values::emitRow(const Operation& op) { cx_.rowVals[op.result()] = compute(op, nullptr); }

Elems Values::round(ScalarType elem, Elems x) {
  if (!isFloat(elem) || elem == ScalarType::F32) return x;
  KernBuilder& b = cx_.b;
  size_t group = isFp8(elem) ? 4 : 2;
  Elems r;
  for (size_t i = 0; i < x.size();) {
    size_t n = x.size() - i >= group ? group : 1;
    std::vector<Value*> in(x.begin() + long(i), x.begin() + long(i + n));
    Type packed = n == 1 ? Type::scalar(elem) : kern::fragType(elem);
    Value* p = b.op1("kern.cvt_pack", in, packed);
    Operation* u = b.create("kern.cvt_unpack", {p}, std::vector<Type>(n, types::f32()));
    for (size_t k = 0; k < n; ++k) r.push_back(u->result(unsigned(k)));
    i += n;
  }
  return r;
}

Elems Values::constant(const Operation& op, size_t n) {
  ScalarType e = op.result()->type().elem();
  double v = op.attr("value")->asNumber();
  Value* c = isFloat(e)           ? cx_.b.f32(roundFloatConstant(v, e))
             : e == ScalarType::I1 ? cx_.b.i1(v != 0)
                                   : cx_.b.i32(roundIntConstant(v));
  return Elems(n, c);
}

Elems Values::compute(const Operation& op, Chunk* ch) {
  KernBuilder& b = cx_.b;
  b.setLoc(op.loc());
  OpKind k = *tile::kindOf(op);
  size_t n = ch ? size_t(cx_.geo.V) : 1;
  ScalarType relem = op.numResults() ? op.result()->type().elem() : ScalarType::F32;
  auto map = [&](size_t arity, auto&& f) {
    std::vector<const Elems*> in;
    for (size_t i = 0; i < arity; ++i) in.push_back(&get(op.operand(unsigned(i)), ch));
    Elems r;
    for (size_t i = 0; i < n; ++i) {
      std::vector<Value*> a;
      for (const Elems* e : in) a.push_back(at(*e, i));
      r.push_back(f(a));
    }
    return r;
  };
  switch (k) {
    case OpKind::Load: return load(op, ch);
    case OpKind::Constant: return constant(op, n);
    case OpKind::Dim: return {cx_.params.at(op.stringAttr("name"))};
    case OpKind::Broadcast: return get(op.operand(0), cx_.rp.spaceOf(op.operand(0)) >= Space::Col ? ch : nullptr);
    case OpKind::Iota: {
      if (op.operand(0) == cx_.rp.rowCoord) return {cx_.row};
      Elems r;
      for (size_t i = 0; i < n; ++i) r.push_back(b.addConst(ch->col0, int64_t(i)));
      return r;
    }
    case OpKind::Cast: {
      ScalarType from = op.operand(0)->type().elem();
      if (!isFloat(from)) return map(1, [&](const std::vector<Value*>& a) { return b.cast(a[0], types::f32()); });
      return round(relem, get(op.operand(0), ch));
    }
    case OpKind::Pow: {
      double e = op.attr("exponent")->asNumber();
      return round(relem, map(1, [&](const std::vector<Value*>& a) { return lowerPow(b, a[0], e); }));
    }
    case OpKind::Scale:
      return round(relem, map(2, [&](const std::vector<Value*>& a) { return lowerBinary(b, OpKind::Mul, a[0], a[1]); }));
    case OpKind::Cmp: {
      std::string pred = op.stringAttr("pred");
      return map(2, [&](const std::vector<Value*>& a) { return lowerCmp(b, pred, a[0], a[1]); });
    }
    case OpKind::Select: return map(3, [&](const std::vector<Value*>& a) { return b.select(a[0], a[1], a[2]); });
    default: break;
  }
  if (tile::isElementwiseBinary(k))
    return round(relem, map(2, [&](const std::vector<Value*>& a) { return lowerBinary(b, k, a[0], a[1]); }));
  if (tile::isElementwiseUnary(k))
    return round(relem, map(1, [&](const std::vector<Value*>& a) { return lowerUnary(b, k, a[0]); }));
  KILN_ICE("rowwise has no lowering for '" + op.name() + "', which analyzeRows accepted");
}

Value* Values::elementPtr(const Value* tensor, Chunk* ch, int64_t extra) {
  KernBuilder& b = cx_.b;
  Value* p = cx_.threadPtr.at(tensor);
  if (ch->stepOffset) p = b.ptrAdd(p, ch->stepOffset);
  int64_t off = ch->offset + extra;
  return off ? b.ptrAdd(p, b.i64(off)) : p;
}

Elems Values::unpack(ScalarType elem, const Elems& words) {
  if (!isFloat(elem) || elem == ScalarType::F32) return words;
  Elems r;
  for (Value* w : words) {
    size_t n = kern::isFrag(w->type()) ? size_t(w->type().shape()[0].value) : 1;
    Operation* u = cx_.b.create("kern.cvt_unpack", {w}, std::vector<Type>(n, types::f32()));
    for (size_t k = 0; k < n; ++k) r.push_back(u->result(unsigned(k)));
  }
  return r;
}

Elems Values::pack(ScalarType elem, const Elems& x) {
  if (!isFloat(elem) || elem == ScalarType::F32) return x;
  if (x.size() == 1) return {cx_.b.op1("kern.cvt_pack", {x[0]}, Type::scalar(elem))};
  size_t group = isFp8(elem) ? 4 : 2;
  Elems words;
  for (size_t i = 0; i < x.size(); i += group)
    words.push_back(cx_.b.op1("kern.cvt_pack", std::vector<Value*>(x.begin() + long(i), x.begin() + long(i + group)),
                              kern::fragType(elem)));
  return words;
}

Elems Values::load(const Operation& op, Chunk* ch) {
  KernBuilder& b = cx_.b;
  const Value* tensor = op.operand(0);
  ScalarType e = tensor->type().elem();
  if (!ch) {  // one element of a [R] tensor per row
    Value* p = b.ptrAdd(cx_.params.at(tensor->definingOp()->stringAttr("name")), b.cast(cx_.row, types::i64()));
    return unpack(e, {b.op1("kern.ld_global", {p, cx_.rowOk}, Type::scalar(e))});
  }
  auto given = ch->words.find(op.result());
  return unpack(e, given != ch->words.end() ? given->second : loadWords(op, ch));
}

size_t Values::wordsOf(const Operation& op) const {
  int V = cx_.geo.V;
  return V == 1 ? 1 : size_t(V * elemBytes(op.operand(0)->type().elem()) / 4);
}

Elems Values::loadWords(const Operation& op, Chunk* ch) {
  KernBuilder& b = cx_.b;
  b.setLoc(op.loc());
  const Value* tensor = op.operand(0);
  ScalarType e = tensor->type().elem();
  Value* pred = tensor->type().rank() == 2 ? ch->ok : ch->colOk;
  int V = cx_.geo.V;
  if (V == 1) return {b.op1("kern.ld_global", {elementPtr(tensor, ch, 0), pred}, Type::scalar(e))};
  // 32-bit words, four (16 bytes) per load.
  int perWord = 4 / elemBytes(e);
  Type word = perWord == 1 ? Type::scalar(e) : kern::fragType(e);
  Elems words;
  for (int w = 0; w < V / perWord; w += 4) {
    Operation* ld = b.create("kern.ld_global", {elementPtr(tensor, ch, int64_t(w) * perWord), pred}, std::vector<Type>(4, word));
    for (unsigned i = 0; i < 4; ++i) words.push_back(ld->result(i));
  }
  return words;
}

void Values::store(const Operation& op, Chunk* ch) {
  KernBuilder& b = cx_.b;
  b.setLoc(op.loc());
  const Value* tensor = op.operand(0);
  const Value* value = op.operand(op.numOperands() - 1);
  ScalarType e = tensor->type().elem();
  // A value cast to the tensor's type just before the store: packing rounds it the same way.
  if (const Operation* d = value->definingOp(); d && d->is("tile.cast") && isFloat(e) && isFloat(d->operand(0)->type().elem()))
    value = d->operand(0);
  if (!ch) {
    Value* p = b.ptrAdd(cx_.params.at(tensor->definingOp()->stringAttr("name")), b.cast(cx_.row, types::i64()));
    Value* first = b.andi(cx_.rowOk, b.cmp("eq", cx_.gt, b.i32(0)));
    b.create("kern.st_global", {p, first, pack(e, get(value, nullptr)).front()}, {});
    return;
  }
  Elems words = pack(e, get(value, ch));
  if (words.size() == 1) {
    b.create("kern.st_global", {elementPtr(tensor, ch, 0), ch->ok, words[0]}, {});
    return;
  }
  int perWord = 4 / elemBytes(e);
  for (size_t w = 0; w < words.size(); w += 4) {
    std::vector<Value*> ops{elementPtr(tensor, ch, int64_t(w) * perWord), ch->ok};
    ops.insert(ops.end(), words.begin() + long(w), words.begin() + long(w + 4));
    b.create("kern.st_global", ops, {});
  }
}

}  // namespace kiln::rowwise
