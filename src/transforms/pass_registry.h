#pragma once
// The generic passes of kern and tile IR (one per file here), by name. The strategies' lowerings
// and passes live above this layer (src/schedule/); src/schedule/pipeline.h assembles every pass,
// so that `kiln opt --pass NAME` and the pipeline can run any of them on a module.
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"

namespace kiln::transforms {

using PassFn = bool (*)(ir::Module&, ir::DiagnosticEngine&);

struct PassInfo {
  std::string name;
  std::string summary;
  PassFn run;
};

// The passes of this layer, in the order `kiln opt --list-passes` shows them.
const std::vector<PassInfo>& genericPasses();

// ---- the passes (one per file) ----
// Removes pure ops whose results are unused (dce.cpp).
bool eliminateDeadCode(ir::Module& m, ir::DiagnosticEngine& diag);
// Runs the verifier and changes nothing (pass_registry.cpp).
bool verifyPass(ir::Module& m, ir::DiagnosticEngine& diag);
// Fuses two .x2 ldmatrix of neighbouring fragments into one .x4 (pair_ldmatrix.cpp).
bool pairLdmatrixPass(ir::Module& m, ir::DiagnosticEngine& diag);
// Splits a persistent tile loop holding role regions into one tile loop per role (partition_roles.cpp).
bool partitionRolesPass(ir::Module& m, ir::DiagnosticEngine& diag);
// Removes the residual shared tile loop left by partition-roles when it does no observable work, or
// records why it stays (remove_residual_loop.cpp).
bool removeResidualLoopPass(ir::Module& m, ir::DiagnosticEngine& diag);
// Writes each kern.tile_loop out as an scf.for over the block's units with the tile scheduler's
// index math as kern IR (expand_tile_loop.cpp).
bool expandTileLoopPass(ir::Module& m, ir::DiagnosticEngine& diag);
// Starts each top-level role with the setmaxnreg its kernel's {role_regs} asks for (set_role_registers.cpp).
bool setRoleRegistersPass(ir::Module& m, ir::DiagnosticEngine& diag);
// Rewrites i32 division and remainder by a power of two of a provably non-negative value into a
// shift and a mask (strength_reduce.cpp).
bool strengthReducePass(ir::Module& m, ir::DiagnosticEngine& diag);

}  // namespace kiln::transforms
