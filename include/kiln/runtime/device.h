#pragma once
// A device and the context Kiln runs in.
//
// Kiln uses the device's primary context, the one the CUDA runtime (and so PyTorch, cuBLAS, JAX)
// uses too: memory from those libraries is then valid in Kiln's kernels without any copying. A
// host program that manages its own context can hand it over with Context::adoptCurrent instead.
//
// Context is neither copyable nor movable: modules, streams and buffers keep a pointer to it, and it
// must outlive them. Factories return it by value (guaranteed copy elision), so
//   auto ctx = Context::primary(*Driver::get(), 0);
// works; hold it in a std::optional or std::unique_ptr to keep it in a member.
#include <string>

#include "kiln/runtime/driver.h"

namespace kiln::runtime {

struct DeviceProperties {
  int ordinal = 0;
  std::string name;
  int ccMajor = 0, ccMinor = 0;
  int smCount = 0;
  int warpSize = 32;
  int maxThreadsPerBlock = 0;
  int maxSharedPerBlock = 0;       // bytes, without opting in (48 KB)
  int maxSharedPerBlockOptin = 0;  // bytes, after cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)
  int maxSharedPerSM = 0;
  int maxRegistersPerBlock = 0;
  int l2Bytes = 0;
  int clockKHz = 0;        // typical SM clock
  int memoryClockKHz = 0;  // peak
  int memoryBusWidthBits = 0;
  bool clusterLaunch = false;  // thread-block clusters (sm_90+)

  int computeCapability() const { return ccMajor * 10 + ccMinor; }  // 90 for sm_90
  std::string str() const;  // "NVIDIA H200 (sm_90, 132 SMs, 227 KB smem/block, 60 MB L2)"
};

// Reads every field above; throws kiln::ir::Error when the driver refuses.
DeviceProperties queryDevice(const Driver& drv, CUdevice dev, int ordinal);

class Context {
 public:
  // Retains device `ordinal`'s primary context and makes it current on this thread. Throws
  // kiln::ir::Error naming the valid range when the ordinal does not exist.
  static Context primary(const Driver& drv, int ordinal = 0);
  // Uses the context current on this thread; it is not released on destruction. Throws when no
  // context is current.
  static Context adoptCurrent(const Driver& drv);

  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // Makes this context current on the calling thread (cheap; the wrappers call it before any
  // driver call that needs a context, so they work from any thread).
  void makeCurrent() const;
  // Waits for all work in this context.
  void synchronize() const;

  const Driver& driver() const { return *drv_; }
  CUcontext handle() const { return ctx_; }
  CUdevice device() const { return dev_; }
  const DeviceProperties& properties() const { return props_; }

 private:
  Context(const Driver& drv, CUcontext ctx, CUdevice dev, int ordinal, bool ownsPrimary);
  const Driver* drv_;
  CUcontext ctx_;
  CUdevice dev_;
  bool ownsPrimary_;
  DeviceProperties props_;
};

}  // namespace kiln::runtime
