#pragma once
// The generic IR core: values, operations, blocks and regions.
//
// Contract (shared by every dialect):
//  * An Operation has a dotted name ("tile.dot", "kern.mma_sync"), SSA operands, results, named
//    attributes in a stable order, and zero or more regions. Its meaning and rules come from the
//    OpInfo registered for its name (op_registry.h); unregistered names are rejected by the parser
//    and verifier.
//  * Values are defined exactly once: as an op result or as a block argument. A use must be
//    dominated by its definition: defined earlier in the same block, or in an enclosing block
//    (regions see the values of the regions around them).
//  * A Region holds one Block (structured control flow only; no CFG branches). A Block is a list of
//    ops with arguments; in a region of an op with the Terminator-requiring trait, the last op is a
//    terminator.
//  * Ownership is a tree: Region owns Blocks, Block owns Operations and its arguments, Operation owns
//    its results and regions. Use lists are maintained by the core so passes can ask "is this value
//    used after the loop?" without a walk.
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kiln/ir/attribute.h"
#include "kiln/ir/location.h"
#include "kiln/ir/types.h"

namespace kiln::ir {

class Operation;
class Block;
class Region;
struct OpInfo;

struct Use {
  Operation* user;
  unsigned operandIndex;
  bool operator==(const Use&) const = default;
};

class Value {
 public:
  const Type& type() const { return type_; }
  void setType(Type t) { type_ = std::move(t); }
  // The defining op, or nullptr for a block argument.
  Operation* definingOp() const { return defOp_; }
  // The block that owns this value as an argument, or nullptr for an op result.
  Block* ownerBlock() const { return ownerBlock_; }
  // The block in which the value becomes visible.
  Block* parentBlock() const;
  unsigned index() const { return index_; }  // result number or argument number
  const std::string& nameHint() const { return name_; }
  void setNameHint(std::string n) { name_ = std::move(n); }

  const std::vector<Use>& uses() const { return uses_; }
  bool hasUses() const { return !uses_.empty(); }
  void replaceAllUsesWith(Value* other);

 private:
  friend class Operation;
  friend class Block;
  Value(Type t, Operation* def, Block* owner, unsigned idx)
      : type_(std::move(t)), defOp_(def), ownerBlock_(owner), index_(idx) {}
  Type type_;
  Operation* defOp_;
  Block* ownerBlock_;
  unsigned index_;
  std::string name_;
  std::vector<Use> uses_;
};

class Region {
 public:
  explicit Region(Operation* parent) : parent_(parent) {}
  Operation* parentOp() const { return parent_; }
  bool empty() const { return blocks_.empty(); }
  Block& front() { return *blocks_.front(); }
  const Block& front() const { return *blocks_.front(); }
  Block* addBlock();
  std::vector<std::unique_ptr<Block>>& blocks() { return blocks_; }
  const std::vector<std::unique_ptr<Block>>& blocks() const { return blocks_; }

 private:
  Operation* parent_;
  std::vector<std::unique_ptr<Block>> blocks_;
};

class Block {
 public:
  using OpList = std::list<std::unique_ptr<Operation>>;
  using iterator = OpList::iterator;

  explicit Block(Region* parent) : parent_(parent) {}
  ~Block();
  Region* parentRegion() const { return parent_; }
  void setParent(Region* r) { parent_ = r; }  // after moving the block between regions
  Operation* parentOp() const;

  Value* addArgument(Type t, std::string nameHint = {});
  const std::vector<std::unique_ptr<Value>>& arguments() const { return args_; }
  Value* argument(unsigned i) const { return args_.at(i).get(); }
  size_t numArguments() const { return args_.size(); }

  OpList& operations() { return ops_; }
  const OpList& operations() const { return ops_; }
  bool empty() const { return ops_.empty(); }
  Operation* back() const { return ops_.empty() ? nullptr : ops_.back().get(); }
  Operation* front() const { return ops_.empty() ? nullptr : ops_.front().get(); }

  // Inserts before `pos` and returns the inserted op.
  Operation* insert(iterator pos, std::unique_ptr<Operation> op);
  Operation* push_back(std::unique_ptr<Operation> op) { return insert(ops_.end(), std::move(op)); }
  iterator find(const Operation* op);
  // Removes and returns the op (its uses of other values are kept).
  std::unique_ptr<Operation> take(Operation* op);

 private:
  Region* parent_;
  std::vector<std::unique_ptr<Value>> args_;
  OpList ops_;
};

class Operation {
 public:
  static std::unique_ptr<Operation> create(Location loc, std::string name,
                                           std::vector<Value*> operands,
                                           std::vector<Type> resultTypes,
                                           std::vector<NamedAttr> attrs = {},
                                           unsigned numRegions = 0);
  ~Operation();
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;

  const std::string& name() const { return name_; }
  std::string_view dialect() const;  // the part before the first '.'
  bool is(std::string_view n) const { return name_ == n; }
  const OpInfo* info() const { return info_; }  // nullptr when unregistered
  const Location& loc() const { return loc_; }
  void setLoc(Location l) { loc_ = std::move(l); }

  // Operands.
  size_t numOperands() const { return operands_.size(); }
  Value* operand(unsigned i) const { return operands_.at(i); }
  const std::vector<Value*>& operands() const { return operands_; }
  void setOperand(unsigned i, Value* v);
  void setOperands(std::vector<Value*> vs);
  void dropAllOperands();

  // Results.
  size_t numResults() const { return results_.size(); }
  Value* result(unsigned i = 0) const { return results_.at(i).get(); }
  const std::vector<std::unique_ptr<Value>>& results() const { return results_; }

  // Attributes, in insertion order (the printer keeps it).
  const std::vector<NamedAttr>& attrs() const { return attrs_; }
  const Attribute* attr(std::string_view name) const;
  bool hasAttr(std::string_view name) const { return attr(name) != nullptr; }
  void setAttr(std::string name, Attribute value);
  void removeAttr(std::string_view name);
  // Typed lookups that return a fallback when the attribute is missing or of another kind.
  int64_t intAttr(std::string_view name, int64_t fallback = 0) const;
  std::string stringAttr(std::string_view name, std::string fallback = {}) const;
  std::vector<std::string> stringsAttr(std::string_view name) const;
  std::vector<int64_t> intsAttr(std::string_view name) const;

  // Regions.
  size_t numRegions() const { return regions_.size(); }
  Region& region(unsigned i = 0) const { return *regions_.at(i); }
  Block& body(unsigned i = 0) const { return region(i).front(); }  // entry block of region i
  Region& addRegion();

  // Position in the tree.
  Block* parentBlock() const { return parent_; }
  Operation* parentOp() const;
  bool isAncestorOf(const Operation* other) const;
  // The enclosing op with this name, or nullptr.
  Operation* enclosing(std::string_view name) const;

  // Pre-order walk over this op and everything nested in it. The callback may not erase ops.
  void walk(const std::function<void(Operation&)>& fn);
  void walk(const std::function<void(const Operation&)>& fn) const;

  // Detaches this op from its block and destroys it. Its results must have no uses.
  void erase();

 private:
  friend class Block;
  Operation(Location loc, std::string name);
  Location loc_;
  std::string name_;
  const OpInfo* info_ = nullptr;
  std::vector<Value*> operands_;
  std::vector<std::unique_ptr<Value>> results_;
  std::vector<NamedAttr> attrs_;
  std::vector<std::unique_ptr<Region>> regions_;
  Block* parent_ = nullptr;
};

// A module is a top-level op ("builtin.module") that owns a list of programs or kernels.
class Module {
 public:
  Module();
  explicit Module(std::unique_ptr<Operation> op) : op_(std::move(op)) {}
  Operation& op() const { return *op_; }
  Block& body() const { return op_->body(); }
  std::unique_ptr<Operation> release() { return std::move(op_); }
  std::unique_ptr<Module> clone() const;

 private:
  std::unique_ptr<Operation> op_;
};

// Deep copy of an op and everything nested in it; operands defined outside are kept as they are.
std::unique_ptr<Operation> cloneOp(const Operation& op);
// The same, with operands found in `map` replaced by their image; the copy's results and block
// arguments are added to `map`, so a sequence of ops can be copied one after another.
std::unique_ptr<Operation> cloneOp(const Operation& op, std::unordered_map<const Value*, Value*>& map);

}  // namespace kiln::ir
