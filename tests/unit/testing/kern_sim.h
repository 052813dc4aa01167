#pragma once
// A CPU simulator of kern IR, for functional tests of strategies without a GPU.
//
// It runs one thread block at a time, all threads in lockstep: every op executes for every thread
// before the next op. Warp-collective ops follow the PTX ISA definitions, written out here
// independently of the compiler's own helpers: ldmatrix (lane 8i + r addresses row r of matrix i;
// lane l receives row l / 4, columns 2 (l % 4) and +1, transposed with .trans) and mma.m16n8k16
// (the "Matrix fragments for mma.m16n8k16 with floating point type" tables), accumulating in double
// and rounding to f32. Shared-memory addresses use the kern_ops.h formula, stage + (off ^ X) + A.
//
// cp.async timing is a parameter, to expose pipeline hazards: Early applies each copy when it is
// issued (catches a write into a slot that is still to be read), Late applies a group only when a
// cp.async.wait_group retires it (catches a read of data not yet waited for).
//
// Lockstep execution hides races between warps, so the simulator also checks them, counting time in
// barrier epochs: a cp.async may not write shared bytes another warp read since the last barrier,
// and an ldmatrix may not read bytes whose cp.async is still in flight or was retired (by its
// issuer's wait_group) without a barrier since; a kern.st_shared may not write bytes another warp
// read (a two-value kern.st_shared, st.shared.v2, 8 aligned bytes), nor a kern.ld_shared read bytes
// another warp wrote, since the last barrier. Each is
// reported as an error. Lockstep also means every branch and loop bound must be the same for all
// threads (scf.if and scf.for check it): the row kernels' shuffles (kern.shfl_xor, each lane
// reading lane ^ offset of its warp) rely on it. The one exception is an scf.if whose arms only
// compute (arith.* and math.* ops and the yield, e.g. a quotient's exact fallback): it may differ
// between threads, and then both arms run for every thread and each keeps its own arm's results. Float math and packing are exact
// (kern_sim_math.h): the simulator checks algorithms, not the hardware's approximations.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kiln/ir/operation.h"

namespace kiln::testing {

enum class CopyTiming { Early, Late };

// Global memory: named buffers at fake, far-apart device addresses.
class GlobalMemory {
 public:
  uint64_t add(std::vector<uint8_t> bytes);  // returns the buffer's address
  std::vector<uint8_t>& at(uint64_t base) { return buffers_.at(base); }
  uint8_t* ptr(uint64_t addr, size_t bytes);  // aborts on an out-of-bounds access

 private:
  std::map<uint64_t, std::vector<uint8_t>> buffers_;
  uint64_t next_ = 1ull << 32;
};

struct SimLaunch {
  const ir::Operation* kernel = nullptr;
  std::vector<uint64_t> args;  // raw bits per parameter: addresses, i32 values, f32 bits
  uint32_t grid[3] = {1, 1, 1};
  CopyTiming timing = CopyTiming::Early;
  bool reverse = false;  // blocks along x from the last to the first (gemv split_k: another finisher)
};

// Runs every block of the grid. Returns an empty string, or what went wrong (an unsupported op, a
// non-uniform loop bound, an out-of-bounds access).
std::string simulate(const SimLaunch& launch, GlobalMemory& mem);

}  // namespace kiln::testing
