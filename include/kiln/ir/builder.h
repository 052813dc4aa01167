#pragma once
// OpBuilder: creates operations at an insertion point, with a current location.
#include <memory>
#include <string>
#include <vector>

#include "kiln/ir/operation.h"

namespace kiln::ir {

class OpBuilder {
 public:
  OpBuilder() = default;
  explicit OpBuilder(Block* block) { setInsertionPointToEnd(block); }

  void setInsertionPointToEnd(Block* b) { block_ = b; pos_ = b->operations().end(); }
  void setInsertionPoint(Operation* before);   // insert before `before`
  void setInsertionPointAfter(Operation* after);
  Block* insertionBlock() const { return block_; }
  // The op new ops go before (nullptr: the end of the block).
  Operation* insertionOp() const { return pos_ == block_->operations().end() ? nullptr : pos_->get(); }
  void setLoc(Location l) { loc_ = std::move(l); }
  const Location& loc() const { return loc_; }

  Operation* create(std::string name, std::vector<Value*> operands, std::vector<Type> resultTypes,
                    std::vector<NamedAttr> attrs = {}, unsigned numRegions = 0);
  // Inserts an already-built op.
  Operation* insert(std::unique_ptr<Operation> op);

 private:
  Block* block_ = nullptr;
  Block::iterator pos_;
  Location loc_;
};

// Saves and restores a builder's insertion point.
class InsertionGuard {
 public:
  explicit InsertionGuard(OpBuilder& b) : b_(b), saved_(b) {}
  ~InsertionGuard() { b_ = saved_; }

 private:
  OpBuilder& b_;
  OpBuilder saved_;
};

}  // namespace kiln::ir
