#pragma once
// The kern passes of the sm90_ws_persistent strategy (docs/sm90-passes.md), one per file here; the
// pipeline (src/schedule/pipeline.cpp) registers them by name and runs them in order.
#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"

namespace kiln::sm90 {

// sm90-multistage-ring (multistage_ring.cpp): the consumer's K loop over a ring of one stage
// becomes a loop over the whole ring, one wgmma group in flight. Never fails.
bool multistageRingPass(ir::Module& m, ir::DiagnosticEngine& diag);

// sm90-warp-specialize (warp_specialize.cpp): the copies of the consumer's K loop go to a producer
// role whose elected thread runs its own copy of the loop control. Never fails.
bool warpSpecializePass(ir::Module& m, ir::DiagnosticEngine& diag);

// sm90-stage-epilogue (stage_epilogue.cpp): each staged box (kern.stage_begin .. kern.stage_end)
// gets its slot wait, barriers, fence and TMA store. False after a diagnostic.
bool stageEpiloguePass(ir::Module& m, ir::DiagnosticEngine& diag);

// sm90-promote-fp8 (promote_fp8.cpp): each K loop whose wgmmas carry {accumulate = "promote" |
// "promote_pairs"} sums every K step from zero into fresh registers added to its f32 accumulators;
// a loop of another shape is kept (and its marked wgmmas refused by the PTX emitter). Never fails.
bool promoteFp8Pass(ir::Module& m, ir::DiagnosticEngine& diag);

}  // namespace kiln::sm90
