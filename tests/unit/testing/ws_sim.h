#pragma once
// A CPU simulator of warp-specialized sm_90a kern IR (after partition-roles), for functional tests
// of sm90_ws_persistent without a GPU.
//
// A block runs its top-level ops with all threads in lockstep until the kern.role ops; each role is
// then one agent per warpgroup (its threads in lockstep, with an active mask for scf.if; warpgroups
// of one role progress independently, as on the hardware) and the agents take turns
// deterministically: an agent runs until an mbarrier wait it cannot pass, and hands over after each
// mbarrier arrive but one that expects bytes (that completes no phase before its copies land, so the
// agent goes on to issue them), so a producer runs as far ahead as the barriers allow and a stage it
// refills changes before a consumer retires a group still reading it. After the roles, the rest
// runs in lockstep again. Hardware contracts are written out here from the PTX ISA, independently of
// the compiler's helpers:
//  * mbarrier: arrival count, transaction bytes, phases; try_wait.parity(P) passes once the phase
//    of parity P before the current one completed (a fresh barrier passes P = 1).
//  * TMA (cp.async.bulk.tensor, CU_TENSOR_MAP_SWIZZLE_128B): the box at the coordinates, elements
//    outside the tensor as zeros, rows of 128 bytes whose 16-byte chunks land at address bits
//    [4:6] ^ [7:9]; the box's bytes complete on the barrier. A load's L2 cache policy changes
//    nothing it computes; the bytes loaded evict_first are counted (WsLaunch::evictFirstBytes).
//  * prefetch.global: changes nothing; its address must lie inside a buffer (the lines are
//    recorded in WsLaunch::prefetchedLines).
//  * wgmma descriptors ("Matrix Descriptor Format") and the canonical 128B-swizzled layouts
//    (K-major ((8,m),(T,2k)):((8T,SBO),(1,T)), MN-major ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO)));
//    accumulator D of m64nN: warp w, lane l, register 4j + e holds row 16w + l/4 + 8(e >= 2),
//    column 8j + 2(l%4) + (e & 1). A wgmma computes at issue; when its group is retired by
//    wgmma.wait_group the simulator checks the shared memory it read is unchanged (a stage released
//    and refilled while still being read is reported).
//  * TMA stores (cp.async.bulk.tensor to global, bulk_group): write global memory at issue, and the
//    box's shared bytes join the issuing thread's open bulk group; commit_group closes it. When
//    wait_group(.read) N retires a group, or the block ends with it outstanding, the simulator checks
//    those bytes are unchanged (a staging box overwritten or refilled while a store may still read it
//    is reported).
//  * Split-K (kern.red_release, kern.spin_wait; a kernel with {workspace}): all blocks run
//    together, as the persistent grid's resident blocks do, since one may wait on another's flag.
//    A block's ld.global of a word another block wrote must follow that block's next release after
//    the write and an acquire of it (a spin_wait on the flag it released); otherwise the read is
//    reported, whatever order the turns happened to give.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "kiln/ir/operation.h"
#include "kiln/runtime/tensor_map.h"
#include "tests/unit/testing/kern_sim.h"

namespace kiln::testing {

struct WsLaunch {
  const ir::Operation* kernel = nullptr;
  // Raw bits per parameter: addresses, i32 values; a tensor map parameter holds an index into maps.
  std::vector<uint64_t> args;
  std::vector<runtime::TensorMapDesc> maps;
  uint32_t blocks = 1;  // grid x (the persistent grid); y = z = 1
  // When set (sized like maps): the bytes each map's TMA loads read from global memory under an
  // L2 evict_first policy (kern.tma_load {stream} with the flag set), added up over the launch.
  std::vector<int64_t>* evictFirstBytes = nullptr;
  // When set (sized to blocks): per block, the 128-byte lines of global memory its
  // kern.prefetch_global ops brought in (their addresses must lie inside a buffer, as a load's) and
  // the lines its kern.ld_global ops read.
  std::vector<std::set<uint64_t>>* prefetchedLines = nullptr;
  std::vector<std::set<uint64_t>>* loadedLines = nullptr;
};

// The units kern.tile_loop {stream_k = w} gives block bx of `blocks` over `tiles` tiles of `ktiles`
// K steps, in walk order (the simulator's own reading of kern_ops.h, independent of the PTX
// emitter).
struct StreamKUnit {
  int64_t tile, kbase, ksteps, done, peers;
  bool operator==(const StreamKUnit&) const = default;
};
std::vector<StreamKUnit> streamKWalk(int64_t tiles, int64_t ktiles, int64_t blocks, int64_t bx, int64_t w);

// Runs every block. Returns an empty string, or what went wrong (an unsupported op, a deadlock, a
// hazard, an out-of-bounds access).
std::string simulateWarpSpecialized(const WsLaunch& launch, GlobalMemory& mem);

}  // namespace kiln::testing
