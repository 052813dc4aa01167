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

// The GPU measurer for `program` at `dims` in `ctx`; nullptr after a diagnostic (inputs that do
// not fit in device memory, dims the program cannot take).
std::unique_ptr<Measurer> gpuMeasurer(const runtime::Context& ctx, const ir::Operation& program,
                                      const std::map<std::string, int64_t>& dims, uint64_t seed,
                                      ir::DiagnosticEngine& diag);

}  // namespace kiln::tuning
