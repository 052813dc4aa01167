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

void OpRegistry::addTypeKind(std::string kind, std::vector<std::string> params) {
  KILN_ASSERT(!typeParams(kind), "type kind " + kind + " registered twice");
  typeKinds_.emplace_back(std::move(kind), std::move(params));
}

const std::vector<std::string>* OpRegistry::typeParams(std::string_view kind) const {
  for (const auto& [k, p] : typeKinds_)
    if (k == kind) return &p;
  return nullptr;
}

bool OpInfo::knowsAttr(std::string_view a) const { return std::find(attrs.begin(), attrs.end(), a) != attrs.end(); }

std::vector<std::string> words(std::string_view spaced) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < spaced.size()) {
    size_t j = spaced.find(' ', i);
    if (j == std::string_view::npos) j = spaced.size();
    if (j > i) out.emplace_back(spaced.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

std::string nearestName(std::string_view word, const std::vector<std::string>& candidates) {
  auto distance = [](std::string_view a, std::string_view b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      size_t diag = row[0];
      row[0] = i;
      for (size_t j = 1; j <= b.size(); ++j) {
        size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diag = up;
      }
    }
    return row[b.size()];
  };
  std::string best;
  size_t bestD = 3;
  for (const auto& c : candidates)
    if (size_t d = distance(word, c); d < bestD && d < std::max(word.size(), c.size())) {
      best = c;
      bestD = d;
    }
  return best;
}

void OpRegistry::add(OpInfo info) {
  for (const auto& o : ops_)
    KILN_ASSERT(o.name != info.name, "op " + info.name + " registered twice");
  ops_.push_back(std::move(info));
}

}  // namespace kiln::ir
