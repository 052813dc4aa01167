#pragma once
// Types of Kiln IR values.
//
// A type is either a scalar (i1, i32, i64, index, f32, f16, bf16, f8e4m3, f8e5m2) or a parametric
// type: a kind name with an optional element type, an optional shape and named parameters, written
// `kind<elem, [shape], key = value, ...>`. Dialects give the kinds their meaning:
//   tensor<bf16, [M, K]>            a global-memory operand with symbolic dims (tile dialect)
//   tensor<f32, [M, K], block = [1, 128]>   one stored element per 1x128 block of [M, K]: the
//                                   block scales of an FP8 operand, indexed like the operand
//   tile<f32, [M, N]>               a block of values spanning program dims M and N (the schedule
//                                   picks the block sizes later)
//   coord<[M]>                      the current block coordinate along dim M inside a tile loop
//   smem<bf16, [3, 128, 64], swizzle = 128>, mbarrier, frag<...>   (kern dialect)
// Extents are integers or dim symbols. Types are small values compared structurally.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/attribute.h"

namespace kiln::ir {

enum class ScalarType : uint8_t { I1, I32, I64, Index, F32, F16, BF16, F8E4M3, F8E5M2 };

std::string_view scalarName(ScalarType t);
std::optional<ScalarType> parseScalarName(std::string_view s);
int bitWidth(ScalarType t);  // index counts as 64
inline bool isFloat(ScalarType t) { return t >= ScalarType::F32; }
inline bool isInteger(ScalarType t) { return t <= ScalarType::Index; }
inline bool isFp8(ScalarType t) { return t == ScalarType::F8E4M3 || t == ScalarType::F8E5M2; }
inline constexpr ScalarType kAllScalarTypes[] = {
    ScalarType::I1,  ScalarType::I32,  ScalarType::I64,    ScalarType::Index, ScalarType::F32,
    ScalarType::F16, ScalarType::BF16, ScalarType::F8E4M3, ScalarType::F8E5M2};

// One extent of a shape: a constant or the name of a symbolic dim.
struct Extent {
  std::string sym;     // non-empty: symbolic
  int64_t value = 0;   // used when sym is empty

  static Extent of(int64_t v) { return {{}, v}; }
  static Extent of(std::string s) { return {std::move(s), 0}; }
  bool isSymbolic() const { return !sym.empty(); }
  std::string str() const { return isSymbolic() ? sym : std::to_string(value); }
  bool operator==(const Extent&) const = default;
};
using Shape = std::vector<Extent>;
std::string shapeStr(const Shape& s);  // "[M, 128]"

class Type {
 public:
  Type() = default;  // i32 scalar
  static Type scalar(ScalarType t) { Type r; r.elem_ = t; return r; }
  static Type make(std::string kind, std::optional<ScalarType> elem, std::optional<Shape> shape,
                   std::vector<NamedAttr> params = {});

  bool isScalar() const { return kind_.empty(); }
  bool isScalar(ScalarType t) const { return isScalar() && elem_ == t; }
  bool isKind(std::string_view k) const { return kind_ == k; }
  const std::string& kind() const { return kind_; }
  bool hasElem() const { return isScalar() || hasElem_; }
  ScalarType elem() const { return elem_; }
  bool hasShape() const { return hasShape_; }
  const Shape& shape() const { return shape_; }
  size_t rank() const { return shape_.size(); }
  const std::vector<NamedAttr>& params() const { return params_; }
  const Attribute* param(std::string_view key) const;

  // A copy with another element type or shape (same kind and params).
  Type withElem(ScalarType t) const;
  Type withShape(Shape s) const;

  std::string str() const;
  bool operator==(const Type& o) const = default;

 private:
  std::string kind_;
  ScalarType elem_ = ScalarType::I32;
  bool hasElem_ = false;
  bool hasShape_ = false;
  Shape shape_;
  std::vector<NamedAttr> params_;
};

// Convenience constructors for the common kinds.
namespace types {
inline Type i1() { return Type::scalar(ScalarType::I1); }
inline Type i32() { return Type::scalar(ScalarType::I32); }
inline Type i64() { return Type::scalar(ScalarType::I64); }
inline Type index() { return Type::scalar(ScalarType::Index); }
inline Type f32() { return Type::scalar(ScalarType::F32); }
Type tensor(ScalarType elem, Shape shape, std::vector<int64_t> order = {}, std::vector<int64_t> block = {});
Type tile(ScalarType elem, Shape shape);
Type coord(std::string dim);
}  // namespace types

// The block of a tensor type: how many logical positions along each axis one stored element
// covers (its `block` parameter; all ones when it has none, or for a type that is not a tensor).
// A tensor<f32, [M, K], block = [1, 128]> is indexed like an [M, K] tensor, and position (i, j)
// reads the stored element (i, j / 128) of an [M, ceil(K / 128)] array laid out in `order`.
std::vector<int64_t> blockOf(const Type& tensor);
// The stored extent of an axis of `extent` logical positions in blocks of `block`: ceil(e / b).
inline int64_t storedExtent(int64_t extent, int64_t block) {
  return block <= 1 ? extent : extent / block + (extent % block != 0 ? 1 : 0);
}

}  // namespace kiln::ir
