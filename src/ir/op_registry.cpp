#include "kiln/ir/op_registry.h"

#include <algorithm>

namespace kiln::ir {

const OpRegistry& OpRegistry::get() {
  // Built once, on first use; explicit calls rather than static registrars, which a static
  // library's linker would drop.
  static const OpRegistry registry = [] {
    OpRegistry r;
    registerBuiltinDialect(r);
    registerArithDialect(r);
    registerTileDialect(r);
    registerKernDialect(r);
    std::sort(r.ops_.begin(), r.ops_.end(),
              [](const OpInfo& a, const OpInfo& b) { return a.name < b.name; });
    return r;
  }();
  return registry;
}

const OpInfo* OpRegistry::lookup(std::string_view name) const {
  auto it = std::lower_bound(ops_.begin(), ops_.end(), name,
                             [](const OpInfo& a, std::string_view n) { return a.name < n; });
  return it != ops_.end() && it->name == name ? &*it : nullptr;
}

void OpRegistry::add(OpInfo info) {
  for (const auto& o : ops_)
    KILN_ASSERT(o.name != info.name, "op " + info.name + " registered twice");
  ops_.push_back(std::move(info));
}

}  // namespace kiln::ir
