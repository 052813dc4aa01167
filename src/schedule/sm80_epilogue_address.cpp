#include "schedule/sm80_epilogue_address.h"

#include <algorithm>

#include "dialects/tile/tensor_layout.h"
#include "dialects/tile/tile_ops.h"

namespace kiln::sm80 {
using namespace ir;

namespace {

// The tensor's axes, fastest first.
std::vector<int64_t> axisOrder(const Type& t) {
  std::vector<int64_t> order;
  if (const Attribute* o = t.param("order")) order = *o->asInts();
  for (int64_t a = int64_t(t.rank()) - 1; order.size() < t.rank(); --a) order.push_back(a);
  return order;
}

// A strided tensor: the sum of each position times its axis's stride (a dim's value or a constant).
Value* stridedOffset(KernBuilder& b, const tile::TensorLayout& l, const std::vector<Value*>& pos,
                     const ExtentValue& extent) {
  Value* off = b.i64(0);
  for (size_t a = 0; a < pos.size(); ++a) {
    const Extent& s = l.strides[a];
    if (!s.isSymbolic() && s.value == 0) continue;
    Value* p = b.cast(pos[a], types::i64());
    off = b.add(off, s.isSymbolic() ? b.mul(p, b.cast(extent(s), types::i64())) : b.mulConst(p, s.value));
  }
  return off;
}

}  // namespace

Value* elementOffset(KernBuilder& b, const Type& t, const std::vector<Value*>& pos, const ExtentValue& extent) {
  if (tile::TensorLayout l = tile::tensorLayout(t); l.strided()) return stridedOffset(b, l, pos, extent);
  Value* stride = b.i64(1);
  Value* off = b.i64(0);
  for (int64_t axis : axisOrder(t)) {
    off = b.add(off, b.mul(b.cast(pos[size_t(axis)], types::i64()), stride));
    stride = b.mul(stride, b.cast(extent(t.shape()[size_t(axis)]), types::i64()));
  }
  return off;
}

Value* loadAddress(KernBuilder& b, Value* base, const Type& t, const std::vector<Value*>& pos, const ExtentValue& extent) {
  std::vector<Value*> bases = pos;
  int64_t k = 0, stride = 1;
  if (tile::TensorLayout l = tile::tensorLayout(t); l.strided()) {
    // The constant part of a position on an axis of constant stride folds into the immediate.
    for (size_t a = 0; a < pos.size(); ++a) {
      Operation* d = pos[a]->definingOp();
      std::optional<int64_t> c = d && d->is("arith.addi") ? KernBuilder::intConstant(d->operand(1)) : std::nullopt;
      if (!c || *c < 0 || l.strides[a].isSymbolic()) continue;
      bases[a] = d->operand(0);
      k += *c * l.strides[a].value;
    }
    Value* p = b.ptrAdd(base, stridedOffset(b, l, bases, extent));
    return k ? b.ptrAdd(p, b.i64(k)) : p;
  }
  for (int64_t axis : axisOrder(t)) {
    Operation* d = pos[size_t(axis)]->definingOp();
    std::optional<int64_t> c = d && d->is("arith.addi") ? KernBuilder::intConstant(d->operand(1)) : std::nullopt;
    if (c && *c >= 0) {
      bases[size_t(axis)] = d->operand(0);
      k += *c * stride;
    }
    const Extent& e = t.shape()[size_t(axis)];
    if (e.isSymbolic()) break;  // the axes past a symbolic extent have no compile-time stride
    stride *= e.value;
  }
  Value* p = b.ptrAdd(base, elementOffset(b, t, bases, extent));
  return k ? b.ptrAdd(p, b.i64(k)) : p;
}

int pairLoadBytes(const GemmProgram& g, const Config& cfg, const Operation& load) {
  if (cfg.swapAB || tile::kindOf(load) != tile::OpKind::Load) return 0;
  const Type& t = load.operand(0)->type();
  const ScalarType e = t.elem();
  const bool packed = e == ScalarType::BF16 || e == ScalarType::F16;
  if (!packed && e != ScalarType::F32) return 0;
  if (packed && load.attr("other") && load.attr("other")->asNumber() != 0) return 0;
  const tile::TensorLayout l = tile::tensorLayout(t);
  const int64_t unit = l.contiguousAxis();
  if (load.operand(1 + unsigned(unit)) != coordArgN(g)) return 0;
  const ir::Extent& row = t.shape()[size_t(unit)];
  if (!l.strided() && !row.isSymbolic() && row.value % 2) return 0;
  for (const Operation* op : g.epilogue)  // every output's rows in pairs
    if (op->is("tile.store") && std::min(cfg.alignC, 16) < 2 * bitWidth(op->operand(0)->type().elem()) / 8) return 0;
  return 2 * bitWidth(e) / 8;
}

std::pair<Value*, Value*> loadPair(KernBuilder& b, Value* addr, Value* ok, ScalarType e, double other) {
  if (e == ScalarType::F32) {
    std::vector<NamedAttr> attrs;
    if (other != 0.0) attrs.push_back({"other", other});
    Operation* ld = b.create("kern.ld_global", {addr, ok}, {types::f32(), types::f32()}, attrs);
    return {ld->result(0), ld->result(1)};
  }
  Value* word = b.op1("kern.ld_global", {addr, ok}, kern::fragType(e));
  Operation* u = b.create("kern.cvt_unpack", {word}, {types::f32(), types::f32()});
  return {u->result(0), u->result(1)};
}

void requirePairLoads(const GemmProgram& g, const Config& cfg, kern::KernelLaunch& launch) {
  for (const Operation* op : g.epilogue) {
    const int bytes = pairLoadBytes(g, cfg, *op);
    if (!bytes) continue;
    const Type& t = op->operand(0)->type();
    const std::string name = op->operand(0)->definingOp()->stringAttr("name");
    auto it = std::find_if(launch.alignment.begin(), launch.alignment.end(), [&](auto& a) { return a.first == name; });
    if (it == launch.alignment.end()) launch.alignment.push_back({name, bytes});
    else it->second = std::max<int64_t>(it->second, bytes);
    const tile::TensorLayout l = tile::tensorLayout(t);
    const ir::Extent& row = t.shape()[size_t(l.contiguousAxis())];
    if (!l.strided() && row.isSymbolic()) launch.requireMultiple(row.sym, 2);
  }
}

}  // namespace kiln::sm80
