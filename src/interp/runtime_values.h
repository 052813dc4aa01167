#pragma once
// The values the interpreter computes with, and the state of one run.
//
// Every SSA value of a running program is one of: a Scalar (an arith value, a dim, a batch index, a
// scalar argument), a Coord (the block of one dim that a loop instance owns), a Tile (a block of
// elements), or a tensor argument bound to its storage.
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "interp/element_codec.h"
#include "kiln/interp/host_tensor.h"
#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"

namespace kiln::interp {

// Exact: float math rounds like the hardware (interpreter.h). Reference: float math in double,
// never rounded after the inputs (runReference).
enum class Arithmetic { Exact, Reference };

struct Scalar {
  ir::ScalarType type = ir::ScalarType::Index;
  double f = 0;   // the value, for float types
  int64_t i = 0;  // the value, for integer types (wrapped to the type's width)

  static Scalar ofInt(ir::ScalarType t, int64_t v) { return {t, 0, v}; }
  static Scalar ofFloat(ir::ScalarType t, double v) { return {t, v, 0}; }
  double value() const { return ir::isFloat(type) ? f : static_cast<double>(i); }
};

// The block [start, start + size) of a dim. `size` is the dim's block size even for the last block,
// whose positions past the dim's extent are out of range. In a ragged tile loop the positions at
// or past `limit` (the end of the instance's group along that dim) are out of range too.
struct Coord {
  int64_t start = 0;
  int64_t size = 0;
  int64_t limit = std::numeric_limits<int64_t>::max();
};

// A block of elements, row-major over `shape`. In Exact mode every value is exactly representable
// in `elem` (integers exactly up to 2^53).
struct Tile {
  ir::ScalarType elem = ir::ScalarType::F32;
  std::vector<int64_t> shape;
  std::vector<double> data;
};
using TilePtr = std::shared_ptr<const Tile>;

// A tensor argument bound to its storage for the run.
struct BoundTensor {
  std::string name;
  ir::ScalarType dtype = ir::ScalarType::F32;
  std::vector<int64_t> extents;  // dims substituted: the logical extents positions are checked against
  std::vector<int64_t> strides;  // in elements of the storage (elementStrides of the declared order)
  std::vector<int64_t> block;    // a block tensor's block (position p of axis a is stored at p / block[a]); empty: none
  uint8_t* bytes = nullptr;      // the HostTensor's bytes
  std::vector<double>* wide = nullptr;  // Reference-mode outputs: unrounded values, storage order
  int64_t elemBytes = 0;                // elementBytes(dtype)

  double read(int64_t i) const { return wide ? (*wide)[i] : loadElement(bytes + i * elemBytes, dtype); }
  void write(int64_t i, double v) const {
    if (wide) (*wide)[i] = v;
    else storeElement(bytes + i * elemBytes, dtype, v);
  }
};

using RtValue = std::variant<Scalar, Coord, TilePtr, const BoundTensor*>;

struct RunContext {
  RunContext(Arithmetic a, ir::DiagnosticEngine& d) : arith(a), diag(d) {}
  Arithmetic arith;
  ir::DiagnosticEngine& diag;
  std::map<std::string, int64_t> extents;  // every program dim
  std::map<std::string, int64_t> blocks;   // the block size of every program dim
  std::map<std::string, BoundTensor> tensors;
  std::unordered_map<const ir::Value*, RtValue> env;
  std::vector<int64_t> onlyInstances;      // sorted; empty: every tile.for_tiles instance runs
  // In an instance of a ragged tile.for_tiles: the ragged dim and the [lo, hi) its group owns.
  std::string raggedDim;
  int64_t raggedLo = 0, raggedHi = 0;
};

}  // namespace kiln::interp
