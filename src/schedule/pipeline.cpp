// The ordered pipeline (contract in pipeline.h).
#include "schedule/pipeline.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <set>

#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"
#include "schedule/lower_programs.h"
#include "schedule/gemv/gemv.h"
#include "schedule/rowwise/rowwise.h"
#include "schedule/sm80_multistage.h"
#include "schedule/sm90/passes.h"
#include "schedule/sm90/lower.h"

namespace kiln::pipeline {

const std::vector<transforms::PassInfo>& allPasses() {
  static const std::vector<transforms::PassInfo> passes = [] {
    std::vector<transforms::PassInfo> all = transforms::genericPasses();
    const std::vector<transforms::PassInfo> strategies = {
        {"lower-sm80-multistage",
         "lower each tile.program to a kern.kernel with the sm80 multistage GEMM strategy (the program's "
         "{target, config} attributes pick the target and the schedule)",
         lowerSm80MultistagePass},
        {"lower-sm90-ws-persistent",
         "lower each tile.program to a kern.kernel with the sm90 warp-specialized persistent wgmma GEMM strategy "
         "(the program's {target, config} attributes pick the target and the schedule)",
         lowerSm90WsPersistentPass},
        {"sm90-multistage-ring",
         "widen the consumer's K loop over a ring of one stage (the lowering's) to the ring of stages its "
         "barriers were allocated with: the unit's (stage, phase) derived from the K steps before it, the releases "
         "moved after the step's wgmmas, one wgmma group kept in flight",
         sm90::multistageRingPass},
        {"sm90-warp-specialize",
         "move the TMA copies of the consumer's K loop (its copier thread's block) to a producer kern.role whose "
         "elected thread runs its own copy of the loop control; the consumer warpgroups keep the wgmmas and the "
         "epilogue",
         sm90::warpSpecializePass},
        {"sm90-stage-epilogue",
         "write the TMA-store epilogue's protocol around each staged box (kern.stage_begin .. kern.stage_end): "
         "the slot wait (derived from the boxes' order), the named barriers, the proxy fence and the TMA store",
         sm90::stageEpiloguePass},
        {"sm90-promote-fp8",
         "rewrite each K loop whose wgmmas carry {accumulate = \"promote\" | \"promote_pairs\"} (fp8_accum): every K "
         "step's FP8 wgmmas sum from zero into fresh registers, added to the f32 accumulators once their group is "
         "waited for (pairs: two steps in flight), each stage released in its own step",
         sm90::promoteFp8Pass},
        {"lower-rowwise",
         "lower each tile.program to a kern.kernel with the rowwise strategy for memory-bound programs (rows of "
         "threads, 16-byte vectors, shuffle reductions; the program's {target, config} attributes pick the target "
         "and the schedule)",
         lowerRowwisePass},
        {"lower-gemv",
         "lower each tile.program (a GEMM of small M) to a kern.kernel with the gemv strategy: B streamed once in "
         "16-byte loads, f32 sums on the CUDA cores reduced by shuffles and shared memory, the sm80 epilogue (the "
         "program's {target, config} attributes pick the target and the schedule)",
         lowerGemvPass},
    };
    all.insert(all.end(), strategies.begin(), strategies.end());
    return all;
  }();
  return passes;
}

const transforms::PassInfo* findPass(std::string_view name) {
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
  const transforms::PassInfo* p = findPass(name);
  if (!p) {
    std::string known;
    for (const auto& n : passNames()) known += (known.empty() ? "" : ", ") + n;
    return diag.error(ir::Location::unknown()) << "unknown pass '" << name << "'; known passes: " << known;
  }
  return p->run(m, diag);
}

std::vector<std::string> pipelineSteps(std::string_view strategy) {
  if (strategy == "sm80_multistage")
    return {
        "verify",                 // the tile program as the user wrote it
        "lower-sm80-multistage",  // tile -> kern: cp.async ring, ldmatrix, mma.sync, fused epilogue
        "pair-ldmatrix",          // B fragments: two .x2 -> one .x4
        "strength-reduce",        // index math: x / 2^k, x % 2^k -> shift, mask where x >= 0
        "dce",                    // drop what the rewrites left unused
    };
  if (strategy == "sm90_ws_persistent")
    return {
        "verify",                    // the tile program as the user wrote it
        "lower-sm90-ws-persistent",  // tile -> kern: TMA ring, mbarriers, wgmma (a K loop over a ring of
                                     // one), one CTA-wide persistent tile loop with the consumers' role,
                                     // fused epilogue
        "sm90-multistage-ring",      // the K loop's ring of one widened to the ring of `stages`
        "sm90-warp-specialize",      // the K loop's copies to a producer role with its own loop
        "sm90-stage-epilogue",       // epilogue=tma: each staged box's slot wait, barriers, fence, store
        "sm90-promote-fp8",          // fp8_accum=promote(_pairs): each K step's FP8 sums added in f32
        "partition-roles",           // one persistent tile loop per role
        "remove-residual-loop",      // drop the residual shared loop when it does no observable work
        "expand-tile-loop",          // the tile scheduler as kern IR: each role's loop over its units
        "set-role-registers",        // setmaxnreg at the start of each role
        "strength-reduce",           // index math: x / 2^k, x % 2^k -> shift, mask where x >= 0
        "dce",                       // drop what the rewrites left unused
    };
  if (strategy == "rowwise")
    return {
        "verify",           // the tile program as the user wrote it
        "lower-rowwise",    // tile -> kern: rows of threads, 16-byte vectors, passes over each row (on chip
                            // when it fits, streaming when not), butterfly and shared-memory reductions
        "strength-reduce",  // index math: x / 2^k, x % 2^k -> shift, mask where x >= 0
        "dce",              // drop what the rewrites left unused
    };
  if (strategy == "gemv")
    return {
        "verify",           // the tile program as the user wrote it
        "lower-gemv",       // tile -> kern: B streamed in 16-byte loads, f32 FMAs, shuffles and shared-memory
                            // sums, the sm80 epilogue on them
        "strength-reduce",  // index math: x / 2^k, x % 2^k -> shift, mask where x >= 0
        "dce",              // drop what the rewrites left unused
    };
  return {};
}

static bool envPrintAll() {
  const char* v = std::getenv("KILN_PRINT_IR_AFTER_ALL");
  return v && std::string_view(v) != "0" && *v;
}

const std::vector<std::string>& optionalSteps() {
  // Steps whose absence still gives a correct kernel; each was tested both ways. Without
  // sm90-multistage-ring the K loop runs over a ring of one (sm90-promote-fp8 then finds no loop of
  // its shape, and the emitter refuses the FP8 wgmmas it would have rewritten).
  static const std::vector<std::string> steps = {"sm90-multistage-ring", "remove-residual-loop"};
  return steps;
}

// The steps to skip: opts.disabled plus KILN_DISABLE_PASSES (comma-separated). A name that is not an
// optional step is a user error, so a typo cannot silently benchmark the same kernel twice.
static bool disabledSteps(const PipelineOptions& opts, std::set<std::string>& out, ir::DiagnosticEngine& diag) {
  std::vector<std::string> names = opts.disabled;
  if (const char* env = std::getenv("KILN_DISABLE_PASSES")) {
    std::string_view rest(env);
    while (!rest.empty()) {
      size_t comma = rest.find(',');
      std::string_view name = rest.substr(0, comma);
      if (!name.empty()) names.emplace_back(name);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  const auto& allowed = optionalSteps();
  for (const auto& n : names) {
    if (std::find(allowed.begin(), allowed.end(), n) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return diag.error({}) << "KILN_DISABLE_PASSES names '" << n
                            << "', which is not a pass that can be turned off; those that can: " << list;
    }
    out.insert(n);
  }
  return true;
}

bool runSteps(const std::vector<std::string>& steps, ir::Module& m, ir::DiagnosticEngine& diag,
              const PipelineOptions& opts) {
  std::ostream& dump = opts.dump ? *opts.dump : std::cerr;
  bool print = opts.printIrAfterAll || envPrintAll();
  std::set<std::string> disabled;
  if (!disabledSteps(opts, disabled, diag)) return false;
  for (const auto& step : steps) {
    if (disabled.count(step)) {
      if (print) dump << "// ----- " << step << " skipped (KILN_DISABLE_PASSES) -----\n" << std::flush;
      continue;
    }
    const StrategyLowering* lowering = opts.config ? findLowering(step) : nullptr;
    if (lowering ? !lowerPrograms(m, *lowering, diag, opts.config) : !runPass(step, m, diag)) return false;
#if defined(KILN_VERIFY_BETWEEN_PASSES)
    if (opts.verifyEach && step != "verify" && !ir::verify(m, diag)) {
      diag.error({}) << "pass '" << step << "' produced IR that does not verify; this is a bug in Kiln";
      return false;
    }
#endif
    if (print) dump << "// ----- IR after " << step << " -----\n" << ir::toString(m) << std::flush;
  }
  return true;
}

}  // namespace kiln::pipeline
