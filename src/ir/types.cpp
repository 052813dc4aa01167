#include "kiln/ir/types.h"

namespace kiln::ir {

std::string_view scalarName(ScalarType t) {
  switch (t) {
    case ScalarType::I1: return "i1";
    case ScalarType::I32: return "i32";
    case ScalarType::I64: return "i64";
    case ScalarType::Index: return "index";
    case ScalarType::F32: return "f32";
    case ScalarType::F16: return "f16";
    case ScalarType::BF16: return "bf16";
    case ScalarType::F8E4M3: return "f8e4m3";
    case ScalarType::F8E5M2: return "f8e5m2";
  }
  return "?";
}

std::optional<ScalarType> parseScalarName(std::string_view s) {
  for (ScalarType t : kAllScalarTypes)
    if (scalarName(t) == s) return t;
  return std::nullopt;
}

int bitWidth(ScalarType t) {
  switch (t) {
    case ScalarType::I1: return 1;
    case ScalarType::I32: return 32;
    case ScalarType::I64: return 64;
    case ScalarType::Index: return 64;
    case ScalarType::F32: return 32;
    case ScalarType::F16: return 16;
    case ScalarType::BF16: return 16;
    case ScalarType::F8E4M3: return 8;
    case ScalarType::F8E5M2: return 8;
  }
  return 0;
}

std::string shapeStr(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) r += ", ";
    r += s[i].str();
  }
  return r + "]";
}

Type Type::make(std::string kind, std::optional<ScalarType> elem, std::optional<Shape> shape,
                std::vector<NamedAttr> params) {
  Type t;
  t.kind_ = std::move(kind);
  if (elem) {
    t.elem_ = *elem;
    t.hasElem_ = true;
  }
  if (shape) {
    t.shape_ = std::move(*shape);
    t.hasShape_ = true;
  }
  t.params_ = std::move(params);
  return t;
}

const Attribute* Type::param(std::string_view key) const {
  for (const auto& p : params_)
    if (p.name == key) return &p.value;
  return nullptr;
}

Type Type::withElem(ScalarType e) const {
  Type t = *this;
  t.elem_ = e;
  if (!isScalar()) t.hasElem_ = true;
  return t;
}

Type Type::withShape(Shape s) const {
  Type t = *this;
  t.shape_ = std::move(s);
  t.hasShape_ = true;
  return t;
}

std::string Type::str() const {
  if (isScalar()) return std::string(scalarName(elem_));
  if (!hasElem_ && !hasShape_ && params_.empty()) return kind_;
  std::string s = kind_ + "<";
  bool first = true;
  auto sep = [&] {
    if (!first) s += ", ";
    first = false;
  };
  if (hasElem_) {
    sep();
    s += scalarName(elem_);
  }
  if (hasShape_) {
    sep();
    s += shapeStr(shape_);
  }
  for (const auto& p : params_) {
    sep();
    s += p.name + " = " + p.value.str();
  }
  return s + ">";
}

namespace types {
Type tensor(ScalarType elem, Shape shape, std::vector<int64_t> order, std::vector<int64_t> block) {
  std::vector<NamedAttr> params;
  if (!order.empty()) params.push_back({"order", Attribute::ints(order)});
  if (!block.empty()) params.push_back({"block", Attribute::ints(block)});
  return Type::make("tensor", elem, std::move(shape), std::move(params));
}
Type tile(ScalarType elem, Shape shape) { return Type::make("tile", elem, std::move(shape)); }
Type coord(std::string dim) { return Type::make("coord", std::nullopt, Shape{Extent::of(std::move(dim))}); }
}  // namespace types

std::vector<int64_t> blockOf(const Type& t) {
  std::vector<int64_t> ones(t.rank(), 1);
  const Attribute* b = t.isKind("tensor") ? t.param("block") : nullptr;
  auto v = b ? b->asInts() : std::nullopt;
  return v && v->size() == t.rank() ? *v : ones;
}

}  // namespace kiln::ir
