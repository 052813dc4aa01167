// The fake libcuda described in fake_libcuda.h. Not a test: a shared library the tests dlopen.
// (The .cc suffix keeps it out of the unit-test glob, which takes tests/unit/**/*.cpp.)
#include "fake_libcuda.h"

#include <cstdlib>
#include <cstring>
#include <string_view>

// cuda.h maps these names to their newer ABIs; the fake defines the exports a real driver has.
#undef cuEventElapsedTime

namespace {
FakeCudaState g_state;
const CUcontext kPrimaryContext = reinterpret_cast<CUcontext>(0xC0);

// What a cuLaunchKernelEx configuration asks for: geometry, shared memory, stream, cluster shape.
FakeLaunch fromConfig(const CUlaunchConfig* c) {
  FakeLaunch l;
  l.grid[0] = c->gridDimX, l.grid[1] = c->gridDimY, l.grid[2] = c->gridDimZ;
  l.block[0] = c->blockDimX, l.block[1] = c->blockDimY, l.block[2] = c->blockDimZ;
  l.sharedBytes = c->sharedMemBytes;
  l.stream = c->hStream;
  for (unsigned i = 0; i < c->numAttrs; ++i) {
    if (c->attrs[i].id != CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) continue;
    l.cluster[0] = c->attrs[i].value.clusterDim.x;
    l.cluster[1] = c->attrs[i].value.clusterDim.y;
    l.cluster[2] = c->attrs[i].value.clusterDim.z;
  }
  return l;
}

}  // namespace

extern "C" {

FakeCudaState* kilnFakeCudaState() { return &g_state; }

CUresult cuInit(unsigned) { return g_state.initResult; }
CUresult cuDriverGetVersion(int* v) {
  *v = g_state.driverVersion;
  return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult r, const char** s) {
  switch (r) {
    case CUDA_SUCCESS:
      *s = "CUDA_SUCCESS";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_VALUE:
      *s = "CUDA_ERROR_INVALID_VALUE";
      return CUDA_SUCCESS;
    case CUDA_ERROR_OUT_OF_MEMORY:
      *s = "CUDA_ERROR_OUT_OF_MEMORY";
      return CUDA_SUCCESS;
    case CUDA_ERROR_NO_DEVICE:
      *s = "CUDA_ERROR_NO_DEVICE";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_PTX:
      *s = "CUDA_ERROR_INVALID_PTX";
      return CUDA_SUCCESS;
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
      *s = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;  // like the real driver, *s is left alone
  }
}

CUresult cuGetErrorString(CUresult r, const char** s) {
  switch (r) {
    case CUDA_SUCCESS:
      *s = "no error";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_VALUE:
      *s = "invalid argument";
      return CUDA_SUCCESS;
    case CUDA_ERROR_OUT_OF_MEMORY:
      *s = "out of memory";
      return CUDA_SUCCESS;
    case CUDA_ERROR_NO_DEVICE:
      *s = "no CUDA-capable device is detected";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_PTX:
      *s = "a PTX JIT compilation failed";
      return CUDA_SUCCESS;
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
      *s = "too many resources requested for launch";
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult cuDeviceGetCount(int* n) {
  *n = g_state.deviceCount;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGet(CUdevice* d, int ordinal) {
  if (ordinal < 0 || ordinal >= g_state.deviceCount) return CUDA_ERROR_INVALID_DEVICE;
  *d = ordinal;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetName(char* name, int len, CUdevice) {
  std::strncpy(name, "Fake H200", len);
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice) {
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      *v = 9;
      break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      *v = 0;
      break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      *v = 132;
      break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
      *v = 32;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      *v = 1024;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
      *v = 48 * 1024;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
      *v = 232448;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
      *v = 233472;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
      *v = 65536;
      break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
      *v = 60 * 1024 * 1024;
      break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
      *v = 1980000;
      break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
      *v = 3201000;
      break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
      *v = 6144;
      break;
    case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH:
      *v = g_state.clusterLaunch;
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice) {
  ++g_state.primaryRetains;
  *c = kPrimaryContext;
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice) {
  ++g_state.primaryReleases;
  return CUDA_SUCCESS;
}
CUresult cuCtxSetCurrent(CUcontext c) {
  g_state.current = c;
  return CUDA_SUCCESS;
}
CUresult cuCtxGetCurrent(CUcontext* c) {
  *c = g_state.current;
  return CUDA_SUCCESS;
}
CUresult cuCtxGetDevice(CUdevice* d) {
  if (!g_state.current) return CUDA_ERROR_INVALID_CONTEXT;
  *d = 0;
  return CUDA_SUCCESS;
}
CUresult cuCtxSynchronize() { return CUDA_SUCCESS; }

CUresult cuStreamCreate(CUstream* s, unsigned) {
  *s = reinterpret_cast<CUstream>(static_cast<uintptr_t>(0x5000 + ++g_state.streamsCreated));
  return CUDA_SUCCESS;
}
CUresult cuStreamDestroy_v2(CUstream) {
  ++g_state.streamsDestroyed;
  return CUDA_SUCCESS;
}
CUresult cuStreamSynchronize(CUstream) { return CUDA_SUCCESS; }

CUresult cuModuleLoadDataEx(CUmodule* m, const void* image, unsigned n, CUjit_option* opts,
                            void** vals) {
  const char* text = static_cast<const char*>(image);
  g_state.lastImage = std::memcmp(text,
                                  "\x7f"
                                  "ELF",
                                  4) == 0
                          ? std::string(text, 4)
                          : std::string(text);
  if (g_state.lastImage.find("syntax error") != std::string::npos) {
    for (unsigned i = 0; i < n; ++i)
      if (opts[i] == CU_JIT_ERROR_LOG_BUFFER)
        std::strcpy(static_cast<char*>(vals[i]), "ptxas fatal: syntax error");
    return CUDA_ERROR_INVALID_PTX;
  }
  *m = reinterpret_cast<CUmodule>(static_cast<uintptr_t>(0x6000 + ++g_state.modulesLoaded));
  return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule) {
  ++g_state.modulesUnloaded;
  return CUDA_SUCCESS;
}
CUresult cuModuleGetFunction(CUfunction* f, CUmodule, const char* name) {
  if (std::string_view(name) == "missing") return CUDA_ERROR_NOT_FOUND;
  *f = reinterpret_cast<CUfunction>(0xF0);
  return CUDA_SUCCESS;
}
CUresult cuFuncGetAttribute(int* v, CUfunction_attribute a, CUfunction) {
  switch (a) {
    case CU_FUNC_ATTRIBUTE_NUM_REGS:
      *v = 40;
      break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
      *v = g_state.funcStaticShared;
      break;
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      *v = g_state.funcMaxThreads;
      break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
      *v = g_state.funcMaxDynamicShared;
      break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION:
      *v = 90;
      break;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
      *v = 90;
      break;
    default:
      *v = 0;
      break;
  }
  return CUDA_SUCCESS;
}
CUresult cuFuncSetAttribute(CUfunction, CUfunction_attribute a, int v) {
  g_state.funcAttributesSet.emplace_back(static_cast<int>(a), v);
  if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) g_state.funcMaxDynamicShared = v;
  return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned smem, CUstream s, void** params, void**) {
  FakeLaunch l;
  l.grid[0] = gx, l.grid[1] = gy, l.grid[2] = gz;
  l.block[0] = bx, l.block[1] = by, l.block[2] = bz;
  l.sharedBytes = smem;
  l.stream = s;
  l.hasParams = params != nullptr;
  if (params) l.firstParam = params[0];
  g_state.launches.push_back(l);
  return g_state.launchResult;
}

CUresult cuLaunchKernelEx(const CUlaunchConfig* c, CUfunction, void** params, void**) {
  FakeLaunch l = fromConfig(c);
  l.ex = true;
  l.hasParams = params != nullptr;
  if (params) l.firstParam = params[0];
  g_state.launches.push_back(l);
  return g_state.launchResult;
}

CUresult cuOccupancyMaxActiveClusters(int* n, CUfunction, const CUlaunchConfig* c) {
  g_state.occupancyQueries.push_back(fromConfig(c));
  *n = g_state.maxActiveClusters;
  return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t n) {
  if (n > (size_t(1) << 40)) return CUDA_ERROR_OUT_OF_MEMORY;
  ++g_state.allocations;
  *p = reinterpret_cast<CUdeviceptr>(std::aligned_alloc(256, (n + 255) / 256 * 256));
  return CUDA_SUCCESS;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  ++g_state.frees;
  std::free(reinterpret_cast<void*>(p));
  return CUDA_SUCCESS;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t n) {
  std::memcpy(reinterpret_cast<void*>(dst), src, n);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t n) {
  std::memcpy(dst, reinterpret_cast<const void*>(src), n);
  return CUDA_SUCCESS;
}
CUresult cuMemsetD8_v2(CUdeviceptr p, unsigned char v, size_t n) {
  std::memset(reinterpret_cast<void*>(p), v, n);
  return CUDA_SUCCESS;
}
CUresult cuMemsetD32_v2(CUdeviceptr p, unsigned v, size_t n) {
  auto* w = reinterpret_cast<unsigned*>(p);
  for (size_t i = 0; i < n; ++i) w[i] = v;
  return CUDA_SUCCESS;
}
CUresult cuPointerGetAttribute(void* out, CUpointer_attribute attr, CUdeviceptr) {
  ++g_state.pointerQueries;
  if (g_state.pointerResult != CUDA_SUCCESS) return g_state.pointerResult;
  switch (attr) {
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: *static_cast<unsigned*>(out) = g_state.pointerMemoryType; break;
    case CU_POINTER_ATTRIBUTE_CONTEXT:
      *static_cast<CUcontext*>(out) = g_state.pointerContext ? g_state.pointerContext : g_state.current;
      break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: *static_cast<unsigned*>(out) = 0; break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *static_cast<CUdeviceptr*>(out) = g_state.pointerRangeStart; break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *static_cast<size_t*>(out) = g_state.pointerRangeSize; break;
    default: return CUDA_ERROR_NOT_SUPPORTED;
  }
  return CUDA_SUCCESS;
}

CUresult cuEventCreate(CUevent* e, unsigned) {
  *e = reinterpret_cast<CUevent>(static_cast<uintptr_t>(0x7000 + ++g_state.eventsCreated));
  return CUDA_SUCCESS;
}
CUresult cuEventDestroy_v2(CUevent) {
  ++g_state.eventsDestroyed;
  return CUDA_SUCCESS;
}
CUresult cuEventRecord(CUevent, CUstream) { return CUDA_SUCCESS; }
CUresult cuEventSynchronize(CUevent) { return CUDA_SUCCESS; }
CUresult cuEventElapsedTime(float* ms, CUevent, CUevent) {
  *ms = 1.5f;
  return CUDA_SUCCESS;
}

CUresult cuTensorMapEncodeTiled(CUtensorMap* map, CUtensorMapDataType dtype, cuuint32_t rank,
                                void* addr, const cuuint64_t* dims, const cuuint64_t* strides,
                                const cuuint32_t* box, const cuuint32_t* estrides,
                                CUtensorMapInterleave il, CUtensorMapSwizzle sw,
                                CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  FakeTensorMapCall c;
  c.dtype = dtype;
  c.rank = rank;
  c.address = addr;
  c.dims.assign(dims, dims + rank);
  if (rank > 1) c.strides.assign(strides, strides + rank - 1);
  c.box.assign(box, box + rank);
  c.elementStrides.assign(estrides, estrides + rank);
  c.interleave = il, c.swizzle = sw, c.l2Promotion = l2, c.oobFill = oob;
  g_state.tensorMaps.push_back(c);
  map->opaque[0] = 0x4b494c4e;  // "KILN", so a test can see the map was written
  return CUDA_SUCCESS;
}

#ifndef KILN_FAKE_NO_PROC_ADDRESS
// The v2 entry point of CUDA 12: looks a base name up at an ABI version, like the real driver.
CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, cuuint64_t,
                             CUdriverProcAddressQueryResult* status) {
  struct Row {
    const char* name;
    int since;
    void* fn;
  };
  static const Row rows[] = {
      {"cuInit", 2000, (void*)&cuInit},
      {"cuDriverGetVersion", 2020, (void*)&cuDriverGetVersion},
      {"cuGetErrorName", 6000, (void*)&cuGetErrorName},
      {"cuGetErrorString", 6000, (void*)&cuGetErrorString},
      {"cuDeviceGet", 2000, (void*)&cuDeviceGet},
      {"cuDeviceGetCount", 2000, (void*)&cuDeviceGetCount},
      {"cuDeviceGetAttribute", 2000, (void*)&cuDeviceGetAttribute},
      {"cuDeviceGetName", 2000, (void*)&cuDeviceGetName},
      {"cuDevicePrimaryCtxRetain", 7000, (void*)&cuDevicePrimaryCtxRetain},
      {"cuDevicePrimaryCtxRelease", 11000, (void*)&cuDevicePrimaryCtxRelease_v2},
      {"cuCtxSetCurrent", 4000, (void*)&cuCtxSetCurrent},
      {"cuCtxGetCurrent", 4000, (void*)&cuCtxGetCurrent},
      {"cuCtxGetDevice", 2000, (void*)&cuCtxGetDevice},
      {"cuCtxSynchronize", 2000, (void*)&cuCtxSynchronize},
      {"cuStreamCreate", 2000, (void*)&cuStreamCreate},
      {"cuStreamDestroy", 4000, (void*)&cuStreamDestroy_v2},
      {"cuStreamSynchronize", 2000, (void*)&cuStreamSynchronize},
      {"cuModuleLoadDataEx", 2010, (void*)&cuModuleLoadDataEx},
      {"cuModuleUnload", 2000, (void*)&cuModuleUnload},
      {"cuModuleGetFunction", 2000, (void*)&cuModuleGetFunction},
      {"cuFuncSetAttribute", 9000, (void*)&cuFuncSetAttribute},
      {"cuFuncGetAttribute", 2020, (void*)&cuFuncGetAttribute},
      {"cuLaunchKernel", 4000, (void*)&cuLaunchKernel},
      {"cuLaunchKernelEx", 11060, (void*)&cuLaunchKernelEx},
      {"cuOccupancyMaxActiveClusters", 11070, (void*)&cuOccupancyMaxActiveClusters},
      {"cuMemAlloc", 3020, (void*)&cuMemAlloc_v2},
      {"cuMemFree", 3020, (void*)&cuMemFree_v2},
      {"cuMemcpyHtoD", 3020, (void*)&cuMemcpyHtoD_v2},
      {"cuMemcpyDtoH", 3020, (void*)&cuMemcpyDtoH_v2},
      {"cuMemsetD8", 3020, (void*)&cuMemsetD8_v2},
      {"cuMemsetD32", 3020, (void*)&cuMemsetD32_v2},
      {"cuPointerGetAttribute", 4000, (void*)&cuPointerGetAttribute},
      {"cuEventCreate", 2000, (void*)&cuEventCreate},
      {"cuEventDestroy", 4000, (void*)&cuEventDestroy_v2},
      {"cuEventRecord", 2000, (void*)&cuEventRecord},
      {"cuEventSynchronize", 2000, (void*)&cuEventSynchronize},
      {"cuEventElapsedTime", 2000, (void*)&cuEventElapsedTime},
      {"cuTensorMapEncodeTiled", 12000, (void*)&cuTensorMapEncodeTiled},
  };
  *pfn = nullptr;
  if (version > g_state.driverVersion) return CUDA_ERROR_INVALID_VALUE;  // as the real driver does
  for (const Row& r : rows) {
    if (std::string_view(symbol) != r.name) continue;
    if (g_state.hiddenSymbol == symbol) break;
    if (version < r.since) {
      if (status) *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
      return CUDA_SUCCESS;
    }
    *pfn = r.fn;
    if (status) *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
  }
  if (status) *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return CUDA_SUCCESS;
}
#endif

}  // extern "C"
