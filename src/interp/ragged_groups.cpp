// Group ranges of a ragged tile loop (see ragged_groups.h).
#include "interp/ragged_groups.h"

namespace kiln::interp {

std::optional<std::vector<GroupRange>> raggedGroupRanges(const ir::Operation& op, const RunContext& ctx) {
  const BoundTensor& t = *std::get<const BoundTensor*>(ctx.env.at(op.operand(0)));
  const std::string dim = op.stringAttr("ragged");
  const int64_t extent = ctx.extents.at(dim);
  const bool offsets = op.stringAttr("bounds") == "offsets";
  std::vector<GroupRange> ranges;
  int64_t end = 0;  // the previous group's end
  for (int64_t g = 0; g < t.extents[0]; ++g) {
    int64_t v = static_cast<int64_t>(t.read(g * t.strides[0]));
    if (v < 0 || v > extent) {
      ctx.diag.error(op.loc()) << "the " << (offsets ? "offsets" : "counts") << " in '" << t.name << "' must lie in [0, "
                               << dim << "] = [0, " << extent << "]: group " << g << (offsets ? " ends at " : " has ")
                               << v;
      return std::nullopt;
    }
    if (offsets && v < end) {
      ctx.diag.error(op.loc()) << "the offsets in '" << t.name << "' must not decrease: group " << g << " ends at " << v
                               << ", before group " << g - 1 << "'s end " << end;
      return std::nullopt;
    }
    ranges.push_back(offsets ? GroupRange{end, v} : GroupRange{0, v});
    end = v;
  }
  return ranges;
}

}  // namespace kiln::interp
