#include "kiln/runtime/launcher.h"

#include <fmt/format.h>

namespace kiln::runtime {

namespace {

// Grid limits of every CUDA device since sm_30.
constexpr uint64_t kMaxGridX = (uint64_t(1) << 31) - 1;
constexpr uint64_t kMaxGridYZ = 65535;
constexpr uint32_t kMaxBlockXY = 1024;
constexpr uint32_t kMaxBlockZ = 64;

}  // namespace

std::string Dim3::str() const { return fmt::format("[{}, {}, {}]", x, y, z); }

LaunchLimits launchLimits(const Function& fn) {
  LaunchLimits l;
  l.maxThreadsPerBlock = fn.attributes().maxThreadsPerBlock;
  l.maxDynamicSharedBytes = fn.attributes().maxDynamicSharedBytes;
  l.clusterLaunch = fn.context().properties().clusterLaunch;
  return l;
}

bool checkLaunchConfig(const std::string& kernel, Dim3 grid, Dim3 block, Dim3 cluster,
                       uint32_t dynamicSharedBytes, const LaunchLimits& limits,
                       ir::DiagnosticEngine& diag) {
  const size_t before = diag.errorCount();
  auto error = [&]() -> ir::InFlightDiagnostic {
    auto e = diag.error(ir::Location::unknown());
    e << "launch of '" << kernel << "': ";
    return e;
  };
  if (grid.count() == 0)
    error() << "grid " << grid.str() << " is empty; every grid dim must be at least 1";
  else if (grid.x > kMaxGridX || grid.y > kMaxGridYZ || grid.z > kMaxGridYZ)
    error() << "grid " << grid.str() << " is too large; CUDA allows at most [2^31-1, 65535, 65535]";

  if (block.count() == 0)
    error() << "block " << block.str() << " is empty; every block dim must be at least 1";
  else if (block.x > kMaxBlockXY || block.y > kMaxBlockXY || block.z > kMaxBlockZ)
    error() << "block " << block.str() << " is too large; CUDA allows at most [1024, 1024, 64]";
  else if (block.count() > uint64_t(limits.maxThreadsPerBlock))
    error() << fmt::format(
        "block {} has {} threads but the kernel can run at most {} per block "
        "(its register use limits it)",
        block.str(), block.count(), limits.maxThreadsPerBlock);

  if (cluster.count() == 0) {
    error() << "cluster " << cluster.str() << " is empty; use [1, 1, 1] for no cluster";
  } else if (cluster.count() > 1) {
    if (!limits.clusterLaunch)
      error() << "cluster " << cluster.str()
              << " needs thread-block clusters, which this device does not have (sm_90 or newer)";
    if (cluster.count() > kMaxPortableClusterBlocks)
      error() << fmt::format("cluster {} has {} blocks; at most {} are portable", cluster.str(),
                             cluster.count(), kMaxPortableClusterBlocks);
    if (grid.count() != 0 && (grid.x % cluster.x || grid.y % cluster.y || grid.z % cluster.z))
      error() << fmt::format(
          "grid {} is not a whole number of clusters {}; round each grid dim "
          "up to a multiple of the cluster dim",
          grid.str(), cluster.str());
  }

  if (dynamicSharedBytes > uint32_t(std::max(0, limits.maxDynamicSharedBytes)))
    error() << fmt::format(
        "{} bytes of dynamic shared memory requested but the kernel is set up "
        "for at most {}; pass the size to Module::function or "
        "Function::reserveDynamicShared first",
        dynamicSharedBytes, limits.maxDynamicSharedBytes);
  return diag.errorCount() == before;
}

namespace {

// A cuLaunchKernelEx configuration with its attributes: the cluster shape (when not 1x1x1) and
// programmatic stream serialization (the config points at its own attributes, so it is not
// copyable).
struct ClusterLaunchConfig {
  CUlaunchAttribute attrs[2]{};
  CUlaunchConfig cfg{};
  ClusterLaunchConfig(Dim3 grid, Dim3 block, Dim3 cluster, uint32_t dynamicSharedBytes, bool programmatic) {
    unsigned n = 0;
    if (cluster.count() != 1) {
      attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      attrs[n].value.clusterDim.x = cluster.x;
      attrs[n].value.clusterDim.y = cluster.y;
      attrs[n++].value.clusterDim.z = cluster.z;
    }
    if (programmatic) {
      attrs[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
      attrs[n++].value.programmaticStreamSerializationAllowed = 1;
    }
    cfg.gridDimX = grid.x;
    cfg.gridDimY = grid.y;
    cfg.gridDimZ = grid.z;
    cfg.blockDimX = block.x;
    cfg.blockDimY = block.y;
    cfg.blockDimZ = block.z;
    cfg.sharedMemBytes = dynamicSharedBytes;
    cfg.attrs = attrs;
    cfg.numAttrs = n;
  }
  ClusterLaunchConfig(const ClusterLaunchConfig&) = delete;
  ClusterLaunchConfig& operator=(const ClusterLaunchConfig&) = delete;
};

}  // namespace

void launch(const Function& fn, Dim3 grid, Dim3 block, Dim3 cluster, uint32_t dynamicSharedBytes,
            const Stream& stream, std::vector<void*> params, bool programmatic) {
  ir::DiagnosticEngine diag;
  if (!checkLaunchConfig(fn.name(), grid, block, cluster, dynamicSharedBytes, launchLimits(fn),
                         diag))
    throw ir::Error(diag.diagnostics());
  if (stream.context().handle() != fn.context().handle())
    throw ir::Error(
        ir::Location::unknown(),
        fmt::format("launch of '{}': the stream belongs to another CUDA context than the "
                    "kernel's module",
                    fn.name()));
  const Context& ctx = fn.context();
  const Driver& drv = ctx.driver();
  ctx.makeCurrent();
  void** kernelParams = params.empty() ? nullptr : params.data();
  const std::string what = fmt::format(
      "launch of '{}' (grid {}, block {}, cluster {}, {} bytes of "
      "dynamic shared memory)",
      fn.name(), grid.str(), block.str(), cluster.str(), dynamicSharedBytes);
  if (cluster.count() == 1 && !programmatic) {
    drv.checkCu(drv.launchKernel(fn.handle(), grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                 dynamicSharedBytes, stream.handle(), kernelParams, nullptr),
                what);
    return;
  }
  if (!drv.launchKernelEx)
    throw ir::Error(
        ir::Location::unknown(),
        fmt::format("launch of '{}': {} need a CUDA 11.8 driver or newer; this one is "
                    "CUDA {}",
                    fn.name(), cluster.count() != 1 ? "clusters" : "programmatic dependent launches",
                    versionString(drv.version())));
  ClusterLaunchConfig c(grid, block, cluster, dynamicSharedBytes, programmatic);
  c.cfg.hStream = stream.handle();
  drv.checkCu(drv.launchKernelEx(&c.cfg, fn.handle(), kernelParams, nullptr), what);
}

int maxActiveClusters(const Function& fn, Dim3 block, Dim3 cluster, uint32_t dynamicSharedBytes) {
  const Context& ctx = fn.context();
  const Driver& drv = ctx.driver();
  if (cluster.count() <= 1 || !drv.occupancyMaxActiveClusters) return 0;
  ctx.makeCurrent();
  // The grid only has to be a multiple of the cluster; the answer does not depend on it.
  ClusterLaunchConfig c(cluster, block, cluster, dynamicSharedBytes, false);
  int n = 0;
  drv.checkCu(drv.occupancyMaxActiveClusters(&n, fn.handle(), &c.cfg),
              fmt::format("the occupancy of '{}' in clusters of {}", fn.name(), cluster.str()));
  return n;
}

}  // namespace kiln::runtime
