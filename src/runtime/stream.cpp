#include "kiln/runtime/stream.h"

#include <utility>

namespace kiln::runtime {

Stream Stream::create(const Context& ctx) {
  ctx.makeCurrent();
  CUstream s = nullptr;
  ctx.driver().checkCu(ctx.driver().streamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  return Stream(ctx, s, /*owned=*/true);
}

Stream Stream::adopt(const Context& ctx, CUstream stream) { return Stream(ctx, stream, false); }

Stream::Stream(Stream&& o) noexcept
    : ctx_(o.ctx_),
      stream_(std::exchange(o.stream_, nullptr)),
      owned_(std::exchange(o.owned_, false)) {}

Stream& Stream::operator=(Stream&& o) noexcept {
  if (this != &o) {
    reset();
    ctx_ = o.ctx_;
    stream_ = std::exchange(o.stream_, nullptr);
    owned_ = std::exchange(o.owned_, false);
  }
  return *this;
}

Stream::~Stream() { reset(); }

void Stream::reset() {
  // cuStreamDestroy returns at once and the driver frees the stream after its queued work ends,
  // so destroying a busy stream is safe. Errors are ignored: destructors cannot report them.
  if (owned_ && stream_) {
    ctx_.driver().ctxSetCurrent(ctx_.handle());
    ctx_.driver().streamDestroy(stream_);
  }
  stream_ = nullptr;
  owned_ = false;
}

void Stream::synchronize() const {
  ctx_.makeCurrent();
  ctx_.driver().checkCu(ctx_.driver().streamSynchronize(stream_), "cuStreamSynchronize");
}

Event Event::create(const Context& ctx) {
  ctx.makeCurrent();
  CUevent e = nullptr;
  ctx.driver().checkCu(ctx.driver().eventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
  return Event(ctx, e);
}

Event::Event(Event&& o) noexcept : ctx_(o.ctx_), event_(std::exchange(o.event_, nullptr)) {}

Event& Event::operator=(Event&& o) noexcept {
  if (this != &o) {
    reset();
    ctx_ = o.ctx_;
    event_ = std::exchange(o.event_, nullptr);
  }
  return *this;
}

Event::~Event() { reset(); }

void Event::reset() {
  if (event_) {
    ctx_.driver().ctxSetCurrent(ctx_.handle());
    ctx_.driver().eventDestroy(event_);
  }
  event_ = nullptr;
}

void Event::record(const Stream& s) const {
  ctx_.makeCurrent();
  ctx_.driver().checkCu(ctx_.driver().eventRecord(event_, s.handle()), "cuEventRecord");
}

void Event::synchronize() const {
  ctx_.makeCurrent();
  ctx_.driver().checkCu(ctx_.driver().eventSynchronize(event_), "cuEventSynchronize");
}

float Event::elapsedMs(const Event& start, const Event& end) {
  end.synchronize();
  float ms = 0;
  end.ctx_.driver().checkCu(end.ctx_.driver().eventElapsedTime(&ms, start.event_, end.event_),
                            "cuEventElapsedTime");
  return ms;
}

}  // namespace kiln::runtime
