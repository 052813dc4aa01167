#pragma once
// What the registered GEMM families share in picking a variant (gemm_bf16, gemm_fp8): the named
// variant when one is forced (an error when it is unknown or cannot run the problem), else the
// eligible variant of highest preference, ties to the first in the table; nullopt after a
// diagnostic when none can run the problem.
#include <optional>
#include <string>
#include <string_view>

#include "kiln/ir/diagnostics.h"
#include "kiln/target.h"

namespace kiln::ops {

// Selection: {const Variant* variant; std::string source; double score;}. `family` and `example`
// name the family and a variant name for the messages.
template <typename Selection, typename Table, typename Problem>
std::optional<Selection> selectVariant(const Table& table, const Problem& p, const Target& t, ir::DiagnosticEngine& diag,
                                       std::string_view forced, const char* family, const char* example) {
  if (!forced.empty()) {
    for (const auto& v : table) {
      if (v.name != forced) continue;
      std::string why;
      if (!v.eligible(p, t, &why)) {
        diag.error({}) << "variant " << v.name << " cannot run this problem on " << t.name << ": " << why;
        return std::nullopt;
      }
      return Selection{&v, "forced", v.preference(p, t)};
    }
    diag.error({}) << "unknown " << family << " variant '" << forced << "' (names look like " << example << ")";
    return std::nullopt;
  }
  Selection best{};
  std::string firstWhy;
  for (const auto& v : table) {
    std::string why;
    if (!v.eligible(p, t, &why)) {
      if (firstWhy.empty()) firstWhy = why;
      continue;
    }
    double s = v.preference(p, t);
    if (!best.variant || s > best.score) best = Selection{&v, "heuristic", s};
  }
  if (!best.variant) {
    diag.error({}) << "no " << family << " variant can run this problem on " << t.name << ": " << firstWhy;
    return std::nullopt;
  }
  return best;
}

}  // namespace kiln::ops
