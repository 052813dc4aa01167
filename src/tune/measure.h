#pragma once
// How `kiln tune` runs candidates: a Measurer times compiled kernels and checks one's outputs. The
// GPU one (gpuMeasurer) follows shared/BENCH.md: the program's seeded random inputs (those `kiln
// run` uses) on the device once, L2 flushed by a write larger than it before every timed launch,
// CUDA events around the launch alone, the candidates in alternation (the order rotated every
// repetition, so clock drift moves all alike), the median kept. Tests give the tuner a fake.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "interp/random_inputs.h"
#include "interp/verify_outputs.h"
#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"
#include "kiln/kernel.h"
#include "kiln/runtime/device.h"

namespace kiln::tuning {

struct Timing {
  double microseconds = -1;  // the median; negative when the kernel could not run
  std::string error;         // why, when it could not
};

inline constexpr const char* kNoReference = "the reference could not be computed: ";

// Output tiles (64 x 64) a large winner is checked on against the fp64 reference: fewer than
// `kiln run`'s 256, since the check runs inside a search whose time the user waits for; a kernel
// that is wrong somewhere is nearly always wrong in many tiles, and `kiln run` checks it again.
// Fewer where a tile is more work than a 4096-deep GEMM tile's (the reference's seconds grow with
// K: ~2 s for 96 tiles at K = 4096 on one core), down to kMinVerifyTiles.
inline constexpr size_t kVerifyTiles = 96, kMinVerifyTiles = 16;
inline constexpr double kVerifyTileWork = 64.0 * 64.0 * 4096.0;

class Measurer {
 public:
  virtual ~Measurer() = default;
  // The median time of each kernel over `reps` timed launches, in alternation (one untimed
  // launch of each first).
  virtual std::vector<Timing> time(const std::vector<const Kernel*>& kernels, int reps) = 0;
  // Runs `kernel` once on poisoned outputs and compares them with the reference: "" when every
  // output passes, else the first failing output's report. `how` says what was compared. A
  // reference that cannot be computed is no verdict on the kernel: the text then starts with
  // kNoReference, and the search stops without recording anything.
  virtual std::string verify(const Kernel& kernel, std::string& how) = 0;
};

// The reference a winner is checked against, as the GPU measurer computes it (once): the
// interpreter below interp::kFullVerifyWork, else sampled output tiles in fp64 (kVerifyTiles, fewer
// for deep tiles), with
// the interpreter's memory limit raised to what `args` need (they live on the host already). Host
// work only: `kiln_tune_bench --dry-run` times it on the CPU.
std::optional<interp::ExpectedOutputs> referenceFor(const ir::Operation& program,
                                                    const interp::GeneratedArguments& args,
                                                    const std::map<std::string, int64_t>& dims, uint64_t seed,
                                                    ir::DiagnosticEngine& diag);

// The GPU measurer for `program` at `dims` in `ctx`; nullptr after a diagnostic (inputs that do
// not fit in device memory, dims the program cannot take).
std::unique_ptr<Measurer> gpuMeasurer(const runtime::Context& ctx, const ir::Operation& program,
                                      const std::map<std::string, int64_t>& dims, uint64_t seed,
                                      ir::DiagnosticEngine& diag);

}  // namespace kiln::tuning
