// The launch contract as JSON (kiln/compile.h): `kiln compile --emit launch --json` prints it and
// the Python package reads it, so both see one form.
#include <nlohmann/json.hpp>

#include "kiln/compile.h"

namespace kiln {
namespace {

const char* kindName(KernelParam::Kind k) {
  switch (k) {
    case KernelParam::Kind::Pointer: return "pointer";
    case KernelParam::Kind::TensorMap: return "tensor_map";
    case KernelParam::Kind::Scalar: return "scalar";
    case KernelParam::Kind::Dim: return "dim";
    case KernelParam::Kind::Workspace: return "workspace";
  }
  return "?";
}

nlohmann::json paramJson(const KernelParam& p) {
  nlohmann::json j = {{"name", p.name}, {"kind", kindName(p.kind)}, {"dtype", std::string(ir::scalarName(p.elem))}};
  if (p.kind == KernelParam::Kind::Pointer) {
    j["alignment"] = p.alignment;
    if (!p.order.empty()) j["order"] = p.order;
    if (!p.strides.empty()) {
      nlohmann::json s = nlohmann::json::array();
      for (const ir::Extent& e : p.strides) s.push_back(e.isSymbolic() ? nlohmann::json(e.sym) : nlohmann::json(e.value));
      j["strides"] = s;
    }
  }
  if (p.kind == KernelParam::Kind::TensorMap) {
    j["tensor"] = p.tensor;
    j["box"] = p.box;
    j["swizzle_bytes"] = p.swizzleBytes;
    if (p.flat) j["flat"] = true;  // over the tensor's stored elements as one row
    if (p.stream)
      j["stream"] = {{"bound_dim", p.stream->boundDim}, {"bound", p.stream->bound}, {"row_dim", p.stream->rowDim},
                     {"row_multiple", p.stream->rowMultiple}, {"fill_bytes", p.stream->fillBytes}};
  }
  return j;
}

}  // namespace

std::string launchJson(const LaunchInfo& l) {
  nlohmann::json params = nlohmann::json::array(), grid = nlohmann::json::array(), divisibility = nlohmann::json::array();
  for (const auto& p : l.params) params.push_back(paramJson(p));
  for (const auto& axis : l.grid) {
    nlohmann::json tiles = nlohmann::json::array();
    for (const auto& [dim, tile] : axis.tiles) tiles.push_back({{"dim", dim}, {"tile", tile}});
    grid.push_back({{"constant", axis.constant}, {"tiles", tiles}});
  }
  for (const auto& [dim, multiple] : l.divisibility) divisibility.push_back({{"dim", dim}, {"multiple", multiple}});
  nlohmann::json j = {{"kernel", l.kernelName},
                      {"threads", l.threads},
                      {"dynamic_smem_bytes", l.dynamicSmemBytes},
                      {"params", params},
                      {"grid", grid},
                      {"cluster", l.cluster},
                      {"persistent", l.persistent},
                      {"divisibility", divisibility},
                      {"workspace_unit_bytes", l.workspaceUnitBytes},
                      {"workspace_per_block", l.workspacePerBlock}};
  // A persistent grid of more than one block per SM (sm90 blocks_per_sm=2, rowwise blocks_per_sm).
  if (l.persistentPerSm != 1) j["persistent_per_sm"] = l.persistentPerSm;
  if (l.programmatic) j["programmatic"] = true;
  return j.dump(2);
}

}  // namespace kiln
