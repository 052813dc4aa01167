// queryPointerAttributes (kiln/runtime/launch_args.h): what libcuda knows about a pointer, as
// plain data for checkPointerAttributes.
#include "kiln/runtime/driver.h"
#include "kiln/runtime/launch_args.h"

namespace kiln::runtime {

PointerAttributes queryPointerAttributes(const Driver& drv, uint64_t ptr) {
  PointerAttributes a;
  unsigned memoryType = 0;
  CUresult r = drv.pointerGetAttribute(&memoryType, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CUdeviceptr(ptr));
  // INVALID_VALUE: CUDA does not know the address. Anything else (NOT_SUPPORTED from an old or fake
  // driver) leaves the pointer unchecked rather than refusing a launch we cannot judge.
  if (r == CUDA_ERROR_INVALID_VALUE) a.status = PointerAttributes::Status::NotCuda;
  if (r != CUDA_SUCCESS) return a;
  CUcontext ctx = nullptr;
  unsigned managed = 0;
  CUdeviceptr start = 0;
  size_t size = 0;
  if (drv.pointerGetAttribute(&ctx, CU_POINTER_ATTRIBUTE_CONTEXT, CUdeviceptr(ptr)) != CUDA_SUCCESS ||
      drv.pointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, CUdeviceptr(ptr)) != CUDA_SUCCESS ||
      drv.pointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CUdeviceptr(ptr)) != CUDA_SUCCESS ||
      drv.pointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, CUdeviceptr(ptr)) != CUDA_SUCCESS)
    return a;  // Unavailable: a partial answer checks nothing
  a.status = PointerAttributes::Status::Known;
  a.memory = memoryType == CU_MEMORYTYPE_HOST    ? PointerAttributes::Memory::Host
             : memoryType == CU_MEMORYTYPE_ARRAY ? PointerAttributes::Memory::Array
             : memoryType == CU_MEMORYTYPE_UNIFIED ? PointerAttributes::Memory::Unified
                                                   : PointerAttributes::Memory::Device;
  a.managed = managed != 0;
  a.context = reinterpret_cast<uint64_t>(ctx);
  a.rangeStart = start;
  a.rangeSize = size;
  return a;
}

}  // namespace kiln::runtime
