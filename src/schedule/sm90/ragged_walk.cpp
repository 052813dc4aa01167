// Ragged groups in the sm90 persistent walk (tile.for_tiles {ragged = M}; docs/grouped-gemm.md).
// The tile loop is a kern.tile_loop {ragged = "offsets" | "counts"} (kern_ops.h): the tile
// scheduler itself reads the groups' bounds on the device, counts their tile rows (each group's
// rows in ceil(rows / bm) tiles from its first row, so a tile never mixes two groups) and hands
// every unit its group, first row and the end of its group's rows:
//
//   kern.tile_loop(%M, %N, %G, %offsets) {tile = [bm, bn], raster = "grouped", group_m = 8,
//                                          ragged = "offsets"} {
//   ^bb0(%iter, %m0, %n0, %group, %mend):  the unit's one role (consumer.cpp, k_loop.cpp) }
//
// raster=grouped walks the groups' stacked tile rows group_m at a time, column by column, as the
// dense walk does a grid's, so the blocks of a wave share B's tile columns in L2 (raster=row walks
// them row by row).
//
// With offsets A and C hold the groups' rows back to back and %group picks B's matrix (the third
// coordinate of B's copies, Unit::group); with counts (DeepGEMM's masked layout) %group is every
// operand's batch and %m0 a row inside it. Stores stop at %mend (epilogue.cpp: with epilogue=tma a
// tile whose rows all lie in its group goes out by TMA, whose box clips only at the tensor's
// edges, and a group's last, partial tile from registers, masked at %mend); A's box rows past it
// belong to the next group or lie past M (zero-filled) and only feed rows that are not stored.
// No host sync: the units are exactly the groups' tiles, so the ring positions (iter x ksteps
// stages before a unit) and the producer sm90-warp-specialize makes are those of a dense walk.
//
// The tile loop clamps each group's rows to [previous end, M] (or [0, M]), which keeps bad bounds
// (decreasing, negative, past the rows) from making the kernel read or write outside its tensors;
// good bounds are not changed by it, and the host paths refuse the bad ones by name
// (docs/grouped-gemm.md, "Bad offsets").
//
// Legal only with what raggedWalkConflict (gemm_ragged.cpp) accepts: no cluster, no split-K or
// stream-K, no swap_ab.
#include "schedule/sm90/lowering.h"

namespace kiln::sm90 {
using namespace ir;

bool checkRagged(const GemmProgram& g, const Config& c, DiagnosticEngine& diag) {
  const std::string need = g.raggedBounds ? raggedWalkConflict(c) : "";
  if (need.empty()) return true;
  return diag.error(g.forTiles->loc()) << c.strategy << " walks ragged groups (tile.for_tiles {ragged = \"" << g.dimM
                                       << "\"}) only with " << need;
}

Operation* createRaggedTileLoop(KernBuilder& b, const Request& r, const Kernel& k) {
  const GemmProgram& g = r.g;
  Value* bounds = k.params.args.at(g.raggedBounds->definingOp()->stringAttr("name"));
  std::vector<NamedAttr> attrs = {{"tile", Attribute::ints({r.c.bm, r.c.bn})},
                                  {"raster", r.c.raster == Raster::Grouped ? "grouped" : "row"}};
  if (r.c.raster == Raster::Grouped) attrs.push_back({"group_m", int64_t(r.c.groupM)});
  attrs.push_back({"ragged", g.raggedOffsets ? "offsets" : "counts"});
  return b.create("kern.tile_loop", {k.params.dimM, k.params.dimN, k.params.dims.at(g.dimGroups), bounds}, {}, attrs,
                  1);
}

}  // namespace kiln::sm90
