#pragma once
// The CUDA driver, loaded at run time.
//
// Kiln never links libcuda: the library must build, compile kernels and run its tests on machines
// without a GPU (DESIGN.md, "PTX, assembly, runtime"). Driver opens libcuda.so.1 with dlopen (the
// environment variable KILN_LIBCUDA may name another file) and resolves every entry point it uses
// through cuGetProcAddress, asking for the exact ABI version whose typedef cudaTypedefs.h gives
// (PFN_cuMemAlloc_v3020 is the _v2 ABI of cuMemAlloc, and so on). Asking by version, not by the
// exported name, is what NVIDIA recommends: the driver then hands back the function whose
// signature matches the typedef, whatever suffix the export carries in that driver release.
// A driver too old to have cuGetProcAddress (before CUDA 11.3) is read with dlsym of the exported
// names instead (cuMemAlloc_v2, ...), which is what a program linked against cuda.h would use.
//
// Entry points are declared once, in KILN_CU_ENTRY_POINTS; members are named without the `cu`
// prefix (drv.memAlloc) because cuda.h #defines many of the cu names to their _v2 spellings.
#include <cuda.h>
#include <cudaTypedefs.h>

#include <memory>
#include <string>
#include <string_view>

#include "kiln/ir/diagnostics.h"

namespace kiln::runtime {

// clang-format off
// X(member, cuda.h name, ABI version of the typedef, exported name for dlsym, required)
// A missing optional entry point is left null; its user says which driver version it needs.
#define KILN_CU_ENTRY_POINTS(X)                                                                    \
  X(init, cuInit, 2000, "cuInit", true)                                                            \
  X(driverGetVersion, cuDriverGetVersion, 2020, "cuDriverGetVersion", true)                        \
  X(getErrorName, cuGetErrorName, 6000, "cuGetErrorName", true)                                    \
  X(getErrorString, cuGetErrorString, 6000, "cuGetErrorString", true)                              \
  X(deviceGet, cuDeviceGet, 2000, "cuDeviceGet", true)                                             \
  X(deviceGetCount, cuDeviceGetCount, 2000, "cuDeviceGetCount", true)                              \
  X(deviceGetAttribute, cuDeviceGetAttribute, 2000, "cuDeviceGetAttribute", true)                  \
  X(deviceGetName, cuDeviceGetName, 2000, "cuDeviceGetName", true)                                 \
  X(devicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, 7000, "cuDevicePrimaryCtxRetain", true)      \
  X(devicePrimaryCtxRelease, cuDevicePrimaryCtxRelease, 11000, "cuDevicePrimaryCtxRelease_v2", true)\
  X(ctxSetCurrent, cuCtxSetCurrent, 4000, "cuCtxSetCurrent", true)                                 \
  X(ctxGetCurrent, cuCtxGetCurrent, 4000, "cuCtxGetCurrent", true)                                 \
  X(ctxGetDevice, cuCtxGetDevice, 2000, "cuCtxGetDevice", true)                                    \
  X(ctxSynchronize, cuCtxSynchronize, 2000, "cuCtxSynchronize", true)                              \
  X(streamCreate, cuStreamCreate, 2000, "cuStreamCreate", true)                                    \
  X(streamDestroy, cuStreamDestroy, 4000, "cuStreamDestroy_v2", true)                              \
  X(streamSynchronize, cuStreamSynchronize, 2000, "cuStreamSynchronize", true)                     \
  X(moduleLoadDataEx, cuModuleLoadDataEx, 2010, "cuModuleLoadDataEx", true)                        \
  X(moduleUnload, cuModuleUnload, 2000, "cuModuleUnload", true)                                    \
  X(moduleGetFunction, cuModuleGetFunction, 2000, "cuModuleGetFunction", true)                     \
  X(funcSetAttribute, cuFuncSetAttribute, 9000, "cuFuncSetAttribute", true)                        \
  X(funcGetAttribute, cuFuncGetAttribute, 2020, "cuFuncGetAttribute", true)                        \
  X(launchKernel, cuLaunchKernel, 4000, "cuLaunchKernel", true)                                    \
  X(launchKernelEx, cuLaunchKernelEx, 11060, "cuLaunchKernelEx", false)                            \
  X(occupancyMaxActiveClusters, cuOccupancyMaxActiveClusters, 11070, "cuOccupancyMaxActiveClusters", false)\
  X(memAlloc, cuMemAlloc, 3020, "cuMemAlloc_v2", true)                                             \
  X(memFree, cuMemFree, 3020, "cuMemFree_v2", true)                                                \
  X(memcpyHtoD, cuMemcpyHtoD, 3020, "cuMemcpyHtoD_v2", true)                                       \
  X(memcpyDtoH, cuMemcpyDtoH, 3020, "cuMemcpyDtoH_v2", true)                                       \
  X(memsetD8, cuMemsetD8, 3020, "cuMemsetD8_v2", true)                                             \
  X(memsetD32, cuMemsetD32, 3020, "cuMemsetD32_v2", true)                                          \
  X(pointerGetAttribute, cuPointerGetAttribute, 4000, "cuPointerGetAttribute", true)               \
  X(eventCreate, cuEventCreate, 2000, "cuEventCreate", true)                                       \
  X(eventDestroy, cuEventDestroy, 4000, "cuEventDestroy_v2", true)                                 \
  X(eventRecord, cuEventRecord, 2000, "cuEventRecord", true)                                       \
  X(eventSynchronize, cuEventSynchronize, 2000, "cuEventSynchronize", true)                        \
  X(eventElapsedTime, cuEventElapsedTime, 2000, "cuEventElapsedTime", true)                        \
  X(tensorMapEncodeTiled, cuTensorMapEncodeTiled, 12000, "cuTensorMapEncodeTiled", false)
// clang-format on

class Driver {
 public:
  // The process-wide driver, loaded and initialised (cuInit) on first use from KILN_LIBCUDA or
  // libcuda.so.1. Returns nullptr when there is no driver or no device, and then puts a sentence
  // a user can act on into *whyNot (when whyNot is not null). The answer is cached: the driver
  // is loaded once per process and never unloaded, because contexts and modules may still be
  // alive during static destruction.
  static Driver* get(std::string* whyNot = nullptr);

  // Loads a driver from `path` without caching (tests use this with a fake libcuda). Same
  // failure contract as get(). The Driver dlcloses the library when destroyed.
  static std::unique_ptr<Driver> load(const std::string& path, std::string* whyNot);

  // KILN_LIBCUDA if set and non-empty, else "libcuda.so.1".
  static std::string defaultLibraryPath();

  ~Driver();
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  // Throws kiln::ir::Error when `result` is not CUDA_SUCCESS:
  //   "<what> failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"
  // A failing driver call is a user-visible condition (bad input, no memory, busy device), not a
  // compiler bug, so it is an Error rather than KILN_ICE.
  void checkCu(CUresult result, std::string_view what) const;
  // "CUDA_ERROR_OUT_OF_MEMORY (out of memory)"; never fails, even for unknown codes.
  std::string errorText(CUresult result) const;

  // The driver's CUDA version, e.g. 12080 for 12.8, and where it was loaded from.
  int version() const { return version_; }
  const std::string& libraryPath() const { return path_; }
  // True when the entry points were resolved with cuGetProcAddress (false: dlsym fallback).
  bool usedGetProcAddress() const { return usedProcAddress_; }

#define KILN_CU_DECLARE_MEMBER(member, sym, ver, exported, required) \
  PFN_##sym##_v##ver member = nullptr;
  KILN_CU_ENTRY_POINTS(KILN_CU_DECLARE_MEMBER)
#undef KILN_CU_DECLARE_MEMBER

 private:
  Driver() = default;
  void* handle_ = nullptr;
  std::string path_;
  int version_ = 0;
  bool usedProcAddress_ = false;
};

// "12.8" from 12080.
std::string versionString(int cudaVersion);

}  // namespace kiln::runtime
