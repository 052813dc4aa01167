// Verify hooks and registration of the tile dialect (ops declared in tile_ops.def).
#include <algorithm>

#include "dialects/ptx_name.h"
#include "dialects/tile/tensor_layout.h"
#include "dialects/tile/tile_ops.h"
#include "dialects/tile/tile_verify.h"
#include "kiln/ir/op_registry.h"

namespace kiln::tile {
using namespace kiln::ir;

const Operation* programOf(const Operation& op) {
  return op.is("tile.program") ? &op : op.enclosing("tile.program");
}

std::vector<std::string> programDims(const Operation& op) {
  const Operation* p = programOf(op);
  return p ? p->stringsAttr("dims") : std::vector<std::string>{};
}

bool hasDim(const std::vector<std::string>& dims, const std::string& d) {
  return std::find(dims.begin(), dims.end(), d) != dims.end();
}

std::string blockedBy(const Operation& op, const std::string& dim) {
  if (const Operation* ft = op.enclosing("tile.for_tiles")) {
    if (hasDim(ft->stringsAttr("dims"), dim)) return "the tile loop splits it into blocks";
    if (ft->stringAttr("batch") == dim) return "it is the tile loop's batch dim";
  }
  std::string why;
  if (const Operation* p = programOf(op))
    p->walk([&](const Operation& o) {
      if (why.empty() && o.is("tile.reduce") && o.stringAttr("dim") == dim)
        why = "a tile.reduce loop iterates it block by block";
    });
  return why;
}

namespace {

bool isTile(const Type& t) { return isTileType(t); }
bool isTensor(const Type& t) { return isTensorType(t); }
bool isIndexLike(const Type& t) { return t.isScalar() && isInteger(t.elem()) && t.elem() != ScalarType::I1; }

// ---- program structure ----

// Every dim a type inside the program names must be one of the program's dims: the interpreter and
// the lowerings look each one up in the dims the launch gives (tensor arguments are checked by
// verifyArg; this covers tiles, coords and block arguments).
bool verifyTypesUseProgramDims(const Operation& program, const std::vector<std::string>& dims, DiagnosticEngine& d) {
  bool ok = true;
  auto check = [&](const Operation& at, const Type& t) {
    for (const auto& e : t.shape())
      if (ok && e.isSymbolic() && !hasDim(dims, e.sym))
        ok = d.error(at.loc()) << "'" << at.name() << "' has type " << t.str() << ", whose dim '" << e.sym
                               << "' is not a dim of the program; declare it in the program's dims or use one of them";
  };
  program.walk([&](const Operation& op) {
    if (op.is("tile.input") || op.is("tile.output")) return;  // verifyArg says which tensor
    for (const auto& r : op.results()) check(op, r->type());
    for (unsigned i = 0; i < op.numRegions(); ++i)
      for (const auto& b : op.region(i).blocks())
        for (unsigned a = 0; a < b->numArguments(); ++a) check(op, b->argument(a)->type());
  });
  return ok;
}

// An output no tile.store writes would come back as whatever the buffer held (the interpreter's
// poison, the GPU's garbage): almost certainly a mistake, and one no later check could catch.
bool verifyOutputsStored(const Operation& program, DiagnosticEngine& d) {
  std::vector<const ir::Value*> stored;
  program.walk([&](const Operation& op) {
    if (op.is("tile.store") && op.numOperands() > 0) stored.push_back(op.operand(0));
  });
  for (const auto& child : program.body().operations())
    if (child->is("tile.output") && child->numResults() == 1 &&
        std::find(stored.begin(), stored.end(), child->result()) == stored.end())
      return d.error(child->loc()) << "output '" << child->stringAttr("name")
                                   << "' is never stored: add a tile.store into it, or make it a tile.input";
  return true;
}

bool verifyProgram(const Operation& op, DiagnosticEngine& d) {
  if (op.stringAttr("sym_name").empty())
    return d.error(op.loc()) << "'tile.program' needs a {sym_name = \"...\"} attribute naming the kernel";
  if (std::string bad = ptxNameProblem(op.stringAttr("sym_name")); !bad.empty()) return d.error(op.loc()) << bad;
  const Attribute* dims = op.attr("dims");
  if (!dims || !dims->asStrings())
    return d.error(op.loc()) << "'tile.program' needs {dims = [\"M\", ...]}: the list of its symbolic dims";
  auto names = *dims->asStrings();
  for (size_t i = 0; i < names.size(); ++i)
    for (size_t j = i + 1; j < names.size(); ++j)
      if (names[i] == names[j]) return d.error(op.loc()) << "dim '" << names[i] << "' is declared twice";
  if (!verifyTypesUseProgramDims(op, names, d)) return false;
  if (op.body().numArguments() != 0) return d.error(op.loc()) << "'tile.program' body takes no arguments";
  std::vector<std::string> argNames;
  for (const auto& child : op.body().operations()) {
    if (child->is("tile.input") || child->is("tile.output") || child->is("tile.scalar")) {
      std::string n = child->stringAttr("name");
      if (std::find(argNames.begin(), argNames.end(), n) != argNames.end())
        return d.error(child->loc()) << "argument name '" << n << "' is used twice";
      argNames.push_back(n);
    }
  }
  return verifyOutputsStored(op, d);
}

bool verifyArg(const Operation& op, DiagnosticEngine& d) {
  if (op.stringAttr("name").empty())
    return d.error(op.loc()) << "'" << op.name() << "' needs a {name = \"...\"} attribute";
  if (!op.parentOp() || !op.parentOp()->is("tile.program"))
    return d.error(op.loc()) << "'" << op.name() << "' must be declared directly in a tile.program";
  const Type& t = op.result()->type();
  if (op.is("tile.scalar")) {
    if (!t.isScalar()) return d.error(op.loc()) << "'tile.scalar' must have a scalar type, not " << t.str();
    return true;
  }
  if (!isTensor(t)) return d.error(op.loc()) << "'" << op.name() << "' must have a tensor<elem, [dims]> type, not " << t.str();
  if (t.rank() == 0) return d.error(op.loc()) << "tensor argument '" << op.stringAttr("name") << "' needs at least one dim";
  auto dims = programDims(op);
  for (const auto& e : t.shape()) {
    if (e.isSymbolic() && !hasDim(dims, e.sym))
      return d.error(op.loc()) << "tensor '" << op.stringAttr("name") << "' uses dim '" << e.sym
                               << "', which the program does not declare in its dims";
    if (!e.isSymbolic() && e.value <= 0)
      return d.error(op.loc()) << "tensor '" << op.stringAttr("name") << "' has a non-positive extent " << e.value;
  }
  if (const Attribute* order = t.param("order")) {
    auto o = order->asInts();
    bool ok = o && o->size() == t.rank();
    std::vector<bool> seen(t.rank(), false);
    for (size_t i = 0; ok && i < o->size(); ++i) {
      int64_t v = (*o)[i];
      ok = v >= 0 && v < static_cast<int64_t>(t.rank()) && !seen[v];
      if (ok) seen[v] = true;
    }
    if (!ok)
      return d.error(op.loc()) << "tensor '" << op.stringAttr("name")
                               << "' has an invalid order: it must list each axis 0.." << t.rank() - 1
                               << " once, fastest first";
  }
  if (std::string bad = stridesProblem(t, op.stringAttr("name"), dims); !bad.empty()) return d.error(op.loc()) << bad;
  return verifyTensorBlock(op, d);
}

bool verifyDim(const Operation& op, DiagnosticEngine& d) {
  std::string n = op.stringAttr("name");
  if (!hasDim(programDims(op), n)) return d.error(op.loc()) << "'tile.dim' names '" << n << "', which is not a dim of the program";
  if (!op.result()->type().isScalar(ScalarType::Index)) return d.error(op.loc()) << "'tile.dim' produces an index";
  return true;
}

bool verifyForTiles(const Operation& op, DiagnosticEngine& d) {
  if (!op.parentOp() || !op.parentOp()->is("tile.program"))
    return d.error(op.loc()) << "'tile.for_tiles' must be directly in a tile.program";
  auto dims = op.stringsAttr("dims");
  if (dims.empty()) return d.error(op.loc()) << "'tile.for_tiles' needs {dims = [...]}: the output dims to tile";
  auto pdims = programDims(op);
  std::string batch = op.stringAttr("batch");
  if (!batch.empty() && !hasDim(pdims, batch))
    return d.error(op.loc()) << "batch dim '" << batch << "' is not a dim of the program";
  for (const auto& dim : dims)
    if (!hasDim(pdims, dim)) return d.error(op.loc()) << "tile dim '" << dim << "' is not a dim of the program";
  const Block& body = op.body();
  size_t expected = dims.size() + (batch.empty() ? 0 : 1);
  if (body.numArguments() != expected)
    return d.error(op.loc()) << "'tile.for_tiles' body needs " << expected << " arguments ("
                             << (batch.empty() ? "" : "the batch index, then ") << "one coord per tile dim)";
  size_t a = 0;
  if (!batch.empty() && !body.argument(a++)->type().isScalar(ScalarType::Index))
    return d.error(op.loc()) << "the batch argument of 'tile.for_tiles' must be an index";
  for (const auto& dim : dims)
    if (body.argument(a++)->type() != types::coord(dim))
      return d.error(op.loc()) << "'tile.for_tiles' argument for dim '" << dim << "' must be coord<[" << dim << "]>";
  if (body.back()->numOperands() != 0) return d.error(op.loc()) << "'tile.for_tiles' body yields nothing";
  return verifyRaggedTiles(op, d);
}

bool verifyReduce(const Operation& op, DiagnosticEngine& d) {
  std::string dim = op.stringAttr("dim");
  if (!hasDim(programDims(op), dim))
    return d.error(op.loc()) << "'tile.reduce' needs {dim = \"...\"} naming a dim of the program, got \"" << dim << "\"";
  if (!op.enclosing("tile.for_tiles")) return d.error(op.loc()) << "'tile.reduce' must be inside a tile.for_tiles";
  const Block& body = op.body();
  size_t n = op.numOperands();
  if (op.numResults() != n)
    return d.error(op.loc()) << "'tile.reduce' carries " << n << " values but has " << op.numResults() << " results";
  if (body.numArguments() != n + 1 || body.argument(0)->type() != types::coord(dim))
    return d.error(op.loc()) << "'tile.reduce' body needs coord<[" << dim << "]> and one argument per carried value";
  const Operation* y = body.back();
  if (y->numOperands() != n) return d.error(y->loc()) << "'tile.yield' must yield the " << n << " carried values of 'tile.reduce'";
  for (size_t i = 0; i < n; ++i) {
    const Type& t = op.operand(i)->type();
    if (body.argument(1 + i)->type() != t || op.result(i)->type() != t || y->operand(i)->type() != t)
      return d.error(op.loc()) << "carried value #" << i << " of 'tile.reduce' must keep its type " << t.str()
                               << " through the loop";
  }
  return true;
}

// ---- memory access ----

bool verifyIndices(const Operation& op, DiagnosticEngine& d, unsigned numIndices, const Type& resultOrValue) {
  std::string why;
  auto shape = accessShape(op, numIndices, &why);
  if (!shape) return d.error(op.loc()) << why;
  if (!isTile(resultOrValue)) return d.error(op.loc()) << "'" << op.name() << "' moves a tile, not " << resultOrValue.str();
  if (resultOrValue.shape() != *shape)
    return d.error(op.loc()) << "'" << op.name() << "' at these indices moves a tile of shape " << shapeStr(*shape)
                             << ", but the tile has shape " << shapeStr(resultOrValue.shape());
  return true;
}

bool verifyLoad(const Operation& op, DiagnosticEngine& d) {
  if (op.numOperands() < 1) return d.error(op.loc()) << "'tile.load' needs a tensor operand";
  const Type& r = op.result()->type();
  if (!verifyIndices(op, d, op.numOperands() - 1, r)) return false;
  if (r.elem() != op.operand(0)->type().elem())
    return d.error(op.loc()) << "'tile.load' result element type " << scalarName(r.elem())
                             << " differs from the tensor's " << scalarName(op.operand(0)->type().elem());
  if (const Attribute* o = op.attr("other"); o && !(o->isInt() || o->isFloat()))
    return d.error(op.loc()) << "'tile.load' {other} must be a number";
  return true;
}

bool verifyStore(const Operation& op, DiagnosticEngine& d) {
  if (op.numOperands() < 2) return d.error(op.loc()) << "'tile.store' needs a tensor, indices and a value";
  const Operation* def = op.operand(0)->definingOp();
  if (def && def->is("tile.input"))
    return d.error(op.loc()) << "'tile.store' writes to input '" << def->stringAttr("name")
                             << "'; declare it with tile.output to write it";
  const Type& v = op.operand(op.numOperands() - 1)->type();
  if (!verifyIndices(op, d, op.numOperands() - 2, v)) return false;
  if (v.elem() != op.operand(0)->type().elem())
    return d.error(op.loc()) << "'tile.store' of a " << scalarName(v.elem()) << " tile into a "
                             << scalarName(op.operand(0)->type().elem()) << " tensor: cast it first with tile.cast";
  return true;
}

bool verifyLoadScalar(const Operation& op, DiagnosticEngine& d) {
  if (op.numOperands() < 1 || !isTensor(op.operand(0)->type()))
    return d.error(op.loc()) << "'tile.load_scalar' needs a tensor operand";
  const Type& t = op.operand(0)->type();
  if (op.numOperands() - 1 != t.rank())
    return d.error(op.loc()) << "'tile.load_scalar' needs " << t.rank() << " indices for a rank-" << t.rank() << " tensor";
  for (unsigned i = 1; i < op.numOperands(); ++i) {
    const Type& it = op.operand(i)->type();
    if (!it.isKind("coord") && !isIndexLike(it))
      return d.error(op.loc()) << "index #" << i - 1 << " of 'tile.load_scalar' must be a coord or an integer";
  }
  if (op.result()->type() != Type::scalar(t.elem()))
    return d.error(op.loc()) << "'tile.load_scalar' produces the tensor's element type " << scalarName(t.elem());
  return true;
}

bool verifyGroupIndex(const Operation& op, DiagnosticEngine& d) {
  const Type& ids = op.operand(0)->type();
  if (!isTensor(ids) || ids.rank() != 1 || !(ids.elem() == ScalarType::I32 || ids.elem() == ScalarType::I64))
    return d.error(op.loc()) << "'tile.group_index' reads a rank-1 i32 or i64 tensor of per-row group ids";
  std::string m = coordDim(op.operand(1));
  if (m.empty() || ids.shape()[0] != Extent::of(m))
    return d.error(op.loc()) << "'tile.group_index' is indexed by the coord of the row dim of the id tensor";
  if (op.intAttr("align", 0) <= 0)
    return d.error(op.loc()) << "'tile.group_index' needs {align = N}: every group's row count is a multiple of N";
  if (!op.result()->type().isScalar(ScalarType::Index)) return d.error(op.loc()) << "'tile.group_index' produces an index";
  return true;
}

// ---- math ----

bool verifyDot(const Operation& op, DiagnosticEngine& d) {
  return verifyMatmul(op, *op.operand(0), *op.operand(1), *op.operand(2), d);
}

bool verifyConstant(const Operation& op, DiagnosticEngine& d) {
  const Attribute* v = op.attr("value");
  if (!v || !(v->isInt() || v->isFloat())) return d.error(op.loc()) << "'tile.constant' needs a numeric {value}";
  const Type& t = op.result()->type();
  if (!isTile(t) && !t.isScalar()) return d.error(op.loc()) << "'tile.constant' produces a tile or a scalar";
  return true;
}

bool isFloatValue(const Type& t) { return (isTile(t) || t.isScalar()) && isFloat(t.elem()); }

bool verifyBinary(const Operation& op, DiagnosticEngine& d) {
  const Type &a = op.operand(0)->type(), &b = op.operand(1)->type(), &r = op.result()->type();
  if (!isFloatValue(a) || !isFloatValue(b))
    return d.error(op.loc()) << "'" << op.name() << "' works on float tiles or scalars, got " << a.str() << " and " << b.str();
  if (a.elem() != b.elem())
    return d.error(op.loc()) << "'" << op.name() << "' operands have different element types " << scalarName(a.elem())
                             << " and " << scalarName(b.elem()) << "; insert a tile.cast";
  if (isTile(a) && isTile(b) && a.shape() != b.shape())
    return d.error(op.loc()) << "'" << op.name() << "' operands have shapes " << shapeStr(a.shape()) << " and "
                             << shapeStr(b.shape()) << "; broadcast one with tile.broadcast";
  const Type& expect = isTile(a) ? a : b;
  if (r != expect) return d.error(op.loc()) << "'" << op.name() << "' result must be " << expect.str();
  return true;
}

bool verifyUnary(const Operation& op, DiagnosticEngine& d) {
  const Type& a = op.operand(0)->type();
  if (!isFloatValue(a)) return d.error(op.loc()) << "'" << op.name() << "' works on float tiles or scalars, got " << a.str();
  if (op.result()->type() != a) return d.error(op.loc()) << "'" << op.name() << "' result must be " << a.str();
  return true;
}

bool verifyCast(const Operation& op, DiagnosticEngine& d) {
  const Type &a = op.operand(0)->type(), &r = op.result()->type();
  bool bothTiles = isTile(a) && isTile(r) && a.shape() == r.shape();
  if (!bothTiles && !(a.isScalar() && r.isScalar()))
    return d.error(op.loc()) << "'tile.cast' changes the element type only: " << a.str() << " cannot become " << r.str();
  return true;
}

bool verifyBroadcast(const Operation& op, DiagnosticEngine& d) {
  const Type &a = op.operand(0)->type(), &r = op.result()->type();
  if (!isTile(r)) return d.error(op.loc()) << "'tile.broadcast' produces a tile";
  if (a.elem() != r.elem()) return d.error(op.loc()) << "'tile.broadcast' keeps the element type";
  if (a.isScalar()) return true;
  if (!isTile(a) || a.rank() >= r.rank())
    return d.error(op.loc()) << "'tile.broadcast' extends a smaller tile: " << a.str() << " to " << r.str();
  // The source dims must appear in the result in the same order.
  size_t j = 0;
  for (const auto& e : r.shape())
    if (j < a.rank() && a.shape()[j] == e) ++j;
  if (j != a.rank())
    return d.error(op.loc()) << "'tile.broadcast' cannot extend " << shapeStr(a.shape()) << " to " << shapeStr(r.shape())
                             << ": the source dims must appear in the result, in order";
  return true;
}

bool verifyScale(const Operation& op, DiagnosticEngine& d) {
  const Type &x = op.operand(0)->type(), &s = op.operand(1)->type();
  if (!isTile(x) || x.rank() != 2 || x.elem() != ScalarType::F32)
    return d.error(op.loc()) << "'tile.scale' scales an f32 [M, N] tile, got " << x.str();
  if (s.isScalar(ScalarType::F32)) return op.result()->type() == x || (d.error(op.loc()) << "'tile.scale' result must be " << x.str());
  if (!isTile(s) || s.elem() != ScalarType::F32 || s.rank() != 1 ||
      (s.shape()[0] != x.shape()[0] && s.shape()[0] != x.shape()[1]))
    return d.error(op.loc()) << "'tile.scale' scales must be f32 [" << x.shape()[0].str() << "] (per row), ["
                             << x.shape()[1].str() << "] (per column) or an f32 scalar (per block), got " << s.str();
  if (op.result()->type() != x) return d.error(op.loc()) << "'tile.scale' result must be " << x.str();
  return true;
}

}  // namespace

bool verifyMatmul(const Operation& op, const Value& av, const Value& bv, const Value& accv, DiagnosticEngine& d) {
  const Type &a = av.type(), &b = bv.type(), &c = accv.type();
  const Type& r = op.result()->type();
  const std::string n = "'" + op.name() + "'";
  if (!isTile(a) || !isTile(b) || !isTile(c) || a.rank() != 2 || b.rank() != 2 || c.rank() != 2)
    return d.error(op.loc()) << n << " multiplies rank-2 tiles: a [M, K], b [K, N], acc [M, N]";
  auto mmaType = [](ScalarType t) { return t == ScalarType::BF16 || t == ScalarType::F16 || isFp8(t); };
  if (!mmaType(a.elem()) || !mmaType(b.elem()))
    return d.error(op.loc()) << n << " operands must be bf16, f16, f8e4m3 or f8e5m2, got " << scalarName(a.elem())
                             << " and " << scalarName(b.elem());
  if (a.elem() != b.elem() && !(isFp8(a.elem()) && isFp8(b.elem())))
    return d.error(op.loc()) << n << " operands must have one element type (FP8 formats may mix), got "
                             << scalarName(a.elem()) << " and " << scalarName(b.elem());
  if (c.elem() != ScalarType::F32) return d.error(op.loc()) << n << " accumulates in f32; the accumulator is " << c.str();
  if (a.shape()[1] != b.shape()[0])
    return d.error(op.loc()) << n << " inner dims differ: a is " << shapeStr(a.shape()) << ", b is " << shapeStr(b.shape());
  if (c.shape()[0] != a.shape()[0] || c.shape()[1] != b.shape()[1])
    return d.error(op.loc()) << n << " accumulator " << shapeStr(c.shape()) << " does not match a " << shapeStr(a.shape())
                             << " times b " << shapeStr(b.shape());
  if (r != c) return d.error(op.loc()) << n << " result must have the accumulator's type " << c.str();
  return true;
}

std::string coordDim(const Value* v) {
  const Type& t = v->type();
  if (!t.isKind("coord") || t.rank() != 1 || !t.shape()[0].isSymbolic()) return {};
  return t.shape()[0].sym;
}

std::optional<Shape> accessShape(const Operation& op, unsigned numIndices, std::string* why) {
  const Type& t = op.operand(0)->type();
  if (!isTensor(t)) {
    *why = "'" + op.name() + "' needs a tensor as its first operand, got " + t.str();
    return std::nullopt;
  }
  if (numIndices != t.rank()) {
    *why = "'" + op.name() + "' needs " + std::to_string(t.rank()) + " indices for a rank-" + std::to_string(t.rank()) +
           " tensor, got " + std::to_string(numIndices);
    return std::nullopt;
  }
  Shape shape;
  for (unsigned i = 0; i < numIndices; ++i) {
    const Value* idx = op.operand(1 + i);
    std::string dim = coordDim(idx);
    if (!dim.empty()) {
      if (t.shape()[i] != Extent::of(dim)) {
        *why = "'" + op.name() + "' index #" + std::to_string(i) + " is the coord of dim " + dim +
               ", but the tensor's axis " + std::to_string(i) + " is " + t.shape()[i].str();
        return std::nullopt;
      }
      shape.push_back(Extent::of(dim));
    } else if (!isIndexLike(idx->type())) {
      *why = "'" + op.name() + "' index #" + std::to_string(i) + " must be a coord or an integer, got " + idx->type().str();
      return std::nullopt;
    }
  }
  return shape;
}

std::optional<OpKind> kindOf(const Operation& op) {
  static const std::string_view names[] = {
#define TILE_OP(e, name, ...) name,
#include "tile_ops.def"
#undef TILE_OP
  };
  for (size_t i = 0; i < std::size(names); ++i)
    if (op.name() == names[i]) return static_cast<OpKind>(i);
  return std::nullopt;
}

std::string_view opName(OpKind k) {
  static const std::string_view names[] = {
#define TILE_OP(e, name, ...) name,
#include "tile_ops.def"
#undef TILE_OP
  };
  return names[static_cast<size_t>(k)];
}

bool isElementwiseBinary(OpKind k) { return k >= OpKind::Add && k <= OpKind::Min; }
bool isElementwiseUnary(OpKind k) { return k >= OpKind::Neg && k <= OpKind::Erf; }

}  // namespace kiln::tile

namespace kiln::ir {
void registerTileDialect(OpRegistry& r) {
  using namespace kiln::tile;
#define TILE_OP(e, name, nops, nres, nreg, traits, hook, summary, attrs) \
  r.add({name, nops, nres, nreg, traits, hook, summary, words(attrs)});
#include "tile_ops.def"
#undef TILE_OP
  // tensor<e, [dims], order = [...] | strides = [...], block = [...]>: the layout of a global
  // tensor (tensor_layout.h) and the blocks one stored element covers (tile_scaled_ops.cpp); tile
  // and coord take none.
  r.addTypeKind("tensor", {"order", "strides", "block"});
  r.addTypeKind("tile", {});
  r.addTypeKind("coord", {});
}
// The kern dialect registers its ops in src/dialects/kern/ once they exist.
}  // namespace kiln::ir
