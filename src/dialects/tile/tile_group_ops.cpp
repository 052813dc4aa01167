// Verify hook of a ragged tile.for_tiles (tile_ops.def, semantics in tile_ops.h): a batched tile
// loop whose batch is a list of groups, each owning a contiguous range of one dim, given by a
// tensor of offsets (the contiguous layout of MoE's grouped GEMMs, torch._grouped_mm's `offs`) or
// of counts (DeepGEMM's masked layout).
#include <algorithm>

#include "dialects/tile/tile_ops.h"
#include "dialects/tile/tile_verify.h"

namespace kiln::tile {
using namespace kiln::ir;

namespace {

// Whether a tile.reduce inside `op` iterates `dim`.
bool reducedInside(const Operation& op, const std::string& dim) {
  bool found = false;
  op.walk([&](const Operation& o) { found = found || (o.is("tile.reduce") && o.stringAttr("dim") == dim); });
  return found;
}

}  // namespace

bool verifyRaggedTiles(const Operation& op, DiagnosticEngine& d) {
  const std::string ragged = op.stringAttr("ragged"), bounds = op.stringAttr("bounds"), batch = op.stringAttr("batch");
  if (op.numOperands() == 0 && ragged.empty() && bounds.empty()) return true;
  if (op.numOperands() != 1 || ragged.empty() || bounds.empty())
    return d.error(op.loc()) << "a ragged 'tile.for_tiles' takes one operand, the tensor of its groups' bounds, "
                                "with {ragged = \"D\"} naming the dim the groups split and {bounds = \"offsets\" | "
                                "\"counts\"}";
  if (batch.empty())
    return d.error(op.loc()) << "a ragged 'tile.for_tiles' runs once per group: it needs {batch = \"G\"}, the dim that "
                                "counts the groups";
  if (bounds != "offsets" && bounds != "counts")
    return d.error(op.loc()) << "'tile.for_tiles' {bounds = \"" << bounds << "\"} must be \"offsets\" (group g owns ["
                             << "offsets[g-1], offsets[g]) of " << ragged << ", from 0 for g = 0) or \"counts\" (group g "
                             << "owns [0, counts[g]))";
  if (!hasDim(programDims(op), ragged) || ragged == batch)
    return d.error(op.loc()) << "'tile.for_tiles' {ragged = \"" << ragged << "\"} must name a dim of the program other "
                             << "than the batch dim '" << batch << "'";
  auto dims = op.stringsAttr("dims");
  if (!hasDim(dims, ragged) && !reducedInside(op, ragged))
    return d.error(op.loc()) << "'tile.for_tiles' splits '" << ragged << "' into groups, so the loop must tile it or a "
                             << "tile.reduce inside it must iterate it";
  const Value* b = op.operand(0);
  const Type& t = b->type();
  const Operation* decl = b->definingOp();
  bool okType = isTensorType(t) && t.rank() == 1 && (t.elem() == ScalarType::I32 || t.elem() == ScalarType::I64) &&
                t.shape()[0] == Extent::of(batch) && !t.param("block");
  if (!okType || !decl || !decl->is("tile.input"))
    return d.error(op.loc()) << "the " << bounds << " of a ragged 'tile.for_tiles' must be a tile.input of type "
                             << "tensor<i32, [" << batch << "]> (or i64): one entry per group, got " << t.str();
  return true;
}

}  // namespace kiln::tile
