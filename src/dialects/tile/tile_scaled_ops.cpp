// Verify hooks of the tile dialect's block scaling (tile_ops.def): the `block` parameter of tensor
// arguments and tile.dot_scaled. Semantics in tile_ops.h; the interpreter's numerics in
// kiln/interp/interpreter.h.
#include <algorithm>
#include <optional>

#include "dialects/tile/tile_ops.h"
#include "dialects/tile/tile_verify.h"

namespace kiln::tile {
using namespace kiln::ir;

namespace {

// Where a scale operand comes from, when it is loaded straight from a tensor argument: the
// argument's name and its block along the axis that `kDim`'s coord indexes. The rule below can
// only be checked for scales that are loaded; others keep the op's general meaning.
struct ScaleSource {
  std::string name;
  int64_t blockK = 0;  // 0: the load does not index K with a coord
};

std::optional<ScaleSource> scaleSource(const Value& v, const Extent& kDim) {
  const Operation* load = v.definingOp();
  if (!load || !load->is("tile.load") || !kDim.isSymbolic()) return std::nullopt;
  const Operation* arg = load->operand(0)->definingOp();
  if (!arg || !(arg->is("tile.input") || arg->is("tile.output"))) return std::nullopt;
  ScaleSource s{arg->stringAttr("name")};
  std::vector<int64_t> block = blockOf(load->operand(0)->type());
  for (unsigned i = 1; i < load->numOperands() && i - 1 < block.size(); ++i)
    if (coordDim(load->operand(i)) == kDim.sym) s.blockK = block[i - 1];
  return s;
}

}  // namespace

bool verifyTensorBlock(const Operation& arg, DiagnosticEngine& d) {
  const Type& t = arg.result()->type();
  const Attribute* block = t.param("block");
  if (!block) return true;
  std::string name = arg.stringAttr("name");
  auto b = block->asInts();
  bool ok = b && b->size() == t.rank() && std::all_of(b->begin(), b->end(), [](int64_t v) { return v > 0; });
  if (!ok)
    return d.error(arg.loc()) << "tensor '" << name << "' has an invalid block " << block->str()
                              << ": it must give one positive extent per axis (" << t.rank() << ")";
  if (!arg.is("tile.input"))
    return d.error(arg.loc()) << "output '" << name << "' cannot be stored in blocks " << block->str()
                              << ": a block tensor holds one element per block (scales), so only inputs have one";
  return true;
}

bool verifyDotScaled(const Operation& op, DiagnosticEngine& d) {
  const Value &a = *op.operand(0), &sa = *op.operand(1), &b = *op.operand(2), &sb = *op.operand(3);
  if (!verifyMatmul(op, a, b, *op.operand(4), d)) return false;
  const Attribute* bk = op.attr("block_k");
  if (!bk || !bk->isInt() || bk->asInt() <= 0)
    return d.error(op.loc()) << "'tile.dot_scaled' needs {block_k = N}: the width of the slices of K whose partial "
                                "sums the scales multiply";
  const int64_t blockK = bk->asInt();
  const Extent& kDim = a.type().shape()[1];
  struct Side {
    const char* what;
    const Value& scale;
    const Type& operand;
  };
  for (const Side& s : {Side{"a", sa, a.type()}, Side{"b", sb, b.type()}}) {
    const Type& st = s.scale.type();
    if (!isTileType(st) || st.elem() != ScalarType::F32 || st.shape() != s.operand.shape())
      return d.error(op.loc()) << "'tile.dot_scaled' scales of " << s.what << " must be an f32 tile of " << s.what
                               << "'s shape " << shapeStr(s.operand.shape()) << ", got " << st.str();
    auto src = scaleSource(s.scale, kDim);
    if (src && src->blockK % blockK != 0)
      return d.error(op.loc()) << "'tile.dot_scaled' sums slices of " << blockK << " along " << kDim.str()
                               << ", but the scales of " << s.what << ", '" << src->name << "', change every "
                               << src->blockK << " along it: declare '" << src->name << "' with a block of "
                               << blockK << " (or a multiple) along " << kDim.str() << ", or use {block_k = "
                               << src->blockK << "}";
  }
  return true;
}

}  // namespace kiln::tile
