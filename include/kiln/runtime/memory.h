#pragma once
// Device memory owned by Kiln: tests, the autotuner and the CLI allocate through this; kernels
// themselves take plain device addresses (TensorArg::ptr), wherever they were allocated.
#include <cstddef>
#include <cstdint>

#include "kiln/runtime/device.h"

namespace kiln::runtime {

class DeviceBuffer {
 public:
  // cuMemAlloc; the address is at least 256-byte aligned. Throws kiln::ir::Error (naming the
  // size) when the device is out of memory.
  static DeviceBuffer allocate(const Context& ctx, size_t bytes);

  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  // Synchronous copies and fills of the first `bytes` bytes; a size past the end of the buffer
  // is a caller bug (KILN_ICE).
  void copyFromHost(const void* src, size_t bytes);
  void copyToHost(void* dst, size_t bytes) const;
  void fill(uint8_t byte);
  void fill32(uint32_t word);  // size must be a multiple of 4: poisons f32 outputs with a NaN

  CUdeviceptr ptr() const { return ptr_; }
  size_t size() const { return size_; }

 private:
  DeviceBuffer(const Context& ctx, CUdeviceptr p, size_t n) : ctx_(ctx), ptr_(p), size_(n) {}
  void reset();
  Context ctx_;
  CUdeviceptr ptr_;
  size_t size_;
};

}  // namespace kiln::runtime
