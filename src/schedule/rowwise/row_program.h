#pragma once
// Recognises a memory-bound tile program the rowwise strategy lowers and plans the passes each row
// takes (docs/rowwise-strategy.md).
//
// The shape it lowers (anything else gets a sentence naming the op and what would make it
// lowerable):
//
//   tile.program {dims = [..., R, ..., C, ...]} {
//     tensor arguments [R], [C] and row-major [R, C] (8-, 16- or 32-bit elements), f32 / i32 scalars
//     tile.for_tiles {dims = [R]} {              or {dims = [R, C]}: an elementwise program
//     ^bb0(%r: coord<[R]>):
//       %c = tile.span {dim = C}
//       tile.load(%X, %r, %c), tile.load(%W, %c), tile.load(%L, %r); elementwise math, casts,
//       comparisons, selections, tile.scale and broadcasts of tiles over [R], [C] or [R, C] and of
//       scalars; tile.iota of either coord; tile.reduce_axis of [R, C] tiles along C;
//       tile.store of [R, C] and [R] tiles
//     }
//   }
//
// Spaces. Each value varies over nothing (Scalar: arguments, dims, constants), the row (Row: a
// tile over [R]), the column (Col: [C]) or both (Elem: [R, C]).
//
// Levels and passes. Level 0 is everything that needs no reduction; a reduction's result has
// its input's level + 1 (it is known once the pass that reads its input is over); any other op
// has the highest level of its operands. Pass p computes the per-element values of level p that
// a reduction or a store consumes, so the program takes 1 + (the highest such level) passes over
// each row (none when it only has per-row values). One fusion shortens the chain: sum(exp(a -
// max(a))) is computed online in the pass that computes max(a) -- each thread keeps its running
// maximum and rescales its running sum whenever the maximum grows -- so softmax and log-softmax
// take two passes, cross-entropy one.
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"
#include "target/target.h"

namespace kiln::rowwise {

enum class Space : uint8_t { Scalar, Row, Col, Elem };

struct Reduction {
  const ir::Operation* op = nullptr;  // the tile.reduce_axis
  // A sum(exp(a - m)) that can be computed online with m: the index of m's reduction (a max over
  // a, in the same pass) in RowProgram::reductions, and a; -1 and null for any other reduction.
  int onlineMax = -1;
  const ir::Value* onlineInput = nullptr;
};

// The order of a row's work under one choice of forms: the online sums fused with their max
// (fewer passes: what a row that streams through wants) or not (one exp per element: what a row
// held on chip wants, whose extra pass costs no memory).
struct Plan {
  bool online = false;
  std::unordered_map<const ir::Value*, int> level;
  std::vector<int> pass;       // per reduction: the pass that accumulates it
  std::vector<int> onlineMax;  // per reduction: Reduction::onlineMax where it is fused, else -1
  int passes = 0;
  int levelOf(const ir::Value* v) const {
    auto it = level.find(v);
    return it == level.end() ? 0 : it->second;  // coords, tensors and arguments: 0
  }
};

struct RowProgram {
  const ir::Operation* program = nullptr;
  const ir::Operation* forTiles = nullptr;
  std::string dimR, dimC;                 // dimC is "" when no tile spans a column dim
  const ir::Value* rowCoord = nullptr;    // the loop's coord of R
  const ir::Value* colCoord = nullptr;    // the span (or the loop's coord) of C
  std::vector<const ir::Operation*> ops;  // the loop body in order, without its tile.yield
  std::unordered_map<const ir::Value*, Space> space;
  std::vector<Reduction> reductions;      // in program order
  Plan onChip;                            // the plain forms
  Plan streaming;                         // the online forms
  // The narrowest element (bytes) of the [C] and [R, C] tensors: a 16-byte vector holds
  // 16 / elemBytes of them (1 when there are none).
  int elemBytes = 4;
  // The kernel's parameters in launch order: tensors, then scalars, then dims.
  struct Param {
    std::string name;
    const ir::Operation* decl = nullptr;  // tile.input / output / scalar; null for a dim
    ir::Type type;                        // ptr<e>, f32 / i32, or i32 for a dim
  };
  std::vector<Param> params;

  Space spaceOf(const ir::Value* v) const { return space.at(v); }
};

// The program as rowwise sees it, or nullopt after a diagnostic that names the op rowwise cannot
// lower and what would make it lowerable.
std::optional<RowProgram> analyzeRows(const ir::Operation& program, const Target& target, ir::DiagnosticEngine& diag);

}  // namespace kiln::rowwise
