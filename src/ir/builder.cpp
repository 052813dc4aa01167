#include "kiln/ir/builder.h"

#include "kiln/ir/diagnostics.h"

namespace kiln::ir {

void OpBuilder::setInsertionPoint(Operation* before) {
  block_ = before->parentBlock();
  pos_ = block_->find(before);
}

void OpBuilder::setInsertionPointAfter(Operation* after) {
  block_ = after->parentBlock();
  pos_ = std::next(block_->find(after));
}

Operation* OpBuilder::create(std::string name, std::vector<Value*> operands,
                             std::vector<Type> resultTypes, std::vector<NamedAttr> attrs,
                             unsigned numRegions) {
  return insert(Operation::create(loc_, std::move(name), std::move(operands), std::move(resultTypes),
                                  std::move(attrs), numRegions));
}

Operation* OpBuilder::insert(std::unique_ptr<Operation> op) {
  KILN_ASSERT(block_ != nullptr, "OpBuilder has no insertion point");
  return block_->insert(pos_, std::move(op));
}

}  // namespace kiln::ir
