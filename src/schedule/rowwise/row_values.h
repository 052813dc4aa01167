#pragma once
// The program's values in the rowwise kernel, one thread's share of them: scalars once at the top
// of the kernel, row values in the scope of the row (before the pass that needs them), column and
// element values per vector of a step, computed when a pass first asks for them and kept while
// the scope holds them (a step of the streaming form, the whole row when it fits on chip). Math is
// the shared elementwise lowering in f32; a value of a narrower float type is rounded to it after
// every op, as the tile dialect computes.
#include "schedule/rowwise/row_context.h"

namespace kiln::rowwise {

class Values {
 public:
  explicit Values(Context& cx) : cx_(cx) {}

  // The elements of `v` for this thread at `ch` (null for scalar and row values, which need
  // none), computed on first use for column and element values.
  const Elems& get(const ir::Value* v, Chunk* ch);
  // Emits a scalar-space op (at the kernel's top) or a row-space op other than a store (in the
  // row's scope).
  void emitScalar(const ir::Operation& op);
  void emitRow(const ir::Operation& op);
  // tile.store of an element value at `ch`, or (ch null) of a row value by the row's first thread.
  void store(const ir::Operation& op, Chunk* ch);
  // Issues the vector loads of `load` (a tile.load of a [C] or [R, C] tensor) at `ch` now.
  void prefetch(const ir::Operation& load, Chunk* ch) { get(load.result(), ch); }
  // The raw words those loads return (packed elements, as loaded), without unpacking them: a
  // step's loads issued ahead of it hand them to its Chunk::words.
  Elems loadWords(const ir::Operation& load, Chunk* ch);
  // How many: 32-bit words of packed elements, or 1 element with scalar accesses.
  size_t wordsOf(const ir::Operation& load) const;

  // `x` (f32) rounded to `elem` (no op for f32 and non-float types), pairs and quads at once.
  Elems round(ir::ScalarType elem, Elems x);

 private:
  Elems compute(const ir::Operation& op, Chunk* ch);
  Elems load(const ir::Operation& op, Chunk* ch);
  Elems constant(const ir::Operation& op, size_t n);
  ir::Value* elementPtr(const ir::Value* tensor, Chunk* ch, int64_t extra);
  // f32 / i32 values as the 32-bit words (or single elements) of `elem` that a store writes.
  Elems pack(ir::ScalarType elem, const Elems& x);
  Elems unpack(ir::ScalarType elem, const Elems& words);

  Context& cx_;
};

}  // namespace kiln::rowwise
