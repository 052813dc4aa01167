#include "transforms/pass_registry.h"

#include "kiln/ir/verifier.h"

namespace kiln::transforms {

bool verifyPass(ir::Module& m, ir::DiagnosticEngine& diag) { return ir::verify(m, diag); }

const std::vector<PassInfo>& allPasses() {
  static const std::vector<PassInfo> passes = {
      {"dce", "remove pure operations whose results are unused", eliminateDeadCode},
      {"verify", "run the verifier (every op's own rules) and change nothing", verifyPass},
      {"lower-sm80-multistage",
       "lower each tile.program to a kern.kernel with the sm80 multistage GEMM strategy (the program's "
       "{target, config} attributes pick the target and the schedule)",
       lowerSm80MultistagePass},
      {"pair-ldmatrix", "fuse two .x2 ldmatrix of neighbouring fragments into one .x4", pairLdmatrixPass},
      {"lower-sm90-ws-persistent",
       "lower each tile.program to a kern.kernel with the sm90 warp-specialized persistent wgmma GEMM strategy "
       "(the program's {target, config} attributes pick the target and the schedule)",
       lowerSm90WsPersistentPass},
      {"lower-rowwise",
       "lower each tile.program to a kern.kernel with the rowwise strategy for memory-bound programs (rows of "
       "threads, 16-byte vectors, shuffle reductions; the program's {target, config} attributes pick the target and "
       "the schedule)",
       lowerRowwisePass},
      {"partition-roles",
       "split a persistent tile loop holding role regions into one role-local tile loop per role (plus the "
       "residual shared loop)",
       partitionRolesPass},
      {"remove-residual-loop",
       "remove the residual shared tile loop partition-roles leaves, when it provably does no observable work "
       "(otherwise keep it and record why in {kiln.kept} and a remark)",
       removeResidualLoopPass},
      {"set-role-registers", "start each top-level role with the setmaxnreg its kernel's {role_regs} asks for",
       setRoleRegistersPass},
      {"strength-reduce",
       "rewrite i32 x / 2^k and x % 2^k into x >> k and x & (2^k - 1) where x >= 0 is provable (integer "
       "range analysis; otherwise keep the op)",
       strengthReducePass},
  };
  return passes;
}

const PassInfo* findPass(std::string_view name) {
  for (const auto& p : allPasses())
    if (p.name == name) return &p;
  return nullptr;
}

std::vector<std::string> passNames() {
  std::vector<std::string> r;
  for (const auto& p : allPasses()) r.push_back(p.name);
  return r;
}

bool runPass(std::string_view name, ir::Module& m, ir::DiagnosticEngine& diag) {
  const PassInfo* p = findPass(name);
  if (!p) {
    std::string known;
    for (const auto& n : passNames()) known += (known.empty() ? "" : ", ") + n;
    return diag.error(ir::Location::unknown()) << "unknown pass '" << name << "'; known passes: " << known;
  }
  return p->run(m, diag);
}

}  // namespace kiln::transforms
