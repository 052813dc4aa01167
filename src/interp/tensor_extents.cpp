// Logical and stored extents of tensor arguments (see tensor_extents.h).
#include "interp/tensor_extents.h"

namespace kiln::interp {

std::optional<std::vector<int64_t>> logicalExtents(const ir::Type& t, const std::map<std::string, int64_t>& dims) {
  std::vector<int64_t> out;
  for (const auto& e : t.shape()) {
    if (!e.isSymbolic()) {
      out.push_back(e.value);
      continue;
    }
    auto it = dims.find(e.sym);
    if (it == dims.end() || it->second <= 0) return std::nullopt;
    out.push_back(it->second);
  }
  return out;
}

std::vector<int64_t> storedExtents(const ir::Type& t, const std::vector<int64_t>& logical) {
  std::vector<int64_t> block = ir::blockOf(t), out;
  for (size_t a = 0; a < logical.size(); ++a) out.push_back(ir::storedExtent(logical[a], a < block.size() ? block[a] : 1));
  return out;
}

}  // namespace kiln::interp
