#include "kiln/ir/op_registry.h"

#include <algorithm>
#include <atomic>
#include <mutex>

namespace kiln::ir {

namespace {
// Written once, under the flag, before any reader can see it; never freed (it lives as long as the
// ops that point into it).
std::atomic<const OpRegistry*> installed{nullptr};
std::once_flag installOnce;
}  // namespace

const OpRegistry& OpRegistry::get() {
  const OpRegistry* r = installed.load(std::memory_order_acquire);
  KILN_ASSERT(r != nullptr,
              "no dialect is registered: call kiln::registerAllDialects() (kiln/dialects.h) before building or "
              "parsing IR");
  return *r;
}

void OpRegistry::install(void (*fill)(OpRegistry&)) {
  // Explicit calls rather than static registrars, which a static library's linker would drop.
  std::call_once(installOnce, [fill] {
    auto* r = new OpRegistry;
    fill(*r);
    std::sort(r->ops_.begin(), r->ops_.end(), [](const OpInfo& a, const OpInfo& b) { return a.name < b.name; });
    installed.store(r, std::memory_order_release);
  });
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
