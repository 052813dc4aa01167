#include "kiln/runtime/memory.h"

#include <fmt/format.h>

#include <utility>

#include "kiln/ir/diagnostics.h"

namespace kiln::runtime {

DeviceBuffer DeviceBuffer::allocate(const Context& ctx, size_t bytes) {
  ctx.makeCurrent();
  CUdeviceptr p = 0;
  // cuMemAlloc rejects 0 bytes; an empty buffer is still a useful value (empty outputs).
  if (bytes > 0)
    ctx.driver().checkCu(ctx.driver().memAlloc(&p, bytes),
                         fmt::format("cuMemAlloc of {} bytes on {}", bytes, ctx.properties().name));
  return DeviceBuffer(ctx, p, bytes);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : ctx_(o.ctx_), ptr_(std::exchange(o.ptr_, 0)), size_(std::exchange(o.size_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    reset();
    ctx_ = o.ctx_;
    ptr_ = std::exchange(o.ptr_, 0);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { reset(); }

void DeviceBuffer::reset() {
  if (ptr_) {
    ctx_.driver().ctxSetCurrent(ctx_.handle());
    ctx_.driver().memFree(ptr_);  // errors ignored: destructors cannot report them
  }
  ptr_ = 0;
  size_ = 0;
}

void DeviceBuffer::copyFromHost(const void* src, size_t bytes) {
  KILN_ASSERT(bytes <= size_, fmt::format("copy of {} bytes into a {}-byte buffer", bytes, size_));
  if (bytes == 0) return;
  ctx_.makeCurrent();
  ctx_.driver().checkCu(ctx_.driver().memcpyHtoD(ptr_, src, bytes), "cuMemcpyHtoD");
}

void DeviceBuffer::copyToHost(void* dst, size_t bytes) const {
  KILN_ASSERT(bytes <= size_, fmt::format("copy of {} bytes from a {}-byte buffer", bytes, size_));
  if (bytes == 0) return;
  ctx_.makeCurrent();
  ctx_.driver().checkCu(ctx_.driver().memcpyDtoH(dst, ptr_, bytes), "cuMemcpyDtoH");
}

void DeviceBuffer::fill(uint8_t byte) {
  if (size_ == 0) return;
  ctx_.makeCurrent();
  ctx_.driver().checkCu(ctx_.driver().memsetD8(ptr_, byte, size_), "cuMemsetD8");
}

void DeviceBuffer::fill32(uint32_t word) {
  KILN_ASSERT(size_ % 4 == 0, fmt::format("fill32 of a {}-byte buffer", size_));
  if (size_ == 0) return;
  ctx_.makeCurrent();
  ctx_.driver().checkCu(ctx_.driver().memsetD32(ptr_, word, size_ / 4), "cuMemsetD32");
}

}  // namespace kiln::runtime
