// Checks of per-row group ids (contract in group_ids.h).
#include "interp/group_ids.h"

#include <map>

namespace kiln::interp {
namespace {

// The tightest tensor axis that the group index selects with an integer index, if any.
struct GroupBound {
  int64_t groups = -1;  // -1: no axis bounds the ids
  std::string tensor;
  size_t axis = 0;
};

GroupBound boundOf(const ir::Operation& op, const RunContext& ctx) {
  GroupBound best;
  for (const ir::Use& use : op.result()->uses()) {
    const ir::Operation* user = use.user;
    bool indexes = user->is("tile.load") || user->is("tile.store") || user->is("tile.load_scalar");
    if (!indexes || use.operandIndex == 0) continue;
    size_t axis = use.operandIndex - 1;
    auto it = ctx.env.find(user->operand(0));
    if (it == ctx.env.end()) continue;
    const BoundTensor* t = std::get<const BoundTensor*>(it->second);
    if (axis >= t->extents.size()) continue;  // the value stored by a tile.store
    if (best.groups < 0 || t->extents[axis] < best.groups) best = {t->extents[axis], t->name, axis};
  }
  return best;
}

}  // namespace

bool checkGroupIds(const ir::Operation& op, const RunContext& ctx) {
  const BoundTensor& ids = *std::get<const BoundTensor*>(ctx.env.at(op.operand(0)));
  int64_t align = op.intAttr("align");
  int64_t rows = ids.extents[0];
  GroupBound bound = boundOf(op, ctx);
  auto id = [&](int64_t row) { return static_cast<int64_t>(ids.read(row * ids.strides[0])); };

  std::map<int64_t, int64_t> lastRowOf;  // group -> the last row seen in it
  for (int64_t row = 0; row < rows; ++row) {
    int64_t g = id(row);
    if (g < 0 || (bound.groups >= 0 && g >= bound.groups)) {
      if (bound.groups < 0)
        return ctx.diag.error(op.loc()) << "group id " << g << " at row " << row << " of '" << ids.name << "' is negative";
      return ctx.diag.error(op.loc()) << "group id " << g << " at row " << row << " of '" << ids.name << "' is outside [0, "
                                      << bound.groups << "): '" << bound.tensor << "' has " << bound.groups
                                      << " groups along axis " << bound.axis;
    }
    int64_t chunkStart = row - row % align;
    if (id(chunkStart) != g)
      return ctx.diag.error(op.loc()) << "group ids in '" << ids.name << "' must be constant on each chunk of " << align
                                      << " rows (tile.group_index {align = " << align << "}), but row " << chunkStart
                                      << " has group " << id(chunkStart) << " and row " << row << " has group " << g;
    auto last = lastRowOf.find(g);
    if (last != lastRowOf.end() && last->second != row - 1)
      return ctx.diag.error(op.loc()) << "the rows of group " << g << " in '" << ids.name
                                      << "' must be contiguous, but it appears again at row " << row << " after group "
                                      << id(row - 1);
    lastRowOf[g] = row;
  }
  return true;
}

}  // namespace kiln::interp
