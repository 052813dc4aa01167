#pragma once
// Internal to expand-tile-loop (expand_tile_loop.cpp, tile_walk.cpp, expand_stream_k.cpp): the
// tile scheduler's walk (kern_ops.h, kern.tile_loop) written as kern IR, piece by piece. Every
// piece appends at the builder's insertion point.
#include <functional>
#include <optional>
#include <vector>

#include "dialects/kern/kern_builder.h"

namespace kiln::transforms::tilewalk {

// The loop's schedule, from its attributes.
struct Shape {
  int64_t bm = 0, bn = 0;      // {tile}
  int64_t cm = 1, cn = 1;      // {cluster}: the walkers are clusters of cm x cn blocks
  bool split = false;          // {splits} present (body arguments tile, split)
  int64_t splits = 1;
  int64_t streamK = 0;         // {stream_k}: 0, 1 or 2
  bool grouped = false;        // raster "grouped"
  // {ragged}: operands (M, N, G, bounds), body (iter, m0, n0, group, mend); with {stream_k} one
  // more operand, ktiles, and the stream-K walk's four body arguments after mend.
  bool ragged = false;
  // {ragged = "k_offsets", kstep}: groups along K, operands (M, N, G, offsets, K), the dense walk
  // with body (iter, m0, n0, group, ktok, kend, ksteps, done).
  bool kGroups = false;
  int64_t kstep = 0;
  int64_t groupM = 8;
  bool clustered() const { return cm * cn > 1; }
  // The tile loop's body arguments: (iter, m0, n0, batch) and the unit's.
  unsigned bodyArgs() const { return 4 + (split ? 2 : 0) + (streamK ? 4 : 0) + (ragged ? 1 : 0) + (kGroups ? 4 : 0); }
};
// nullopt: a loop whose attributes or body this pass does not know (it is kept).
std::optional<Shape> shapeOf(const ir::Operation& loop);

// Tiles per batch, tm x tn (cluster tiles with {cluster}), and in all.
struct Grid {
  ir::Value *tm, *tn, *per, *total;
};
Grid grid(KernBuilder& b, const ir::Operation& loop, const Shape& s);

// Who walks the units: the block, or with {cluster} its cluster (and its rank in it), and how
// many walkers the launch has.
struct Walkers {
  ir::Value *id, *count, *rank;
};
Walkers walkers(KernBuilder& b, const Shape& s);

// (m0, n0, batch) of tile `tile`: batch tile / per, then the raster's (pm, pn) of tile % per,
// with {cluster} the block's sub-tile by rank.
struct Origin {
  ir::Value *m0, *n0, *batch;
};
Origin place(KernBuilder& b, const ir::Operation& loop, const Shape& s, const Grid& g, const Walkers& w,
             ir::Value* tile);

// (pm, pn), the tile row and column of tile r of a tm x tn grid (g.tm, g.tn): raster "row", or
// "grouped" (groups of group_m tile rows walked column by column, so a wave's blocks share B's
// tile columns in L2).
std::pair<ir::Value*, ir::Value*> raster(KernBuilder& b, const Shape& s, const Grid& g, ir::Value* r);

// x, promised to lie in [0, 2^31 - 1] (kern.assume_range) and named `hint`; a constant is its own
// proof and comes back as it is.
ir::Value* nonNegative(KernBuilder& b, ir::Value* x, const std::string& hint);

// Unsigned division and remainder (arith.divui, arith.remui).
ir::Value* divu(KernBuilder& b, ir::Value* x, ir::Value* y);
ir::Value* remu(KernBuilder& b, ir::Value* x, ir::Value* y);

// The scf.for over the block's units that replaces a tile loop: its body so far computes the
// unit (the loop's body goes after it), `args` stand for the tile loop's body arguments, in
// order, and the body ends by yielding counter + 1 (when set) or `next`.
struct UnitLoop {
  ir::Operation* loop = nullptr;
  std::vector<ir::Value*> args;
  ir::Value* counter = nullptr;
  ir::Value* next = nullptr;
};
// The grid-stride walk (tile_walk.cpp): units walker, walker + walkers, ... below total x S.
UnitLoop persistentLoop(KernBuilder& b, const ir::Operation& loop, const Shape& s, const Grid& g, const Walkers& w);
// {ragged} (ragged_tile_walk.cpp): the groups' tile rows counted from the bounds in memory (a
// vtm x tn grid of one batch: tm = vtm, per = total = vtm tn), then each unit's group and rows
// found by a walk over them. raggedPlace gives tile `tile`'s (m0, n0, group, mend).
Grid raggedGrid(KernBuilder& b, const ir::Operation& loop, const Shape& s);
std::vector<ir::Value*> raggedPlace(KernBuilder& b, const ir::Operation& loop, const Shape& s, const Grid& g,
                                    ir::Value* tile);
UnitLoop raggedLoop(KernBuilder& b, const ir::Operation& loop, const Shape& s, const Grid& g, const Walkers& w);
// {ragged = "k_offsets"} (ragged_tile_walk.cpp): after persistentLoop's unit values, the unit's
// group's tokens, its K steps and the K steps of the block's earlier units, appended to u.args.
void kGroupArgs(KernBuilder& b, const ir::Operation& loop, const Shape& s, const Grid& g, const Walkers& w,
                UnitLoop& u);
// {stream_k} (expand_stream_k.cpp); with {ragged}, over raggedGrid's tiles, placed by raggedPlace.
UnitLoop streamKLoop(KernBuilder& b, const ir::Operation& loop, const Shape& s, const Grid& g, const Walkers& w);

}  // namespace kiln::transforms::tilewalk
