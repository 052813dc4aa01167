// run() and runReference(): verify, bind, pick block sizes, execute (contract in
// include/kiln/interp/interpreter.h).
#include "kiln/interp/interpreter.h"

#include <algorithm>

#include "interp/bind_arguments.h"
#include "interp/block_sizes.h"
#include "interp/executor.h"
#include "interp/size_limits.h"
#include "kiln/ir/verifier.h"

namespace kiln::interp {
namespace {

bool runIn(Arithmetic arith, const ir::Operation& program, RunRequest& req,
           std::map<std::string, std::vector<double>>* wideOutputs, ir::DiagnosticEngine& diag, const RunOptions& opts) {
  if (!program.is("tile.program"))
    return diag.error(program.loc()) << "the interpreter runs a 'tile.program', not '" << program.name() << "'";
  if (!ir::verify(program, diag)) return false;
  // Sizes first: a dim that overflows a size must be a sentence before binding computes with it.
  if (!checkArgumentSizes(program, req.dims, opts.maxMemoryBytes, diag)) return false;
  RunContext ctx(arith, diag);
  if (!bindArguments(program, req, ctx, wideOutputs)) return false;
  if (!chooseBlockSizes(program, ctx.extents, opts.blockSizes, ctx.blocks, diag)) return false;
  if (!checkTileSizes(program, ctx, opts.maxMemoryBytes, diag)) return false;
  ctx.onlyInstances = opts.instances;
  std::sort(ctx.onlyInstances.begin(), ctx.onlyInstances.end());
  return Executor(ctx).runProgram(program);
}

}  // namespace

bool run(const ir::Operation& program, RunRequest& req, ir::DiagnosticEngine& diag, const RunOptions& opts) {
  return runIn(Arithmetic::Exact, program, req, nullptr, diag, opts);
}

bool runReference(const ir::Operation& program, RunRequest& req, std::map<std::string, std::vector<double>>& outputs,
                  ir::DiagnosticEngine& diag, const RunOptions& opts) {
  return runIn(Arithmetic::Reference, program, req, &outputs, diag, opts);
}

}  // namespace kiln::interp
