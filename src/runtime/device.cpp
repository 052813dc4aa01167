#include "kiln/runtime/device.h"

#include <fmt/format.h>

#include "kiln/ir/diagnostics.h"

namespace kiln::runtime {

std::string DeviceProperties::str() const {
  return fmt::format("{} (sm_{}{}, {} SMs, {} KB smem/block, {} MB L2)", name, ccMajor, ccMinor,
                     smCount, maxSharedPerBlockOptin / 1024, l2Bytes / (1024 * 1024));
}

DeviceProperties queryDevice(const Driver& drv, CUdevice dev, int ordinal) {
  DeviceProperties p;
  p.ordinal = ordinal;
  char name[256] = {};
  drv.checkCu(drv.deviceGetName(name, sizeof name - 1, dev), "cuDeviceGetName");
  p.name = name;
  auto attr = [&](CUdevice_attribute a, const char* what) {
    int v = 0;
    drv.checkCu(drv.deviceGetAttribute(&v, a, dev), fmt::format("cuDeviceGetAttribute({})", what));
    return v;
  };
  p.ccMajor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "compute capability major");
  p.ccMinor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "compute capability minor");
  p.smCount = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "SM count");
  p.warpSize = attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE, "warp size");
  p.maxThreadsPerBlock = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "max threads per block");
  p.maxSharedPerBlock =
      attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, "shared memory per block");
  p.maxSharedPerBlockOptin =
      attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "opt-in shared memory per block");
  p.maxSharedPerSM =
      attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, "shared memory per SM");
  p.maxRegistersPerBlock = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, "registers per block");
  p.l2Bytes = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2 size");
  p.clockKHz = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE, "clock rate");
  p.memoryClockKHz = attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, "memory clock rate");
  p.memoryBusWidthBits = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, "memory bus width");
  // Attribute 120 is unknown to drivers before 11.8, which answer CUDA_ERROR_INVALID_VALUE: such
  // a driver cannot launch clusters, so "no" is the right reading rather than an error.
  int cluster = 0;
  if (drv.deviceGetAttribute(&cluster, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, dev) != CUDA_SUCCESS)
    cluster = 0;
  p.clusterLaunch = cluster != 0;
  return p;
}

Context Context::make(const Driver& drv, CUcontext ctx, CUdevice dev, int ordinal,
                      bool ownsPrimary) {
  // The state owns the retain from here on: if the query below throws, ~State gives it back.
  auto state = std::make_shared<State>();
  state->drv = &drv;
  state->ctx = ctx;
  state->dev = dev;
  state->ownsPrimary = ownsPrimary;
  state->props = queryDevice(drv, dev, ordinal);
  return Context(std::move(state));
}

Context Context::primary(const Driver& drv, int ordinal) {
  int count = 0;
  drv.checkCu(drv.deviceGetCount(&count), "cuDeviceGetCount");
  if (ordinal < 0 || ordinal >= count)
    throw ir::Error(
        ir::Location::unknown(),
        fmt::format("there is no CUDA device {}: this machine has {} (ordinals 0 to {})", ordinal,
                    count, count - 1));
  CUdevice dev = 0;
  drv.checkCu(drv.deviceGet(&dev, ordinal), fmt::format("cuDeviceGet({})", ordinal));
  CUcontext ctx = nullptr;
  drv.checkCu(drv.devicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  CUresult r = drv.ctxSetCurrent(ctx);
  if (r != CUDA_SUCCESS) {
    drv.devicePrimaryCtxRelease(dev);
    drv.checkCu(r, "cuCtxSetCurrent");
  }
  return make(drv, ctx, dev, ordinal, /*ownsPrimary=*/true);
}

Context Context::adoptCurrent(const Driver& drv) {
  CUcontext ctx = nullptr;
  drv.checkCu(drv.ctxGetCurrent(&ctx), "cuCtxGetCurrent");
  if (!ctx)
    throw ir::Error(ir::Location::unknown(),
                    "no CUDA context is current on this thread; make one current before adopting "
                    "it, or use Context::primary");
  CUdevice dev = 0;
  drv.checkCu(drv.ctxGetDevice(&dev), "cuCtxGetDevice");
  // A CUdevice is the device's ordinal in the driver API.
  return make(drv, ctx, dev, static_cast<int>(dev), /*ownsPrimary=*/false);
}

Context::State::~State() {
  // Errors are ignored: a destructor cannot report them, and a failing release at teardown (the
  // driver already shutting down) must not take the process with it.
  if (ownsPrimary) drv->devicePrimaryCtxRelease(dev);
}

void Context::makeCurrent() const {
  driver().checkCu(driver().ctxSetCurrent(handle()), "cuCtxSetCurrent");
}

void Context::synchronize() const {
  makeCurrent();
  driver().checkCu(driver().ctxSynchronize(), "cuCtxSynchronize");
}

}  // namespace kiln::runtime
