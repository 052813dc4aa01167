#pragma once
// The option space `kiln tune` searches for a GEMM beyond the registered variants, built from the
// strategies' structure rather than listed: for sm90_ws_persistent, tile shapes of every consumer
// warpgroup layout (1 to 3 warpgroups, cooperative or ping-pong, swapped operands with tile
// heights in eights), tile sizes fitted to the problem (the height or width that splits M or N
// into equal tiles), the deepest ring that fits, the epilogue's store and staging, and the ways
// of sharing or splitting a tile's work (split-K, stream-K, clusters along M, N or both); for
// sm80_multistage (every target with mma.sync, the best two of each warp grid on sm_90a), tiles,
// warp grids, K steps and ring depths.
//
// Pruned without compiling: every config goes through the strategy's own validation (shared
// memory, registers per accumulator, the combinations it builds); a tile more than half padding
// is dropped; split-K slices keep at least kMinSliceSteps K steps and fill no more than one wave;
// clusters need tiles to share with. The tiles (layout, size, epilogue and staging, with the
// plain schedule) are scored by the family's heuristic (ops::sm90Preference, the gemm_fp8
// preference, the sm80 tile terms: padding, waves over the SMs, intensity, bytes in flight) and
// taken best first, the best kPerClass of each layout and epilogue first so that a layout the
// heuristic misjudges is still measured, each with its schedules (split-K, stream-K, clusters),
// until the limit. What the assembler knows (registers, spills, shared memory) prunes the
// survivors after compiling (tune.cpp), and the screen measures every one that is left.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kiln/ir/operation.h"
#include "kiln/target.h"
#include "schedule/config.h"
#include "tune/candidates.h"

namespace kiln::tuning {

// What the space needs to know of a GEMM program at its dims.
struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;       // a batched program's batch dim (its tiles are batch x tiles of M x N)
  int elemBytes = 2;       // A's and B's: 2 (bf16, f16) or 1 (FP8)
  bool bKMajor = false;    // B stored [N][K]
  // The output's element bytes as the compiler counts them (2, or 4 for f32): they size sm90's
  // staged boxes (32 columns of f32) and decide the staging rules (an f32 output has no stmatrix).
  int cElemBytes = 2;
  bool fp8 = false;
  // FP8: the family's accumulation, which the space keeps: promote (each K step's sums added to
  // f32 registers, one step or two at a time) or fast (the tensor cores' own accumulator).
  Fp8Accum fp8Accum = Fp8Accum::Promote;
  int64_t groupAlign = 0;  // a grouped GEMM: bm x cluster_m must divide its row blocks
  bool epilogueLoads = false;  // the epilogue reads vectors or scalars (a bias, scales)
  int sms = 0;             // the device's SMs (the target's reference count when none is named)
};

// The GEMM the program is at `dims`, or nullopt with `why` when no GEMM family runs it.
std::optional<GemmShape> gemmShapeOf(const ir::Operation& program, const Target& t,
                                     const std::map<std::string, int64_t>& dims, int sms, std::string* why);

// The best tiles of each layout and epilogue taken first, whatever their score (the header comment).
inline constexpr int kPerClass = 2;
// A split-K slice keeps at least this many K steps: fewer and the hand-over costs more than the
// slice computes.
inline constexpr int kMinSliceSteps = 4;

struct SpaceStats {
  int generated = 0;  // configs built
  int invalid = 0;    // refused by the strategy's validation (shared memory, registers, combinations)
  int pruned = 0;     // valid, but not kept (mostly padding, or past the limit by score)
  int kept = 0;
  // Each refused config's line and the first line of why (the strategy's diagnostic, or for gemv
  // the resource it lacks: gemv_space.h).
  std::vector<std::pair<std::string, std::string>> refused;
};

// The space's candidates for the GEMM on `t`, best first by the heuristic, at most `limit`
// (origin "space: <class>"). Empty for a target whose GEMM strategies the space does not cover.
std::vector<Candidate> gemmSpace(const GemmShape& g, const Target& t, int limit, SpaceStats* stats = nullptr);

// The class of a config (the diversity quota's key), e.g. "swap 1x2 split tma" or "coop 2x1 c2x1".
std::string spaceClass(const Config& c);

}  // namespace kiln::tuning
