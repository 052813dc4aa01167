#pragma once
// kiln::tune: the fastest schedule for a program at given dims on this GPU, measured, checked and
// recorded in the tuning cache (docs/tuning.md).
//
//   kiln::TuneResult r = kiln::tune(*program, ctx, {{"M", 4096}, {"N", 4096}, {"K", 4096}}, {}, diag).value();
//   auto k = kiln::Kernel::build(*program, target, r.config, diag);
//
// The candidates are the program's family's variants that can run it (kiln::select's list, best
// first), around the best few their neighbours in the strategy's option space (pipeline depth,
// raster group, cluster, epilogue loads), and for a GEMM a generated space (tile shapes fitted to
// the problem, warpgroup layouts, swapped operands, split-K, stream-K, clusters, the epilogue's
// staging) pruned without compiling by the strategy's rules and the family's heuristic
// (docs/tuning.md). Before anything runs, every candidate is compiled and assembled, in parallel
// on every core and through the compile cache, and those that fail, spill or cannot fit are
// dropped, each with its reason; the rest are screened (a few launches each) and the `finalists`
// fastest are timed on the GPU with the benchmark method (L2 flushed before every launch, the
// candidates in alternation, the median of `reps`). The fastest is checked against the
// interpreter or an fp64 reference of sampled output tiles (a wrong one is dropped, reported and
// the next taken) and stored in the tuning cache, which kiln::select (on a device), `kiln run`
// and kiln.compile then consult.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"
#include "kiln/runtime/device.h"
#include "kiln/select.h"
#include "kiln/target.h"

namespace kiln {

struct TuneOptions {
  int finalists = 8;          // candidates timed with `reps` (after the static pruning and the screen)
  // The screen: every candidate that assembles without spilling is first timed with this many
  // launches (median), and the `finalists` fastest go on; a launch costs microseconds to
  // milliseconds, so looking at all of them costs little beside compiling and checking. 0: no
  // screen, the finalists are the best ranked by the heuristic.
  int screenReps = 3;
  // Wall seconds the screen may take: the family's pick is launched once first, and only as many
  // candidates (best ranked first) as fit at its time are screened, the rest dropped ("over the
  // screen's time"). A launch costs ~10 us to ~10 ms, so this bounds only the largest problems
  // (16384^3 in BF16: ~100 candidates). 0: no bound.
  double screenSeconds = 4;
  bool exhaustive = false;    // time every candidate that assembles (the reference a search is judged by)
  int reps = 15;              // timed launches per finalist (the median is kept)
  // Wall seconds for compiling: once spent, no further candidate starts compiling (those left are
  // dropped, "over the budget"; the best ranked compile first, and the first always does) and what
  // did compile is timed.
  // 0: no budget.
  double budgetSeconds = 0;
  // At most this many candidates are compiled (the registered variants and their neighbours
  // always; the generated space up to it, best ranked first). 0: tuning::kDefaultMaxCandidates.
  int maxCandidates = 0;
  bool useCache = true;       // return a cached winner for the same key without measuring
  bool record = true;         // store the winner in the tuning cache
  std::string cacheDir;       // the tuning cache's folder; empty: TuningCache::defaultDir()
  std::string compileCacheDir;  // the compile cache's folder; empty: CompileCache::defaultDir()
  uint64_t seed = 1;          // of the inputs (the same as `kiln run --seed`)
  // One line per step ("compiled 31 of 34 candidates in 3.2 s"); none when empty.
  std::function<void(const std::string&)> progress;
};

struct TuneCandidate {
  std::string config;   // a canonical config line
  std::string origin;   // "gemm_bf16 variant bf16_gemm_sm90_128x256x64_s4_tma", "... stages 4 -> 5"
  double score = 0;     // the family heuristic's (a neighbour: its parent's, slightly lowered)
  std::string dropped;  // why it was not timed or not kept ("spills 96 bytes", "not among the finalists")
  double microseconds = -1;  // the median time, when timed
  int registers = 0;
  int64_t sharedBytes = 0;
};

struct TuneResult {
  std::string config;       // the winner
  double microseconds = 0;  // its median time
  std::string why;          // "tuned: fastest of 8 timed (34 candidates, 31 assembled) in 6.1 s" or "cached: ..."
  bool fromCache = false;
  std::vector<TuneCandidate> candidates;  // every candidate, in ranked order (empty when cached)
  double seconds = 0;                     // the search's wall time
  std::string verified;                   // how the winner was checked
  std::string cacheFile;                  // where it was recorded (empty when not)
  // The generated space (empty for a program without one): "612 generated, 203 refused by the
  // strategy's rules, 180 pruned by the heuristic, 229 kept".
  std::string space;
  int assembled = 0;            // candidates that compiled and assembled
  // Where the search's seconds went (wall time of each step; 0 for a step not taken): generating,
  // compiling and assembling the candidates; preparing the inputs on the device; the screen; the
  // finalists' timing; checking the winner (the reference computed on the host, the kernel run).
  double compileSeconds = 0, inputSeconds = 0, screenSeconds = 0, timingSeconds = 0, checkSeconds = 0;
};

// `program`: a module holding one verified tile.program. `ctx`: the GPU to tune on (its device
// decides the target). nullopt after a diagnostic: no family runs the program, no candidate
// assembles, or none produced a correct result.
std::optional<TuneResult> tune(const ir::Module& program, const runtime::Context& ctx,
                               const std::map<std::string, int64_t>& dims, const TuneOptions& options,
                               ir::DiagnosticEngine& diag);

// The first half of a search, on the CPU (no GPU needed): the candidates for `target` at `dims`
// on a device of `smCount` SMs (0: the target's reference count), each compiled and assembled in
// parallel through the compile cache and pruned by what the assembler reports, as kiln::tune
// does. Nothing is timed or recorded: `config` is empty, and every candidate that would go on to
// the GPU has `dropped` empty. `kiln tune --dry-run` prints it. nullopt after a diagnostic (no
// family runs the program, a dim is missing).
std::optional<TuneResult> planTune(const ir::Module& program, const Target& target,
                                   const std::map<std::string, int64_t>& dims, const TuneOptions& options,
                                   ir::DiagnosticEngine& diag, int smCount = 0);


}  // namespace kiln
