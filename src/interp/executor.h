#pragma once
// Walks a tile.program's ops and evaluates them: control flow (tile.for_tiles, tile.reduce, scf.*)
// here, each op's arithmetic in its own file (memory_ops, elementwise, broadcast, dot, scalar_ops).
#include <set>
#include <vector>

#include "interp/runtime_values.h"

namespace kiln::interp {

class Executor {
 public:
  explicit Executor(RunContext& ctx) : ctx_(ctx) {}

  // Runs the ops of the program's body in order; the arguments must already be bound
  // (bindArguments) and every dim must have a block size (chooseBlockSizes). Returns false after
  // reporting a user error found while running.
  bool runProgram(const ir::Operation& program);

 private:
  bool runBlock(const ir::Block& block, std::vector<RtValue>* yielded);
  bool runOp(const ir::Operation& op);
  bool runForTiles(const ir::Operation& op);
  bool runRaggedTiles(const ir::Operation& op);
  bool runReduce(const ir::Operation& op);
  bool runScfFor(const ir::Operation& op);
  bool runScfIf(const ir::Operation& op);
  bool runArith(const ir::Operation& op);
  bool runMemory(const ir::Operation& op);
  bool runGroupIndex(const ir::Operation& op);
  void runMath(const ir::Operation& op);

  const RtValue& get(const ir::Value* v) const;
  const Scalar& scalar(const ir::Value* v) const;
  const Coord& coord(const ir::Value* v) const;
  const Tile& tile(const ir::Value* v) const;
  const BoundTensor& tensor(const ir::Value* v) const;
  // The values of a tile or scalar operand of an elementwise op.
  std::span<const double> values(const ir::Value* v) const;
  // The same for operands of any element type (integers and predicates too), by value.
  std::vector<double> anyValues(const ir::Value* v) const;
  void set(const ir::Value* v, RtValue r) { ctx_.env[v] = std::move(r); }
  // A float-or-integer result: a tile of `type`'s shape, or a scalar.
  void setValues(const ir::Value* v, std::vector<double> data);
  std::vector<int64_t> blockShape(const ir::Type& tileType) const;

  RunContext& ctx_;
  std::set<const ir::Operation*> checkedGroupOps_;
};

}  // namespace kiln::interp
