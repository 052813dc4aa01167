// A ragged tile loop in a GEMM (tile_ops.h, "Ragged groups"; the shape gemm_analysis.h draws):
//
//   tile.for_tiles(%bounds) {dims = [M, N], batch = G, ragged = M, bounds = "offsets"|"counts"} {
//   ^bb0(%g: index, %m: coord<[M]>, %n: coord<[N]>):  ...
//
// Groups of rows: with offsets A and C hold the groups' rows back to back (A [M, K], C [M, N]) and
// %g only picks B's matrix (B [G, K, N]), like tile.group_index's grouped GEMM; with counts
// (DeepGEMM's masked layout) A, B and C are batched by %g. What a strategy must then do is the
// groups' walk: docs/grouped-gemm.md.
#include "schedule/gemm_analysis.h"

#include "kiln/config.h"

namespace kiln {
using namespace ir;

bool analyzeRagged(GemmProgram& g, const std::string& strategy, DiagnosticEngine& diag) {
  const Operation& ft = *g.forTiles;
  const std::string ragged = ft.stringAttr("ragged");
  if (strategy != "sm90_ws_persistent")
    return diag.error(ft.loc()) << strategy << " does not lower ragged groups (tile.for_tiles {ragged = \"" << ragged
                                << "\"}); compile with strategy=sm90_ws_persistent";
  if (ragged == g.dimN)
    return diag.error(ft.loc()) << strategy << " lowers groups of the tile loop's rows (ragged = \"" << g.dimM
                                << "\") or of its reduction (the weight gradient), not of its columns '" << ragged
                                << "'";
  g.raggedBounds = ft.operand(0);
  g.raggedOffsets = ft.stringAttr("bounds") == "offsets";
  g.dimGroups = g.dimBatch;
  // Not a tiled dim: the verifier allows only the one the loop's tile.reduce iterates. The group
  // stays the loop's batch (C's and the epilogue's); A and B are loaded unbatched.
  if (ragged != g.dimM) {
    if (!g.raggedOffsets)
      return diag.error(ft.loc()) << strategy << " lowers groups along K given by offsets (cumulative ends), not by "
                                                 "counts";
    g.raggedK = true;
    return true;
  }
  if (g.raggedOffsets) {  // the leading index is the group of B, not a batch of every operand
    g.groupValue = g.batchArg;
    g.batchArg = nullptr;
    g.dimBatch.clear();
  }
  return true;
}

std::string raggedWalkConflict(const Config& c, bool alongK) {
  if (c.strategy != "sm90_ws_persistent") return "strategy=sm90_ws_persistent: no other strategy walks them";
  if (c.clusterM > 1 || c.clusterN > 1) return "cluster_m=1 cluster_n=1: the tiles of a cluster may lie in different groups";
  // stream_k is the one split it takes: the walk shares out the last waves' K steps of the tile
  // count it reads on the device (sm90/ragged_walk.cpp); split_k's fixed slices per tile are not
  // lowered over groups (nor needed: the groups' tiles fill at least as many waves as stream-K's).
  if (c.splitK > 1)
    return alongK ? "split_k=1 stream_k=0: a unit runs its group's K steps"
                  : "split_k=1: a group's tiles are not cut into fixed K slices (stream_k=1 shares out the last wave)";
  if (c.streamK && alongK) return "split_k=1 stream_k=0: a unit runs its group's K steps";
  if (c.swapAB) return "swap_ab=false: the groups are rows of A";
  return "";
}

}  // namespace kiln
