#pragma once
// Kernel launch: the geometry is checked against the device and the kernel first, so a bad
// launch is a sentence naming the limit rather than the driver's bare CUDA_ERROR_INVALID_VALUE.
//
// A launch is asynchronous: launch() reports what the driver refuses at launch time. A fault
// inside the kernel surfaces at the next synchronising call (Stream::synchronize).
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/ir/diagnostics.h"
#include "kiln/runtime/module.h"
#include "kiln/runtime/stream.h"

namespace kiln::runtime {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t count() const { return uint64_t(x) * y * z; }
  std::string str() const;  // "[x, y, z]"
  bool operator==(const Dim3&) const = default;
};

// What the device and the loaded kernel allow a launch.
struct LaunchLimits {
  int maxThreadsPerBlock = 1024;          // the kernel's (below 1024 when it uses many registers)
  int maxDynamicSharedBytes = 48 * 1024;  // as reserved with Function::reserveDynamicShared
  bool clusterLaunch = false;             // the device launches thread-block clusters (sm_90+)
};
LaunchLimits launchLimits(const Function& fn);

// The most blocks in a cluster that every cluster-capable GPU runs (the "portable" size).
inline constexpr uint64_t kMaxPortableClusterBlocks = 8;

// One diagnostic per broken limit, each starting "launch of '<kernel>': ".
bool checkLaunchConfig(const std::string& kernel, Dim3 grid, Dim3 block, Dim3 cluster,
                       uint32_t dynamicSharedBytes, const LaunchLimits& limits,
                       ir::DiagnosticEngine& diag);

// Checks the configuration, then launches `fn` on `stream`: cuLaunchKernel, or cuLaunchKernelEx
// with a cluster-dimension attribute when cluster is not 1x1x1 and (`programmatic`) the
// programmatic stream serialization attribute, which lets the kernel start before the previous
// one in the stream has finished (it must wait for it, griddepcontrol.wait, before touching
// memory that kernel uses). `params` holds one pointer per kernel parameter, to that parameter's
// value (the cuLaunchKernel convention). Throws kiln::ir::Error when the configuration is invalid
// or the driver refuses the launch.
void launch(const Function& fn, Dim3 grid, Dim3 block, Dim3 cluster, uint32_t dynamicSharedBytes,
            const Stream& stream, std::vector<void*> params, bool programmatic = false);

// How many clusters of `cluster` blocks of `fn` the device runs at once
// (cuOccupancyMaxActiveClusters): fewer than SMs / cluster size when the SMs of a GPC cannot all
// be paired, so a persistent grid larger than this runs its last clusters in a second wave.
// 0 when the driver cannot say (before CUDA 11.8) or cluster is 1x1x1.
int maxActiveClusters(const Function& fn, Dim3 block, Dim3 cluster, uint32_t dynamicSharedBytes);

}  // namespace kiln::runtime
