#include "kiln/ir/operation.h"

#include <algorithm>
#include <unordered_map>

#include "kiln/ir/diagnostics.h"
#include "kiln/ir/op_registry.h"

namespace kiln::ir {

// ---- Value -------------------------------------------------------------------------------------

Block* Value::parentBlock() const {
  return ownerBlock_ ? ownerBlock_ : (defOp_ ? defOp_->parentBlock() : nullptr);
}

void Value::replaceAllUsesWith(Value* other) {
  KILN_ASSERT(other != this, "replacing a value with itself");
  auto uses = uses_;  // setOperand edits uses_
  for (const Use& u : uses) u.user->setOperand(u.operandIndex, other);
}

// ---- Region / Block ----------------------------------------------------------------------------

Block* Region::addBlock() {
  blocks_.push_back(std::make_unique<Block>(this));
  return blocks_.back().get();
}

Block::~Block() {
  // Destroy ops back to front so that uses go away before their definitions.
  for (auto& op : ops_) op->dropAllOperands();
  while (!ops_.empty()) ops_.pop_back();
}

Operation* Block::parentOp() const { return parent_ ? parent_->parentOp() : nullptr; }

Value* Block::addArgument(Type t, std::string nameHint) {
  args_.push_back(std::unique_ptr<Value>(new Value(std::move(t), nullptr, this,
                                                   static_cast<unsigned>(args_.size()))));
  args_.back()->setNameHint(std::move(nameHint));
  return args_.back().get();
}

Operation* Block::insert(iterator pos, std::unique_ptr<Operation> op) {
  KILN_ASSERT(op->parent_ == nullptr, "inserting an op that already has a block");
  op->parent_ = this;
  return ops_.insert(pos, std::move(op))->get();
}

Block::iterator Block::find(const Operation* op) {
  return std::find_if(ops_.begin(), ops_.end(), [&](const auto& p) { return p.get() == op; });
}

std::unique_ptr<Operation> Block::take(Operation* op) {
  auto it = find(op);
  KILN_ASSERT(it != ops_.end(), "op is not in this block");
  std::unique_ptr<Operation> r = std::move(*it);
  ops_.erase(it);
  r->parent_ = nullptr;
  return r;
}

// ---- Operation ---------------------------------------------------------------------------------

Operation::Operation(Location loc, std::string name) : loc_(std::move(loc)), name_(std::move(name)) {}

std::unique_ptr<Operation> Operation::create(Location loc, std::string name,
                                             std::vector<Value*> operands,
                                             std::vector<Type> resultTypes,
                                             std::vector<NamedAttr> attrs, unsigned numRegions) {
  std::unique_ptr<Operation> op(new Operation(std::move(loc), std::move(name)));
  op->info_ = OpRegistry::get().lookup(op->name_);
  op->setOperands(std::move(operands));
  for (unsigned i = 0; i < resultTypes.size(); ++i)
    op->results_.push_back(std::unique_ptr<Value>(new Value(std::move(resultTypes[i]), op.get(), nullptr, i)));
  op->attrs_ = std::move(attrs);
  for (unsigned i = 0; i < numRegions; ++i) op->regions_.push_back(std::make_unique<Region>(op.get()));
  return op;
}

Operation::~Operation() {
  regions_.clear();
  dropAllOperands();
}

std::string_view Operation::dialect() const {
  auto dot = name_.find('.');
  return std::string_view(name_).substr(0, dot == std::string::npos ? 0 : dot);
}

void Operation::setOperand(unsigned i, Value* v) {
  KILN_ASSERT(i < operands_.size(), "operand index out of range");
  if (Value* old = operands_[i]) {
    auto& us = old->uses_;
    us.erase(std::find(us.begin(), us.end(), Use{this, i}));
  }
  operands_[i] = v;
  if (v) v->uses_.push_back(Use{this, i});
}

void Operation::setOperands(std::vector<Value*> vs) {
  dropAllOperands();
  operands_.assign(vs.size(), nullptr);
  for (unsigned i = 0; i < vs.size(); ++i) setOperand(i, vs[i]);
}

void Operation::dropAllOperands() {
  for (unsigned i = 0; i < operands_.size(); ++i)
    if (operands_[i]) setOperand(i, nullptr);
  operands_.clear();
}

const Attribute* Operation::attr(std::string_view name) const {
  for (const auto& a : attrs_)
    if (a.name == name) return &a.value;
  return nullptr;
}

void Operation::setAttr(std::string name, Attribute value) {
  for (auto& a : attrs_)
    if (a.name == name) {
      a.value = std::move(value);
      return;
    }
  attrs_.push_back({std::move(name), std::move(value)});
}

void Operation::removeAttr(std::string_view name) {
  std::erase_if(attrs_, [&](const NamedAttr& a) { return a.name == name; });
}

int64_t Operation::intAttr(std::string_view name, int64_t fallback) const {
  const Attribute* a = attr(name);
  return a && a->isInt() ? a->asInt() : fallback;
}

std::string Operation::stringAttr(std::string_view name, std::string fallback) const {
  const Attribute* a = attr(name);
  return a && a->isString() ? a->asString() : fallback;
}

std::vector<std::string> Operation::stringsAttr(std::string_view name) const {
  const Attribute* a = attr(name);
  if (!a) return {};
  return a->asStrings().value_or(std::vector<std::string>{});
}

std::vector<int64_t> Operation::intsAttr(std::string_view name) const {
  const Attribute* a = attr(name);
  if (!a) return {};
  return a->asInts().value_or(std::vector<int64_t>{});
}

Region& Operation::addRegion() {
  regions_.push_back(std::make_unique<Region>(this));
  return *regions_.back();
}

Operation* Operation::parentOp() const { return parent_ ? parent_->parentOp() : nullptr; }

bool Operation::isAncestorOf(const Operation* other) const {
  for (const Operation* p = other; p; p = p->parentOp())
    if (p == this) return true;
  return false;
}

Operation* Operation::enclosing(std::string_view name) const {
  for (Operation* p = parentOp(); p; p = p->parentOp())
    if (p->name_ == name) return p;
  return nullptr;
}

void Operation::walk(const std::function<void(Operation&)>& fn) {
  fn(*this);
  for (auto& r : regions_)
    for (auto& b : r->blocks())
      for (auto& op : b->operations()) op->walk(fn);
}

void Operation::walk(const std::function<void(const Operation&)>& fn) const {
  fn(*this);
  for (const auto& r : regions_)
    for (const auto& b : r->blocks())
      for (const auto& op : b->operations()) static_cast<const Operation&>(*op).walk(fn);
}

void Operation::erase() {
  for (const auto& r : results_)
    KILN_ASSERT(!r->hasUses(), "erasing " + name_ + " whose result is still used");
  KILN_ASSERT(parent_ != nullptr, "erasing an op that has no block");
  parent_->take(this);  // the returned unique_ptr dies here
}

// ---- Module / clone ----------------------------------------------------------------------------

Module::Module() : op_(Operation::create(Location::unknown(), "builtin.module", {}, {}, {}, 1)) {
  op_->region(0).addBlock();
}

namespace {
std::unique_ptr<Operation> cloneWith(const Operation& op, std::unordered_map<const Value*, Value*>& map) {
  std::vector<Value*> operands;
  for (Value* v : op.operands()) {
    auto it = map.find(v);
    operands.push_back(it == map.end() ? v : it->second);
  }
  std::vector<Type> types;
  for (const auto& r : op.results()) types.push_back(r->type());
  auto c = Operation::create(op.loc(), op.name(), operands, types, op.attrs(),
                             static_cast<unsigned>(op.numRegions()));
  for (unsigned i = 0; i < op.numResults(); ++i) {
    c->result(i)->setNameHint(op.result(i)->nameHint());
    map[op.result(i)] = c->result(i);
  }
  for (unsigned r = 0; r < op.numRegions(); ++r) {
    for (const auto& b : op.region(r).blocks()) {
      Block* nb = c->region(r).addBlock();
      for (const auto& a : b->arguments()) map[a.get()] = nb->addArgument(a->type(), a->nameHint());
      for (const auto& inner : b->operations()) nb->push_back(cloneWith(*inner, map));
    }
  }
  return c;
}
}  // namespace

std::unique_ptr<Operation> cloneOp(const Operation& op) {
  std::unordered_map<const Value*, Value*> map;
  return cloneWith(op, map);
}

std::unique_ptr<Operation> cloneOp(const Operation& op, std::unordered_map<const Value*, Value*>& map) {
  return cloneWith(op, map);
}

std::unique_ptr<Module> Module::clone() const { return std::make_unique<Module>(cloneOp(*op_)); }

}  // namespace kiln::ir
