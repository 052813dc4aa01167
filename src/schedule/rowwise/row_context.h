#pragma once
// What the rowwise lowering's parts share while they build one kernel: the program, the schedule,
// the thread geometry, the kernel's parameters and per-thread indices, and the state of the row
// the kernel is working on (docs/rowwise-strategy.md, "The kernel").
//
// Geometry. A row is shared by G = row_threads threads, a block holds T = block_threads threads,
// so rows_per_block = T / G rows. Thread t of a block works on row group t / G as thread
// gt = t % G of it. Along the row each thread owns vectors of V elements (V = 16 / the narrowest
// row element's bytes, or 1 with scalar=true): in step s its vector j (j < vectors) starts at
// column s * capacity + j * G * V + gt * V, where capacity = G * V * vectors. A row of at most
// capacity elements fits on chip (every thread holds its vectors of it in registers through all the
// passes); a longer row is read once per pass, a step of `vectors` vectors at a time.
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "kiln/ir/diagnostics.h"
#include "schedule/config.h"
#include "dialects/kern/kern_builder.h"
#include "schedule/rowwise/row_program.h"
#include "kiln/target.h"

namespace kiln::rowwise {

struct Geometry {
  int G = 32, T = 256, V = 8, vectors = 4;
  int rowsPerBlock() const { return T / G; }
  int warpsPerRow() const { return G > 32 ? G / 32 : 1; }
  int64_t stride() const { return int64_t(G) * V; }             // columns between a thread's vectors
  int64_t capacity() const { return stride() * vectors; }       // columns of one step
};

Geometry geometryOf(const Config& c, const RowProgram& rp);

// The elements of one thread's vector of a row-, column- or element-space value: V values (f32
// for floats, i32, or i1), or a single one for a scalar or a row value (used for every element).
using Elems = std::vector<ir::Value*>;

// One vector j of one step of the thread: where it is and what the program's values are there.
struct Chunk {
  ir::Value* stepOffset = nullptr;  // i64 columns of the step (null: step 0)
  int64_t offset = 0;               // j * G * V
  ir::Value* col0 = nullptr;        // i32: the column of the vector's first element
  ir::Value* colOk = nullptr;       // i1: the vector lies inside the row (the row length is a multiple of V)
  ir::Value* ok = nullptr;          // i1: and the row inside the tensor
  std::unordered_map<const ir::Value*, Elems> vals;
  // Words of the vector's loads issued ahead (by the previous step of a streaming loop), by the
  // tile.load's result: the load unpacks them instead of loading.
  std::unordered_map<const ir::Value*, Elems> words;
};

// A divisor uniform over the row, prepared once where it is defined (row_divide.h).
struct UniformDivisor {
  ir::Value* d = nullptr;      // f32, the divisor
  ir::Value* neg = nullptr;    // -d
  ir::Value* recip = nullptr;  // RN(1 / d)
  ir::Value* safe = nullptr;   // i1: d lies in the range where the refined quotient is exact
};

struct Context {
  const RowProgram& rp;
  const Config& cfg;
  const Target& target;
  KernBuilder& b;
  ir::DiagnosticEngine& diag;
  Geometry geo;
  const Plan* plan = nullptr;                // the forms of the path being built (on chip, streaming)
  std::map<std::string, ir::Value*> params;  // tensors and scalars by name, dims by name
  ir::Value *tid = nullptr, *gt = nullptr, *rowInBlock = nullptr, *warpInRow = nullptr;
  ir::Value* threadCol = nullptr;  // gt * V: the thread's first column in a step
  ir::Value *dimR = nullptr, *dimC = nullptr;  // i32
  ir::Value* reduceBuf = nullptr;              // smem<f32, [1, K, rows_per_block * warps_per_row]> or null
  std::unordered_map<const ir::Value*, Elems> scalars;  // scalar-space values (kernel scope)
  // The row being worked on.
  ir::Value *row = nullptr, *rowOk = nullptr;
  std::unordered_map<const ir::Value*, ir::Value*> threadPtr;  // per [C] / [R, C] tensor: its row, at gt * V
  std::unordered_map<const ir::Value*, Elems> rowVals;          // row-space values of the current scope
  // Scalar and row values that divide column or element values, by value, in the current scope.
  std::unordered_map<const ir::Value*, UniformDivisor> divisors;
};

}  // namespace kiln::rowwise
