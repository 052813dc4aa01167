#pragma once
// A fake libcuda for unit tests on machines without a GPU.
//
// fake_libcuda.cc is built into two shared libraries that export the same symbols as the real
// libcuda.so.1 (cuMemAlloc_v2, cuStreamDestroy_v2, ...): kiln_fake_libcuda also exports
// cuGetProcAddress_v2, kiln_fake_libcuda_noproc does not (a pre-11.3 driver, read with dlsym). The
// runtime loads them with Driver::load like the real thing. Device memory is host memory, so
// copies and fills really happen; everything else is recorded in FakeCudaState for the tests to
// inspect. Tests reach the state through kilnFakeCudaState(), found with dlsym.
#include <cuda.h>

#include <string>
#include <utility>
#include <vector>

struct FakeLaunch {
  unsigned grid[3] = {}, block[3] = {}, cluster[3] = {1, 1, 1};
  unsigned sharedBytes = 0;
  CUstream stream = nullptr;
  bool ex = false;             // through cuLaunchKernelEx
  void* firstParam = nullptr;  // params[0], read during the launch (the array dies after it)
  bool hasParams = false;
};

struct FakeTensorMapCall {
  CUtensorMapDataType dtype{};
  unsigned rank = 0;
  void* address = nullptr;
  std::vector<cuuint64_t> dims, strides;
  std::vector<cuuint32_t> box, elementStrides;
  int interleave = -1, swizzle = -1, l2Promotion = -1, oobFill = -1;
};

struct FakeCudaState {
  // Knobs, set before Driver::load.
  CUresult initResult = CUDA_SUCCESS;
  int deviceCount = 1;
  int driverVersion = 12080;
  std::string hiddenSymbol;  // cuGetProcAddress reports this one as missing
  int funcStaticShared = 0;  // CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES of every kernel
  int funcMaxThreads = 1024;
  int clusterLaunch = 1;  // CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH
  CUresult launchResult = CUDA_SUCCESS;
  int maxActiveClusters = 66;  // cuOccupancyMaxActiveClusters' answer
  // cuPointerGetAttribute: NOT_SUPPORTED (checks nothing) unless a test sets it. With SUCCESS every
  // pointer lies in one allocation [pointerRangeStart, +pointerRangeSize) of this memory type, in
  // the current context unless pointerContext is set.
  CUresult pointerResult = CUDA_ERROR_NOT_SUPPORTED;
  unsigned pointerMemoryType = CU_MEMORYTYPE_DEVICE;
  unsigned long long pointerRangeStart = 0, pointerRangeSize = 0;
  CUcontext pointerContext = nullptr;

  // Records.
  int primaryRetains = 0, primaryReleases = 0;
  CUcontext current = nullptr;
  int streamsCreated = 0, streamsDestroyed = 0;
  int eventsCreated = 0, eventsDestroyed = 0;
  int modulesLoaded = 0, modulesUnloaded = 0;
  std::string lastImage;
  int funcMaxDynamicShared = 48 * 1024;
  std::vector<std::pair<int, int>> funcAttributesSet;
  std::vector<FakeLaunch> launches;
  std::vector<FakeLaunch> occupancyQueries;  // the configs cuOccupancyMaxActiveClusters was asked about
  std::vector<FakeTensorMapCall> tensorMaps;
  int allocations = 0, frees = 0;
  int pointerQueries = 0;  // cuPointerGetAttribute calls
};

extern "C" FakeCudaState* kilnFakeCudaState();
