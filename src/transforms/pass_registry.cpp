#include "transforms/pass_registry.h"

#include "kiln/ir/verifier.h"

namespace kiln::transforms {

bool verifyPass(ir::Module& m, ir::DiagnosticEngine& diag) { return ir::verify(m, diag); }

const std::vector<PassInfo>& genericPasses() {
  static const std::vector<PassInfo> passes = {
      {"dce", "remove pure operations whose results are unused", eliminateDeadCode},
      {"verify", "run the verifier (every op's own rules) and change nothing", verifyPass},
      {"pair-ldmatrix", "fuse two .x2 ldmatrix of neighbouring fragments into one .x4", pairLdmatrixPass},
      {"partition-roles",
       "split a persistent tile loop holding role regions into one role-local tile loop per role (plus the "
       "residual shared loop)",
       partitionRolesPass},
      {"remove-residual-loop",
       "remove the residual shared tile loop partition-roles leaves, when it provably does no observable work "
       "(otherwise keep it and record why in {kiln.kept} and a remark)",
       removeResidualLoopPass},
      {"expand-tile-loop",
       "write each persistent kern.tile_loop out as an scf.for over the block's units, the tile scheduler's walk "
       "(persistent, split-K, stream-K, clusters) as kern IR",
       expandTileLoopPass},
      {"set-role-registers", "start each top-level role with the setmaxnreg its kernel's {role_regs} asks for",
       setRoleRegistersPass},
      {"strength-reduce",
       "rewrite i32 x / 2^k and x % 2^k into x >> k and x & (2^k - 1) where x >= 0 is provable (integer "
       "range analysis; otherwise keep the op)",
       strengthReducePass},
  };
  return passes;
}

}  // namespace kiln::transforms
