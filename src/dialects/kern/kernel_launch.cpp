// The kern.kernel launch contract's text form (contract in kernel_launch.h).
#include "dialects/kern/kernel_launch.h"

namespace kiln::kern {
using ir::Attribute;

namespace {

Attribute pairs(const std::vector<std::pair<std::string, int64_t>>& v) {
  Attribute::Array a;
  for (const auto& [name, n] : v) a.push_back(Attribute::Array{Attribute(name), Attribute(n)});
  return Attribute(a);
}

std::vector<std::pair<std::string, int64_t>> pairsOf(const Attribute* a) {
  std::vector<std::pair<std::string, int64_t>> r;
  if (!a) return r;
  for (const auto& e : a->asArray()) r.push_back({e.asArray()[0].asString(), e.asArray()[1].asInt()});
  return r;
}

Attribute axis(const KernelLaunch::Axis& x) {
  if (x.constantOnly()) return Attribute(x.factor);
  Attribute::Array a;
  for (const auto& [dim, tile] : x.tiles) {
    a.push_back(Attribute(dim));
    a.push_back(Attribute(tile));
  }
  if (x.factor != 1) a.push_back(Attribute(x.factor));
  return Attribute(a);
}

KernelLaunch::Axis axisOf(const Attribute& e) {
  KernelLaunch::Axis x;
  if (e.isInt()) {
    x.factor = e.asInt();
    return x;
  }
  const auto& a = e.asArray();
  for (size_t i = 0; i + 1 < a.size(); i += 2) x.tiles.push_back({a[i].asString(), a[i + 1].asInt()});
  if (a.size() % 2 == 1) x.factor = a.back().asInt();
  return x;
}

}  // namespace

std::vector<ir::NamedAttr> kernelAttributes(const KernelLaunch& l, std::vector<ir::NamedAttr> provenance) {
  Attribute::Array grid;
  for (const auto& x : l.grid) grid.push_back(axis(x));
  std::vector<ir::NamedAttr> attrs = {{"sym_name", l.name},
                                      {"params", Attribute::strings(l.params)},
                                      {"threads", l.threads},
                                      {"smem_bytes", l.smemBytes},
                                      {"grid", Attribute(grid)},
                                      {"requires", pairs(l.divisibility)},
                                      {"align", pairs(l.alignment)}};
  for (auto& p : provenance) attrs.push_back(std::move(p));
  if (l.persistent) attrs.push_back({"persistent", true});
  if (l.persistentPerSm != 1) attrs.push_back({"persistent_per_sm", l.persistentPerSm});
  if (l.cluster) attrs.push_back({"cluster", Attribute::ints({(*l.cluster)[0], (*l.cluster)[1], (*l.cluster)[2]})});
  if (l.workspace) attrs.push_back({"workspace", Attribute::ints({(*l.workspace)[0], (*l.workspace)[1]})});
  if (l.workspacePerBlock) attrs.push_back({"workspace_per", "block"});
  if (!l.streams.empty()) {
    Attribute::Array streams;
    for (const auto& s : l.streams)
      streams.push_back(Attribute::Array{Attribute(s.map), Attribute(s.boundDim), Attribute(s.bound), Attribute(s.rowDim),
                                         Attribute(s.rowMultiple), Attribute(s.fillBytes)});
    attrs.push_back({"streams", Attribute(streams)});
  }
  if (l.programmatic) attrs.push_back({"programmatic", true});
  return attrs;
}

void KernelLaunch::requireMultiple(const std::string& dim, int64_t multiple) {
  if (multiple <= 1) return;
  for (auto& [d, m] : divisibility)
    if (d == dim) {
      if (multiple % m == 0) m = multiple;
      return;
    }
  divisibility.push_back({dim, multiple});
}

KernelLaunch kernelLaunchOf(const ir::Operation& k) {
  KernelLaunch l;
  l.name = k.stringAttr("sym_name");
  l.params = k.stringsAttr("params");
  l.threads = k.intAttr("threads", 0);
  l.smemBytes = k.intAttr("smem_bytes", 0);
  for (const auto& e : k.attr("grid")->asArray()) l.grid.push_back(axisOf(e));
  l.divisibility = pairsOf(k.attr("requires"));
  l.alignment = pairsOf(k.attr("align"));
  l.persistent = k.attr("persistent") && k.attr("persistent")->asBool();
  l.persistentPerSm = k.intAttr("persistent_per_sm", 1);
  if (auto c = k.intsAttr("cluster"); c.size() == 3) l.cluster = std::array<int64_t, 3>{c[0], c[1], c[2]};
  if (auto w = k.intsAttr("workspace"); w.size() == 2) l.workspace = std::array<int64_t, 2>{w[0], w[1]};
  l.workspacePerBlock = k.stringAttr("workspace_per") == "block";
  l.programmatic = k.attr("programmatic") && k.attr("programmatic")->asBool();
  if (const Attribute* streams = k.attr("streams"))
    for (const Attribute& r : streams->asArray()) {
      const auto& f = r.asArray();
      l.streams.push_back({f[0].asString(), f[1].asString(), f[2].asInt(), f[3].asString(), f[4].asInt(), f[5].asInt()});
    }
  return l;
}

}  // namespace kiln::kern
