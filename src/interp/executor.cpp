// Op-by-op evaluation of a tile program (see executor.h).
#include "interp/executor.h"

#include <algorithm>

#include "dialects/tile/tile_ops.h"
#include "interp/broadcast.h"
#include "interp/dot.h"
#include "interp/elementwise.h"
#include "interp/group_ids.h"
#include "interp/memory_ops.h"
#include "interp/ragged_groups.h"
#include "interp/reduce_axis.h"
#include "interp/scalar_ops.h"
#include "kiln/ir/op_registry.h"
#include "support/checked_math.h"

namespace kiln::interp {

using tile::OpKind;

// ---- value access (a verified program guarantees the kinds; a mismatch is an interpreter bug) ----

const RtValue& Executor::get(const ir::Value* v) const {
  auto it = ctx_.env.find(v);
  KILN_ASSERT(it != ctx_.env.end(), "value used before the interpreter computed it");
  return it->second;
}
const Scalar& Executor::scalar(const ir::Value* v) const {
  const Scalar* s = std::get_if<Scalar>(&get(v));
  KILN_ASSERT(s, "expected a scalar value");
  return *s;
}
const Coord& Executor::coord(const ir::Value* v) const {
  const Coord* c = std::get_if<Coord>(&get(v));
  KILN_ASSERT(c, "expected a coord value");
  return *c;
}
const Tile& Executor::tile(const ir::Value* v) const {
  const TilePtr* t = std::get_if<TilePtr>(&get(v));
  KILN_ASSERT(t && *t, "expected a tile value");
  return **t;
}
const BoundTensor& Executor::tensor(const ir::Value* v) const {
  auto* t = std::get_if<const BoundTensor*>(&get(v));
  KILN_ASSERT(t && *t, "expected a tensor value");
  return **t;
}

std::span<const double> Executor::values(const ir::Value* v) const {
  if (v->type().isScalar()) {
    const Scalar& s = scalar(v);
    KILN_ASSERT(ir::isFloat(s.type), "elementwise math on an integer scalar");
    return {&s.f, 1};
  }
  return tile(v).data;
}

std::vector<double> Executor::anyValues(const ir::Value* v) const {
  if (v->type().isScalar()) return {scalar(v).value()};
  return tile(v).data;
}

std::vector<int64_t> Executor::blockShape(const ir::Type& t) const {
  std::vector<int64_t> shape;
  for (const auto& e : t.shape()) shape.push_back(e.isSymbolic() ? ctx_.blocks.at(e.sym) : e.value);
  return shape;
}

void Executor::setValues(const ir::Value* v, std::vector<double> data) {
  const ir::Type& t = v->type();
  if (t.isScalar()) {
    KILN_ASSERT(data.size() == 1, "a scalar result with several values");
    set(v, ir::isFloat(t.elem()) ? Scalar::ofFloat(t.elem(), data[0])
                                 : Scalar::ofInt(t.elem(), static_cast<int64_t>(data[0])));
    return;
  }
  auto r = std::make_shared<Tile>();
  r->elem = t.elem();
  r->shape = blockShape(t);
  KILN_ASSERT(static_cast<int64_t>(data.size()) == numElements(r->shape), "a tile result of the wrong size");
  r->data = std::move(data);
  set(v, TilePtr(std::move(r)));
}

// ---- control flow ----

bool Executor::runProgram(const ir::Operation& program) { return runBlock(program.body(), nullptr); }

bool Executor::runBlock(const ir::Block& block, std::vector<RtValue>* yielded) {
  for (const auto& op : block.operations()) {
    if (op->info() && op->info()->has(ir::kTerminator)) {
      if (yielded) {
        yielded->clear();
        for (const ir::Value* v : op->operands()) yielded->push_back(get(v));
      }
      return true;
    }
    if (!runOp(*op)) return false;
  }
  return true;
}

// A ragged loop (tile_ops.h, "Ragged groups"): per group, the blocks of the other tiled dims as
// usual, and those of the ragged dim inside the group's range when the loop tiles it. Instances
// are numbered in the order they run, for RunOptions::instances.
bool Executor::runRaggedTiles(const ir::Operation& op) {
  auto ranges = raggedGroupRanges(op, ctx_);
  if (!ranges) return false;
  std::vector<std::string> dims = op.stringsAttr("dims");
  const ir::Block& body = op.body();
  const auto& only = ctx_.onlyInstances;
  int64_t flat = 0;
  ctx_.raggedDim = op.stringAttr("ragged");
  for (size_t g = 0; g < ranges->size(); ++g) {
    ctx_.raggedLo = (*ranges)[g].lo;
    ctx_.raggedHi = (*ranges)[g].hi;
    std::vector<int64_t> firsts, counts;  // per tiled dim: the first block's start and the number of blocks
    int64_t instances = 1;
    for (const auto& d : dims) {
      int64_t b = ctx_.blocks.at(d);
      bool ragged = d == ctx_.raggedDim;
      firsts.push_back(ragged ? ctx_.raggedLo : 0);
      counts.push_back(support::ceilDiv(ragged ? ctx_.raggedHi - ctx_.raggedLo : ctx_.extents.at(d), b));
      instances *= counts.back();
    }
    for (int64_t n = 0; n < instances; ++n, ++flat) {
      if (!only.empty() && !std::binary_search(only.begin(), only.end(), flat)) continue;
      int64_t rest = n;
      std::vector<int64_t> blockIdx(dims.size());
      for (size_t i = dims.size(); i-- > 0;) {
        blockIdx[i] = rest % counts[i];
        rest /= counts[i];
      }
      set(body.argument(0), Scalar::ofInt(ir::ScalarType::Index, static_cast<int64_t>(g)));
      for (size_t i = 0; i < dims.size(); ++i) {
        int64_t b = ctx_.blocks.at(dims[i]);
        Coord c{firsts[i] + blockIdx[i] * b, b};
        if (dims[i] == ctx_.raggedDim) c.limit = ctx_.raggedHi;
        set(body.argument(1 + static_cast<unsigned>(i)), c);
      }
      if (!runBlock(body, nullptr)) return false;
    }
  }
  ctx_.raggedDim.clear();
  return true;
}

bool Executor::runForTiles(const ir::Operation& op) {
  if (!op.stringAttr("ragged").empty()) return runRaggedTiles(op);
  std::vector<std::string> dims = op.stringsAttr("dims");
  std::string batch = op.stringAttr("batch");
  int64_t batches = batch.empty() ? 1 : ctx_.extents.at(batch);
  std::vector<int64_t> counts;  // blocks per tiled dim
  int64_t instances = batches;
  for (const auto& d : dims) {
    counts.push_back(support::ceilDiv(ctx_.extents.at(d), ctx_.blocks.at(d)));
    instances *= counts.back();  // cannot overflow: checkTileSizes checked the product
  }
  const ir::Block& body = op.body();
  // Row-major over (batch, block of dims[0], block of dims[1], ...); the contract allows any order.
  const auto& only = ctx_.onlyInstances;
  for (int64_t n = 0; n < instances; ++n) {
    if (!only.empty() && !std::binary_search(only.begin(), only.end(), n)) continue;
    int64_t rest = n;
    std::vector<int64_t> blockIdx(dims.size());
    for (size_t i = dims.size(); i-- > 0;) {
      blockIdx[i] = rest % counts[i];
      rest /= counts[i];
    }
    unsigned arg = 0;
    if (!batch.empty()) set(body.argument(arg++), Scalar::ofInt(ir::ScalarType::Index, rest));
    for (size_t i = 0; i < dims.size(); ++i) {
      int64_t b = ctx_.blocks.at(dims[i]);
      set(body.argument(arg++), Coord{blockIdx[i] * b, b});
    }
    if (!runBlock(body, nullptr)) return false;
  }
  return true;
}

bool Executor::runReduce(const ir::Operation& op) {
  std::string dim = op.stringAttr("dim");
  int64_t b = ctx_.blocks.at(dim);
  // A ragged dim iterates the current group's range only, its positions past the range outside.
  bool ragged = dim == ctx_.raggedDim;
  int64_t first = ragged ? ctx_.raggedLo : 0, end = ragged ? ctx_.raggedHi : ctx_.extents.at(dim);
  std::vector<RtValue> carried;
  for (const ir::Value* v : op.operands()) carried.push_back(get(v));
  const ir::Block& body = op.body();
  for (int64_t start = first; start < end; start += b) {  // blocks of the dim, increasing
    set(body.argument(0), ragged ? Coord{start, b, end} : Coord{start, b});
    for (size_t i = 0; i < carried.size(); ++i) set(body.argument(1 + i), carried[i]);
    if (!runBlock(body, &carried)) return false;
  }
  for (size_t i = 0; i < carried.size(); ++i) set(op.result(i), carried[i]);
  return true;
}

bool Executor::runScfFor(const ir::Operation& op) {
  int64_t lb = scalar(op.operand(0)).i, ub = scalar(op.operand(1)).i, step = scalar(op.operand(2)).i;
  if (step <= 0) return ctx_.diag.error(op.loc()) << "'scf.for' step must be positive, got " << step;
  ir::ScalarType ivType = op.operand(0)->type().elem();
  std::vector<RtValue> carried;
  for (unsigned i = 3; i < op.numOperands(); ++i) carried.push_back(get(op.operand(i)));
  const ir::Block& body = op.body();
  for (int64_t iv = lb; iv < ub; iv = ub - iv > step ? iv + step : ub) {  // no overflow past ub
    set(body.argument(0), Scalar::ofInt(ivType, iv));
    for (size_t i = 0; i < carried.size(); ++i) set(body.argument(1 + i), carried[i]);
    if (!runBlock(body, &carried)) return false;
  }
  for (size_t i = 0; i < carried.size(); ++i) set(op.result(i), carried[i]);
  return true;
}

bool Executor::runScfIf(const ir::Operation& op) {
  std::vector<RtValue> results;
  if (!runBlock(op.body(scalar(op.operand(0)).i ? 0 : 1), &results)) return false;
  for (size_t i = 0; i < results.size(); ++i) set(op.result(i), results[i]);
  return true;
}

bool Executor::runArith(const ir::Operation& op) {
  std::vector<Scalar> args;
  for (const ir::Value* v : op.operands()) args.push_back(scalar(v));
  std::optional<Scalar> r = evalArith(op, args, ctx_);
  if (!r) return false;
  set(op.result(), *r);
  return true;
}

// ---- tile ops ----

bool Executor::runMemory(const ir::Operation& op) {
  const BoundTensor& t = tensor(op.operand(0));
  bool isStore = op.is("tile.store");
  size_t numIdx = op.numOperands() - 1 - (isStore ? 1 : 0);
  std::vector<AccessIndex> idx;
  for (unsigned i = 1; i <= numIdx; ++i) {
    const ir::Value* v = op.operand(i);
    if (v->type().isKind("coord")) idx.push_back({true, coord(v).start, coord(v).size, coord(v).limit});
    else idx.push_back({false, scalar(v).i, 1});
  }
  if (op.is("tile.load")) {
    const ir::Attribute* other = op.attr("other");
    set(op.result(), loadTile(t, idx, roundToType(other ? other->asNumber() : 0.0, t.dtype)));
  } else if (isStore) {
    storeTile(t, idx, tile(op.operand(op.numOperands() - 1)));
  } else {  // tile.load_scalar: the first position of each coord's block
    int64_t off = 0;
    for (size_t a = 0; a < idx.size(); ++a) {
      if (idx[a].start < 0 || idx[a].start >= t.extents[a])
        return ctx_.diag.error(op.loc()) << "'tile.load_scalar' reads outside tensor '" << t.name << "': index "
                                         << idx[a].start << " on axis " << a << " of extent " << t.extents[a];
      off += idx[a].start / (t.block.empty() ? 1 : t.block[a]) * t.strides[a];
    }
    setValues(op.result(), {t.read(off)});
  }
  return true;
}

bool Executor::runGroupIndex(const ir::Operation& op) {
  // The ids are checked as a whole the first time a block asks for its group.
  if (checkedGroupOps_.insert(&op).second && !checkGroupIds(op, ctx_)) return false;
  const BoundTensor& ids = tensor(op.operand(0));
  int64_t firstRow = coord(op.operand(1)).start;
  set(op.result(), Scalar::ofInt(ir::ScalarType::Index, static_cast<int64_t>(ids.read(firstRow * ids.strides[0]))));
  return true;
}

void Executor::runMath(const ir::Operation& op) {
  OpKind k = *tile::kindOf(op);
  const ir::Type& rt = op.result()->type();
  switch (k) {
    case OpKind::Constant: {
      double v = roundToType(op.attr("value")->asNumber(), rt.elem());
      setValues(op.result(), std::vector<double>(rt.isScalar() ? 1 : numElements(blockShape(rt)), v));
      return;
    }
    case OpKind::Dot:
      set(op.result(), dot(tile(op.operand(0)), tile(op.operand(1)), tile(op.operand(2)), ctx_.arith));
      return;
    case OpKind::DotScaled:
      set(op.result(), dotScaled(tile(op.operand(0)), tile(op.operand(1)), tile(op.operand(2)), tile(op.operand(3)),
                                 tile(op.operand(4)), op.intAttr("block_k"), ctx_.arith));
      return;
    case OpKind::Cast: {
      const ir::Value* x = op.operand(0);
      std::vector<double> in = x->type().isScalar() ? std::vector<double>{scalar(x).value()} : tile(x).data;
      setValues(op.result(), applyCast(in, x->type().elem(), rt.elem(), ctx_.arith));
      return;
    }
    case OpKind::Broadcast: {
      const ir::Value* x = op.operand(0);
      bool isScalar = x->type().isScalar();
      std::vector<double> src = isScalar ? std::vector<double>{scalar(x).value()} : tile(x).data;
      std::vector<int64_t> srcShape = isScalar ? std::vector<int64_t>{} : tile(x).shape;
      ir::Shape srcDims = isScalar ? ir::Shape{} : x->type().shape();
      setValues(op.result(), broadcastValues(src, srcDims, srcShape, rt.shape(), blockShape(rt)));
      return;
    }
    case OpKind::Iota: {
      const Coord& c = coord(op.operand(0));
      std::vector<double> positions(static_cast<size_t>(c.size));
      for (int64_t i = 0; i < c.size; ++i) positions[static_cast<size_t>(i)] = static_cast<double>(c.start + i);
      setValues(op.result(), std::move(positions));
      return;
    }
    case OpKind::ReduceAxis: {
      const ir::Type& xt = op.operand(0)->type();
      size_t axis = static_cast<size_t>(
          std::find(xt.shape().begin(), xt.shape().end(), ir::Extent::of(op.stringAttr("dim"))) - xt.shape().begin());
      Tile r = reduceAxis(tile(op.operand(0)), axis, op.stringAttr("kind"), rt.elem(), ctx_.arith);
      setValues(op.result(), std::move(r.data));
      return;
    }
    case OpKind::Pow:
      setValues(op.result(), applyPow(values(op.operand(0)), op.attr("exponent")->asNumber(), rt.elem(), ctx_.arith));
      return;
    case OpKind::Cmp:
      setValues(op.result(), applyCmp(op.stringAttr("pred"), anyValues(op.operand(0)), anyValues(op.operand(1))));
      return;
    case OpKind::Select:
      setValues(op.result(),
                applySelect(anyValues(op.operand(0)), anyValues(op.operand(1)), anyValues(op.operand(2))));
      return;
    case OpKind::Scale: {
      const Tile& x = tile(op.operand(0));
      const ir::Type& st = op.operand(1)->type();
      bool perRow = !st.isScalar() && st.shape()[0] == op.operand(0)->type().shape()[0];
      setValues(op.result(), applyScale(x.data, x.shape[0], x.shape[1], values(op.operand(1)), perRow, ctx_.arith));
      return;
    }
    default:
      break;
  }
  if (tile::isElementwiseBinary(k)) {
    setValues(op.result(), applyBinary(k, values(op.operand(0)), values(op.operand(1)), rt.elem(), ctx_.arith));
  } else if (tile::isElementwiseUnary(k)) {
    setValues(op.result(), applyUnary(k, values(op.operand(0)), rt.elem(), ctx_.arith));
  } else {
    KILN_ICE("the interpreter has no rule for '" + op.name() + "'");
  }
}

bool Executor::runOp(const ir::Operation& op) {
  if (op.dialect() == "arith") return runArith(op);
  if (op.is("scf.for")) return runScfFor(op);
  if (op.is("scf.if")) return runScfIf(op);
  std::optional<OpKind> k = tile::kindOf(op);
  if (!k) KILN_ICE("the interpreter has no rule for '" + op.name() + "'");
  switch (*k) {
    case OpKind::Input:
    case OpKind::Output:
    case OpKind::Scalar: return true;  // bound before the run
    case OpKind::Dim: set(op.result(), Scalar::ofInt(ir::ScalarType::Index, ctx_.extents.at(op.stringAttr("name")))); return true;
    case OpKind::ForTiles: return runForTiles(op);
    case OpKind::Reduce: return runReduce(op);
    case OpKind::Load:
    case OpKind::Store:
    case OpKind::LoadScalar: return runMemory(op);
    case OpKind::GroupIndex: return runGroupIndex(op);
    case OpKind::Span: set(op.result(), Coord{0, ctx_.extents.at(op.stringAttr("dim"))}); return true;
    case OpKind::Program:
    case OpKind::Yield: KILN_ICE("'" + op.name() + "' where the interpreter does not expect it");
    default: runMath(op); return true;
  }
}

}  // namespace kiln::interp
