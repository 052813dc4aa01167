#pragma once
// Streams and events: the order in which Kiln's work runs on the device, and how it is timed.
//
// A Stream either owns its CUstream (Stream::create; destroyed with it) or borrows one the host
// program made (Stream::adopt, e.g. PyTorch's current stream; never destroyed by Kiln). Both are
// move-only. They keep their Context alive.
#include "kiln/runtime/device.h"

namespace kiln::runtime {

class Stream {
 public:
  // A new non-blocking stream (it does not synchronise with the legacy default stream 0).
  static Stream create(const Context& ctx);
  // Borrows `stream`; nullptr means the legacy default stream.
  static Stream adopt(const Context& ctx, CUstream stream);

  Stream(Stream&& o) noexcept;
  Stream& operator=(Stream&& o) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();

  // Waits for everything queued so far; a failure of earlier asynchronous work (a kernel that
  // faulted) surfaces here as kiln::ir::Error.
  void synchronize() const;

  CUstream handle() const { return stream_; }
  const Context& context() const { return ctx_; }
  bool owned() const { return owned_; }

 private:
  Stream(const Context& ctx, CUstream s, bool owned) : ctx_(ctx), stream_(s), owned_(owned) {}
  void reset();
  Context ctx_;
  CUstream stream_;
  bool owned_;
};

// A timing event (CU_EVENT_DEFAULT: it records timestamps).
class Event {
 public:
  static Event create(const Context& ctx);
  Event(Event&& o) noexcept;
  Event& operator=(Event&& o) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();

  void record(const Stream& s) const;
  void synchronize() const;
  // Milliseconds between two recorded events; waits for `end` first.
  static float elapsedMs(const Event& start, const Event& end);

  CUevent handle() const { return event_; }

 private:
  Event(const Context& ctx, CUevent e) : ctx_(ctx), event_(e) {}
  void reset();
  Context ctx_;
  CUevent event_;
};

}  // namespace kiln::runtime
