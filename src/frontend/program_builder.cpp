// The C++ DSL (include/kiln/program_builder.h) building tile IR.
//
// Every builder call checks its inputs in the user's terms first and throws kiln::ir::Error at the
// user's source line; the op is then created at that location and its dialect verify hook runs too,
// so the DSL can never hand the compiler a program the verifier would reject.
#include "kiln/program_builder.h"

#include <algorithm>

#include "dialects/tile/tile_ops.h"
#include "kiln/dialects.h"
#include "kiln/ir/builder.h"
#include "kiln/ir/op_registry.h"
#include "kiln/ir/verifier.h"

namespace kiln {
using namespace kiln::ir;

namespace {
Location at(const SrcLoc& l) { return Location::fromCpp(l); }
}  // namespace

struct ProgramBuilder::State {
  std::unique_ptr<Module> module = std::make_unique<Module>();
  Operation* program = nullptr;
  OpBuilder b;
  std::vector<std::string> dims;
  Operation* forTiles = nullptr;
  // Open reduce bodies, innermost last: the detached op being built and the tiles rebound in it.
  struct OpenReduce {
    std::unique_ptr<Operation> op;
    Block* outer;                                   // where the finished op will be inserted
    std::vector<std::pair<Tile*, Value*>> carried;  // handle, value before the loop
  };
  std::vector<OpenReduce> reduces;
  bool finished = false;
};

// The dialects are installed before State builds its module (kiln/dialects.h).
ProgramBuilder::ProgramBuilder(std::string name, SrcLoc loc) : st_((registerAllDialects(), std::make_unique<State>())) {
  st_->b.setInsertionPointToEnd(&st_->module->body());
  st_->b.setLoc(at(loc));
  st_->program = st_->b.create("tile.program", {}, {},
                               {{"sym_name", name}, {"dims", Attribute(Attribute::Array{})}}, 1);
  st_->b.setInsertionPointToEnd(st_->program->region(0).addBlock());
  if (name.empty()) fail(loc, "a program needs a non-empty name");
}

ProgramBuilder::~ProgramBuilder() = default;

void ProgramBuilder::fail(const SrcLoc& loc, const std::string& message) const {
  throw Error(at(loc), message);
}

Operation* ProgramBuilder::emit(const SrcLoc& loc, std::string name, std::vector<Value*> operands,
                                std::vector<Type> results, std::vector<NamedAttr> attrs) {
  if (st_->finished) fail(loc, "the program was already finished; build a new ProgramBuilder");
  st_->b.setLoc(at(loc));
  Operation* op = st_->b.create(std::move(name), std::move(operands), std::move(results), std::move(attrs));
  // Run the op's own rules now, so a mistake is reported at the line that made it.
  DiagnosticEngine diag;
  if (op->info() && op->info()->verify && !op->info()->verify(*op, diag)) throw Error(diag.diagnostics());
  return op;
}

std::string ProgramBuilder::describe(const Value* v) const {
  std::string s = v->type().str();
  if (const Operation* def = v->definingOp(); def && def->loc().known())
    s += " (made at " + def->loc().str() + ")";
  return s;
}

void ProgramBuilder::checkVisible(const Value* v, const SrcLoc& loc, const char* what) const {
  if (!v) fail(loc, std::string("this ") + what + " is empty: it was default-constructed and never assigned");
  const Block* home = v->parentBlock();
  for (const Block* b = st_->b.insertionBlock(); b;) {
    if (b == home) return;
    const Operation* p = b->parentOp();
    const Block* next = p ? p->parentBlock() : nullptr;
    // An open reduce body is not attached yet: continue where it will be inserted.
    for (const auto& r : st_->reduces)
      if (r.op.get() == p) next = r.outer;
    b = next;
  }
  fail(loc, std::string("this ") + what + " (" + describe(v) +
                ") is used outside the loop that created it; create it outside the loop, or use it only inside");
}

Dim ProgramBuilder::dim(const Name& name) {
  if (name.s.empty()) fail(name.loc, "a dim needs a non-empty name");
  if (std::find(st_->dims.begin(), st_->dims.end(), name.s) != st_->dims.end())
    fail(name.loc, "dim '" + name.s + "' is declared twice");
  if (!st_->program->body().empty() && st_->program->body().back()->is("tile.for_tiles"))
    fail(name.loc, "declare dims before the tile loop");
  st_->dims.push_back(name.s);
  st_->program->setAttr("dims", Attribute::strings(st_->dims));
  return Dim{name.s, this};
}

static Tensor declareTensor(ProgramBuilder& pb, const char* opName, const std::string& name, Type type,
                            const SrcLoc& loc) {
  Operation* op = pb.emit(loc, opName, {}, {std::move(type)}, {{"name", name}});
  op->result()->setNameHint(name);
  return Tensor(op->result(), &pb, name);
}

static Shape shapeOf(const std::vector<Ext>& shape) {
  Shape s;
  for (const auto& e : shape) s.push_back(e.e);
  return s;
}

static Type stridedTensor(ScalarType dtype, const std::vector<Ext>& shape, const Strides& strides) {
  Attribute::Array a;
  for (const Ext& e : strides.v) a.push_back(e.e.isSymbolic() ? Attribute(e.e.sym) : Attribute(e.e.value));
  return Type::make("tensor", dtype, shapeOf(shape), {{"strides", Attribute(std::move(a))}});
}

Tensor ProgramBuilder::input(const std::string& name, ScalarType dtype, std::vector<Ext> shape,
                             std::vector<int64_t> order, SrcLoc loc) {
  if (st_->forTiles) fail(loc, "declare input '" + name + "' before the tile loop");
  return declareTensor(*this, "tile.input", name, types::tensor(dtype, shapeOf(shape), std::move(order)),
                       loc);
}

Tensor ProgramBuilder::output(const std::string& name, ScalarType dtype, std::vector<Ext> shape,
                              std::vector<int64_t> order, SrcLoc loc) {
  if (st_->forTiles) fail(loc, "declare output '" + name + "' before the tile loop");
  return declareTensor(*this, "tile.output", name, types::tensor(dtype, shapeOf(shape), std::move(order)),
                       loc);
}

Tensor ProgramBuilder::input(const std::string& name, ScalarType dtype, std::vector<Ext> shape, Strides strides,
                             SrcLoc loc) {
  if (st_->forTiles) fail(loc, "declare input '" + name + "' before the tile loop");
  return declareTensor(*this, "tile.input", name, stridedTensor(dtype, shape, strides), loc);
}

Tensor ProgramBuilder::output(const std::string& name, ScalarType dtype, std::vector<Ext> shape, Strides strides,
                              SrcLoc loc) {
  if (st_->forTiles) fail(loc, "declare output '" + name + "' before the tile loop");
  return declareTensor(*this, "tile.output", name, stridedTensor(dtype, shape, strides), loc);
}

Tensor ProgramBuilder::scales(const std::string& name, std::vector<Ext> shape, std::vector<int64_t> block,
                              std::vector<int64_t> order, SrcLoc loc) {
  if (st_->forTiles) fail(loc, "declare scales '" + name + "' before the tile loop");
  if (block.size() != shape.size())
    fail(loc, "scales '" + name + "' need one block extent per axis of " + std::to_string(shape.size()) + ", got " +
                  std::to_string(block.size()));
  Shape s;
  for (const auto& e : shape) s.push_back(e.e);
  Operation* op =
      emit(loc, "tile.input", {}, {types::tensor(ScalarType::F32, s, std::move(order), std::move(block))}, {{"name", name}});
  op->result()->setNameHint(name);
  return Tensor(op->result(), this, name);
}

Tile Tensor::item(SrcLoc loc) const {
  ProgramBuilder& pb = *pb_;
  const Type& t = value_->type();
  for (const auto& e : t.shape())
    if (e != Extent::of(int64_t{1}))
      pb.fail(loc, "item() reads the one element of a tensor with one element; '" + name_ + "' is " + t.str() +
                       ": declare it with shape {1} (a tensorwise scale)");
  std::vector<Value*> ops{value_};
  for (size_t i = 0; i < t.rank(); ++i)
    ops.push_back(pb.emit(loc, "arith.constant", {}, {types::index()}, {{"value", int64_t{0}}})->result());
  return Tile(pb.emit(loc, "tile.load_scalar", ops, {Type::scalar(t.elem())})->result(), &pb);
}

Scalar ProgramBuilder::scalar(const std::string& name, ScalarType dtype, SrcLoc loc) {
  if (st_->forTiles) fail(loc, "declare scalar '" + name + "' before the tile loop");
  Operation* op = emit(loc, "tile.scalar", {}, {Type::scalar(dtype)}, {{"name", name}});
  op->result()->setNameHint(name);
  return Scalar{op->result(), this};
}

void ProgramBuilder::beginTiles(const std::vector<Dim>& ds, const Dim* batch, const SrcLoc& loc, const Ragged* ragged) {
  if (st_->forTiles) fail(loc, "tile loops do not nest: a program has one p.tile loop");
  if (ds.empty() || ds.size() > 3) fail(loc, "p.tile takes one to three dims");
  std::vector<std::string> names;
  for (const auto& d : ds) names.push_back(d.name);
  std::vector<NamedAttr> attrs{{"dims", Attribute::strings(names)}};
  if (batch) attrs.push_back({"batch", batch->name});
  std::vector<Value*> operands;
  if (ragged) {
    if (!ragged->bounds.value()) fail(loc, "the ragged groups' bounds tensor is empty: pass a p.input");
    attrs.push_back({"ragged", ragged->dim.name});
    attrs.push_back({"bounds", ragged->offsets ? "offsets" : "counts"});
    operands.push_back(ragged->bounds.value());
  }
  st_->b.setLoc(at(loc));
  Operation* op = st_->b.create("tile.for_tiles", operands, {}, attrs, 1);
  Block* body = op->region(0).addBlock();
  if (batch) body->addArgument(types::index(), "b");
  for (const auto& d : ds) {
    std::string lower = d.name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    body->addArgument(types::coord(d.name), lower);
  }
  st_->forTiles = op;
  st_->b.setInsertionPointToEnd(body);
}

std::vector<Value*> ProgramBuilder::tileArgs() const {
  std::vector<Value*> r;
  for (const auto& a : st_->forTiles->body().arguments()) r.push_back(a.get());
  return r;
}

void ProgramBuilder::endTiles() {
  st_->b.setLoc(st_->forTiles->loc());
  st_->b.create("tile.yield", {}, {});
  st_->b.setInsertionPointToEnd(&st_->program->body());
  // A ragged loop's rules involve its body (a reduce over the ragged dim): check them now, at the
  // user's p.tile_grouped line, rather than at finish().
  DiagnosticEngine diag;
  if (st_->forTiles->numOperands() > 0 && !st_->forTiles->info()->verify(*st_->forTiles, diag))
    throw Error(diag.diagnostics());
}

void ProgramBuilder::noteAssign(Tile* handle, Value* oldValue) {
  if (st_->reduces.empty() || !oldValue) return;
  auto& open = st_->reduces.back();
  for (const auto& c : open.carried)
    if (c.first == handle) return;
  // Only tiles that lived before the loop become carried; temporaries inside the body do not.
  if (open.op->isAncestorOf(oldValue->definingOp() ? oldValue->definingOp() : oldValue->ownerBlock()->parentOp()))
    return;
  open.carried.push_back({handle, oldValue});
}

Tile& Tile::operator=(const Tile& other) {
  if (this == &other) return *this;
  ProgramBuilder* pb = other.pb_ ? other.pb_ : pb_;
  if (pb && value_) pb->noteAssign(this, value_);
  value_ = other.value_;
  pb_ = pb;
  return *this;
}

void ProgramBuilder::reduce(const Dim& dim, const std::function<void(Coord)>& body, SrcLoc loc) {
  if (!st_->forTiles || st_->b.insertionBlock() == &st_->program->body())
    fail(loc, "p.reduce must be called inside the p.tile loop");
  if (std::find(st_->dims.begin(), st_->dims.end(), dim.name) == st_->dims.end())
    fail(loc, "p.reduce over '" + dim.name + "', which is not a dim of this program");
  // Build the body in a detached op; the real op, with its carried values, is made afterwards.
  auto draft = Operation::create(at(loc), "tile.reduce", {}, {}, {{"dim", dim.name}}, 1);
  Block* block = draft->region(0).addBlock();
  std::string lower = dim.name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  Value* k = block->addArgument(types::coord(dim.name), lower);
  OpBuilder saved = st_->b;
  st_->reduces.push_back({std::move(draft), st_->b.insertionBlock(), {}});
  st_->b.setInsertionPointToEnd(block);
  body(Coord{k, dim.name, this});
  auto open = std::move(st_->reduces.back());
  st_->reduces.pop_back();
  st_->b = saved;

  std::vector<Value*> inits;
  std::vector<Type> types;
  std::vector<Value*> yields;
  for (auto& [handle, before] : open.carried) {
    if (handle->value()->type() != before->type())
      fail(loc, "a tile carried through p.reduce changes type from " + before->type().str() + " to " +
                    handle->value()->type().str() + "; cast it back before reassigning it");
    inits.push_back(before);
    types.push_back(before->type());
    yields.push_back(handle->value());
  }
  st_->b.setLoc(at(loc));
  Operation* op = st_->b.create("tile.reduce", inits, types, {{"dim", dim.name}}, 1);
  // Move the body into the real op; inside it, carried tiles read the block arguments.
  op->region(0).blocks() = std::move(open.op->region(0).blocks());
  Block& real = op->region(0).front();
  real.setParent(&op->region(0));
  for (size_t i = 0; i < inits.size(); ++i) {
    Value* arg = real.addArgument(types[i], inits[i]->nameHint());
    auto uses = inits[i]->uses();
    for (const Use& u : uses)
      if (op->isAncestorOf(u.user) && u.user != op) u.user->setOperand(u.operandIndex, arg);
  }
  OpBuilder yb(&real);
  yb.setLoc(at(loc));
  yb.create("tile.yield", yields, {});
  for (size_t i = 0; i < open.carried.size(); ++i) {
    Tile* handle = open.carried[i].first;
    *handle = Tile(op->result(i), this);
  }
  DiagnosticEngine diag;
  if (!op->info()->verify(*op, diag)) throw Error(diag.diagnostics());
}

Tile ProgramBuilder::zeros(ScalarType dtype, std::vector<Coord> shape, SrcLoc loc) {
  return full(dtype, std::move(shape), 0.0, loc);
}

Tile ProgramBuilder::full(ScalarType dtype, std::vector<Coord> shape, double value, SrcLoc loc) {
  Shape s;
  for (const auto& c : shape) {
    checkVisible(c.value, loc, "coord");
    s.push_back(Extent::of(c.dim));
  }
  Operation* op = emit(loc, "tile.constant", {}, {types::tile(dtype, s)}, {{"value", value}});
  return Tile(op->result(), this);
}

Coord ProgramBuilder::span(const Dim& dim, SrcLoc loc) {
  if (!st_->forTiles || st_->b.insertionBlock() == &st_->program->body())
    fail(loc, "p.span must be called inside the p.tile loop");
  if (std::find(st_->dims.begin(), st_->dims.end(), dim.name) == st_->dims.end())
    fail(loc, "p.span of '" + dim.name + "', which is not a dim of this program");
  Operation* op = emit(loc, "tile.span", {}, {types::coord(dim.name)}, {{"dim", dim.name}});
  std::string lower = dim.name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  op->result()->setNameHint(lower);
  return Coord{op->result(), dim.name, this};
}

Tile ProgramBuilder::iota(const Coord& c, SrcLoc loc) {
  checkVisible(c.value, loc, "coord");
  return Tile(emit(loc, "tile.iota", {c.value}, {types::tile(ScalarType::I32, {Extent::of(c.dim)})})->result(), this);
}

Tile ProgramBuilder::extent(const Dim& dim, SrcLoc loc) {
  if (std::find(st_->dims.begin(), st_->dims.end(), dim.name) == st_->dims.end())
    fail(loc, "p.extent of '" + dim.name + "', which is not a dim of this program");
  Value* d = emit(loc, "tile.dim", {}, {types::index()}, {{"name", dim.name}})->result();
  return Tile(emit(loc, "tile.cast", {d}, {types::f32()})->result(), this);
}

Index ProgramBuilder::group_index(const Tensor& ids, const Coord& rows, int64_t align, SrcLoc loc) {
  checkVisible(rows.value, loc, "coord");
  Operation* op = emit(loc, "tile.group_index", {ids.value(), rows.value}, {types::index()}, {{"align", align}});
  op->result()->setNameHint("g");
  return Index{op->result(), this};
}

std::unique_ptr<Module> ProgramBuilder::finish(SrcLoc loc) {
  if (st_->finished) fail(loc, "finish() was already called");
  if (!st_->forTiles) fail(loc, "the program has no p.tile loop, so it computes nothing");
  st_->finished = true;
  DiagnosticEngine diag;
  if (!verify(*st_->module, diag)) throw Error(diag.diagnostics());
  return std::move(st_->module);
}

}  // namespace kiln
