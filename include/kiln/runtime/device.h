#pragma once
// A device and the context Kiln runs in.
//
// Kiln uses the device's primary context, the one the CUDA runtime (and so PyTorch, cuBLAS, JAX)
// uses too: memory from those libraries is then valid in Kiln's kernels without any copying. A
// host program that manages its own context can hand it over with Context::adoptCurrent instead.
//
// A Context is a shared handle: copies refer to the same context, and streams, modules, functions
// and buffers made from it hold a copy, so the context stays retained while anything made from it
// lives, whatever order they are destroyed in. The Driver must outlive them all (the one from
// Driver::get is never unloaded).
#include <memory>
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
  // Uses the context current on this thread; Kiln never releases it. Throws when no context is
  // current.
  static Context adoptCurrent(const Driver& drv);

  // Makes this context current on the calling thread (cheap; the wrappers call it before any
  // driver call that needs a context, so they work from any thread).
  void makeCurrent() const;
  // Waits for all work in this context.
  void synchronize() const;

  const Driver& driver() const { return *state_->drv; }
  CUcontext handle() const { return state_->ctx; }
  CUdevice device() const { return state_->dev; }
  const DeviceProperties& properties() const { return state_->props; }

 private:
  struct State {
    const Driver* drv = nullptr;
    CUcontext ctx = nullptr;
    CUdevice dev = 0;
    bool ownsPrimary = false;
    DeviceProperties props;
    ~State();
  };
  explicit Context(std::shared_ptr<const State> s) : state_(std::move(s)) {}
  static Context make(const Driver& drv, CUcontext ctx, CUdevice dev, int ordinal,
                      bool ownsPrimary);
  std::shared_ptr<const State> state_;
};

}  // namespace kiln::runtime
