// Verify hooks of the split-K ops (table in kern_ops.def, semantics in kern_ops.h, "Split-K"): the
// GPU-scope flag protocol by which the blocks computing one tile's K slices hand their partial
// sums to the block that finishes the tile (PTX ISA, "red", "ld" with .release / .acquire at .gpu
// scope, and "Memory Consistency Model": release and acquire patterns).
#include "dialects/kern/kern_ops.h"
#include "dialects/kern/kern_verify.h"

namespace kiln::kern {
using namespace kiln::ir;

namespace {

bool flagOperands(const Operation& op, DiagnosticEngine& d, const char* second) {
  if (!requireInKernel(op, d)) return false;
  const Type& p = op.operand(0)->type();
  if (!isPtr(p) || p.elem() != ScalarType::I32 || !op.operand(1)->type().isScalar(ScalarType::I32))
    return d.error(op.loc()) << "'" << op.name() << "' takes (ptr<i32> flag, i32 " << second << ")";
  return true;
}

}  // namespace

bool verifyRedRelease(const Operation& op, DiagnosticEngine& d) { return flagOperands(op, d, "value"); }
bool verifySpinWait(const Operation& op, DiagnosticEngine& d) { return flagOperands(op, d, "target"); }

// gemv's split-K: the block whose add completes a tile's count sums the tile's slices.
bool verifyAtomAdd(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  const Type& p = op.operand(0)->type();
  if (!isPtr(p) || p.elem() != ScalarType::I32 || !op.operand(1)->type().isScalar(ScalarType::I32) ||
      !op.operand(2)->type().isScalar(ScalarType::I1) || !op.result()->type().isScalar(ScalarType::I32))
    return d.error(op.loc()) << "'kern.atom_add' takes (ptr<i32> flag, i32 value, i1 pred) and returns the i32 count "
                                "before the add";
  return true;
}

bool verifyTileLoopSplits(const Operation& op, DiagnosticEngine& d) {
  const Block& body = op.body();
  if (op.attr("stream_k")) {
    int64_t w = op.intAttr("stream_k", 0);
    if (w != 1 && w != 2)
      return d.error(op.loc()) << "'kern.tile_loop' {stream_k = W} shares out the tiles of the last W waves: W is 1 "
                                  "or 2";
    if (op.attr("splits"))
      return d.error(op.loc()) << "'kern.tile_loop' {stream_k} walks runs of K steps of whole tiles; it does not "
                                  "take {splits}";
    if (body.numArguments() != 8)
      return d.error(op.loc()) << "'kern.tile_loop' {stream_k} body takes (iter, m0, n0, batch, kbase, ksteps, "
                                  "done, peers) : i32";
    return true;
  }
  if (!op.attr("splits")) {
    if (body.numArguments() != 4)
      return d.error(op.loc()) << "'kern.tile_loop' body takes (iter, m0, n0, batch) : i32 (and (tile, split) "
                                  "with {splits}, (kbase, ksteps, done, peers) with {stream_k})";
    return true;
  }
  int64_t s = op.intAttr("splits", 0);
  if (s < 1 || s > 64) return d.error(op.loc()) << "'kern.tile_loop' {splits = S} needs 1 <= S <= 64, got " << s;
  if (body.numArguments() != 6)
    return d.error(op.loc()) << "'kern.tile_loop' {splits} body takes (iter, m0, n0, batch, tile, split) : i32";
  if (op.attr("cluster"))
    return d.error(op.loc()) << "'kern.tile_loop' {splits} walks single-block tiles; it does not take {cluster}";
  return true;
}

// Ragged groups (kern_ops.h, kern.tile_loop {ragged}): the tile count comes from the bounds in
// memory, so the walk takes no option that presumes a fixed grid of tiles (splits) or a tile that
// spans groups (cluster); either raster walks each group's tile rows as a grid of its own. {stream_k} is the one
// split across blocks it takes, for groups of rows: its waves are computed from the tile count on
// the device, as that count is.
bool verifyTileLoopRagged(const Operation& op, DiagnosticEngine& d) {
  const std::string ragged = op.stringAttr("ragged");
  if (ragged != "offsets" && ragged != "counts" && ragged != "k_offsets")
    return d.error(op.loc()) << "'kern.tile_loop' needs {ragged = \"offsets\"|\"counts\"|\"k_offsets\"}, got \""
                             << ragged << "\"";
  const bool alongK = ragged == "k_offsets";
  if (alongK && op.intAttr("kstep", 0) < 1)
    return d.error(op.loc()) << "'kern.tile_loop' {ragged = \"k_offsets\"} needs {kstep = bk} with bk >= 1";
  // {stream_k = W} over groups of rows: the walk's tiles are the groups' (counted on the device),
  // the last W waves' K steps shared out as the dense stream-K walk does; one more operand, ktiles.
  const bool streamK = op.attr("stream_k") != nullptr;
  if (streamK && alongK)
    return d.error(op.loc()) << "'kern.tile_loop' {ragged = \"k_offsets\"} gives each unit its group's K steps; it "
                                "takes no {stream_k}";
  if (streamK && op.intAttr("stream_k", 0) != 1 && op.intAttr("stream_k", 0) != 2)
    return d.error(op.loc()) << "'kern.tile_loop' {stream_k = W} shares out the tiles of the last W waves: W is 1 "
                                "or 2";
  bool ok = op.numOperands() == (alongK || streamK ? 5u : 4u);
  for (unsigned i = 0; ok && i < op.numOperands(); ++i)
    ok = i == 3 || op.operand(i)->type().isScalar(ScalarType::I32);
  const Type* p = ok ? &op.operand(3)->type() : nullptr;
  if (!ok || !isPtr(*p) || (p->elem() != ScalarType::I32 && p->elem() != ScalarType::I64))
    return d.error(op.loc()) << (alongK ? "'kern.tile_loop' {ragged = \"k_offsets\"} takes (M, N, groups) as i32, the "
                                          "groups' offsets as ptr<i32> or ptr<i64>, and K as i32"
                                        : streamK ? "'kern.tile_loop' {ragged, stream_k} takes (M, N, groups) as "
                                                    "i32, the groups' bounds as ptr<i32> or ptr<i64>, and ktiles (K "
                                                    "steps per tile) as i32"
                                        : "'kern.tile_loop' {ragged} takes (M, N, groups) as i32 and the groups' bounds "
                                          "as ptr<i32> or ptr<i64>");
  if (op.attr("cluster") || op.attr("splits"))
    return d.error(op.loc()) << "'kern.tile_loop' {ragged} walks single-block tiles of one group each: it takes no "
                                "{cluster} or {splits}";
  const std::string raster = op.stringAttr("raster");
  if (raster != "row" && raster != "grouped")
    return d.error(op.loc()) << "'kern.tile_loop' needs {raster = \"row\"|\"grouped\"}, got \"" << raster << "\"";
  if (raster == "grouped" && op.intAttr("group_m", 0) < 1)
    return d.error(op.loc()) << "'kern.tile_loop' with raster = \"grouped\" needs {group_m = G} with G >= 1";
  const Block& body = op.body();
  const unsigned nargs = alongK ? 8 : streamK ? 9 : 5;
  bool args = body.numArguments() == nargs;
  for (unsigned i = 0; args && i < nargs; ++i) args = body.argument(i)->type().isScalar(ScalarType::I32);
  if (!args)
    return d.error(op.loc()) << (alongK ? "'kern.tile_loop' {ragged = \"k_offsets\"} body takes (iter, m0, n0, group, "
                                          "ktok, kend, ksteps, done) : i32"
                                        : streamK ? "'kern.tile_loop' {ragged, stream_k} body takes (iter, m0, n0, "
                                                    "group, mend, kbase, ksteps, done, peers) : i32"
                                        : "'kern.tile_loop' {ragged} body takes (iter, m0, n0, group, mend) : i32");
  auto tile = op.intsAttr("tile");
  if (tile.size() != 2 || tile[0] <= 0 || tile[1] <= 0)
    return d.error(op.loc()) << "'kern.tile_loop' needs {tile = [bm, bn]} with positive sizes";
  return true;
}

}  // namespace kiln::kern
