// The pass table (one line per pass).
#include "transforms/pass_registry.h"

#include <algorithm>

#include "kiln/ir/verifier.h"

namespace kiln::transforms {

bool verifyPass(ir::Module& m, ir::DiagnosticEngine& diag) { return ir::verify(m, diag); }

const std::vector<PassInfo>& allPasses() {
  static const std::vector<PassInfo> passes = [] {
    std::vector<PassInfo> p = {
        {"verify", verifyPass, "run the verifier (every op's rules) and change nothing"},
        {"lower-sm80-multistage", lowerSm80MultistagePass,
         "lower each tile.program to a kern.kernel with the sm80 multistage GEMM strategy ({target, config} "
         "attributes of the program pick the target and schedule)"},
        {"pair-ldmatrix", pairLdmatrixPass, "fuse two .x2 ldmatrix of neighbouring fragments into one .x4"},
        {"kern-dce", kernDcePass, "remove pure kern/arith ops whose results are unused"},
    };
    std::sort(p.begin(), p.end(), [](const PassInfo& a, const PassInfo& b) { return a.name < b.name; });
    return p;
  }();
  return passes;
}

const PassInfo* findPass(std::string_view name) {
  for (const auto& p : allPasses())
    if (p.name == name) return &p;
  return nullptr;
}

bool runPass(std::string_view name, ir::Module& m, ir::DiagnosticEngine& diag) {
  const PassInfo* p = findPass(name);
  if (!p) {
    std::string known;
    for (const auto& q : allPasses()) known += (known.empty() ? "" : ", ") + q.name;
    return diag.error({}) << "unknown pass '" << name << "'; known passes: " << known;
  }
  return p->run(m, diag);
}

std::vector<std::string> passNames() {
  std::vector<std::string> names;
  for (const auto& p : allPasses()) names.push_back(p.name);
  return names;
}

}  // namespace kiln::transforms
