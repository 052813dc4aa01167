// Context, streams, events and device memory, against the fake libcuda.
#include "kiln/runtime/device.h"

#include <gtest/gtest.h>

#include <cstring>

#include "kiln/runtime/memory.h"
#include "kiln/runtime/stream.h"
#include "tests/unit/runtime/fake/fake_driver.h"

namespace kiln::runtime {
namespace {

using testing::FakeDriver;

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const ir::Error& e) {
    return e.diagnostics().empty() ? "" : e.diagnostics()[0].message;
  }
  return "(no error)";
}

TEST(Context, PrimaryContextIsRetainedMadeCurrentAndReleased) {
  FakeDriver fake;
  {
    auto ctx = Context::primary(fake.driver(), 0);
    EXPECT_EQ(fake.state().primaryRetains, 1);
    EXPECT_EQ(fake.state().current, ctx.handle());
    const DeviceProperties& p = ctx.properties();
    EXPECT_EQ(p.name, "Fake H200");
    EXPECT_EQ(p.computeCapability(), 90);
    EXPECT_EQ(p.smCount, 132);
    EXPECT_EQ(p.maxSharedPerBlockOptin, 232448);
    EXPECT_EQ(p.l2Bytes, 60 * 1024 * 1024);
    EXPECT_EQ(p.clockKHz, 1980000);
    EXPECT_TRUE(p.clusterLaunch);
    EXPECT_EQ(p.str(), "Fake H200 (sm_90, 132 SMs, 227 KB smem/block, 60 MB L2)");
    EXPECT_EQ(fake.state().primaryReleases, 0);
  }
  EXPECT_EQ(fake.state().primaryReleases, 1);
}

TEST(Context, MissingOrdinalNamesTheRange) {
  FakeDriver fake([](FakeCudaState& s) { s.deviceCount = 2; });
  EXPECT_EQ(errorOf([&] { Context::primary(fake.driver(), 2); }),
            "there is no CUDA device 2: this machine has 2 (ordinals 0 to 1)");
  EXPECT_EQ(fake.state().primaryRetains, 0);
}

TEST(Context, AdoptCurrentNeedsACurrentContext) {
  FakeDriver fake;
  EXPECT_EQ(
      errorOf([&] { Context::adoptCurrent(fake.driver()); }),
      "no CUDA context is current on this thread; make one current before adopting it, or use "
      "Context::primary");
}

TEST(Context, AdoptedContextIsNotReleased) {
  FakeDriver fake;
  const CUcontext host = reinterpret_cast<CUcontext>(0xAB);
  fake.state().current = host;
  {
    auto ctx = Context::adoptCurrent(fake.driver());
    EXPECT_EQ(ctx.handle(), host);
    EXPECT_EQ(ctx.properties().name, "Fake H200");
  }
  EXPECT_EQ(fake.state().primaryRetains, 0);
  EXPECT_EQ(fake.state().primaryReleases, 0);
}

TEST(Stream, OwnedStreamIsDestroyedOnceAdoptedNever) {
  FakeDriver fake;
  auto ctx = Context::primary(fake.driver());
  {
    Stream s = Stream::create(ctx);
    EXPECT_TRUE(s.owned());
    Stream moved = std::move(s);
    EXPECT_EQ(s.handle(), nullptr);
    moved.synchronize();
    Stream borrowed = Stream::adopt(ctx, reinterpret_cast<CUstream>(0x99));
    EXPECT_FALSE(borrowed.owned());
  }
  EXPECT_EQ(fake.state().streamsCreated, 1);
  EXPECT_EQ(fake.state().streamsDestroyed, 1);
}

TEST(Event, ElapsedTimeAndCleanup) {
  FakeDriver fake;
  auto ctx = Context::primary(fake.driver());
  {
    auto s = Stream::create(ctx);
    auto a = Event::create(ctx), b = Event::create(ctx);
    a.record(s);
    b.record(s);
    EXPECT_FLOAT_EQ(Event::elapsedMs(a, b), 1.5f);
  }
  EXPECT_EQ(fake.state().eventsCreated, 2);
  EXPECT_EQ(fake.state().eventsDestroyed, 2);
}

TEST(DeviceBuffer, CopiesAndFillsRoundTrip) {
  FakeDriver fake;
  auto ctx = Context::primary(fake.driver());
  {
    auto buf = DeviceBuffer::allocate(ctx, 64);
    EXPECT_EQ(buf.size(), 64u);
    EXPECT_EQ(buf.ptr() % 256, 0u);
    uint8_t in[64], out[64];
    for (int i = 0; i < 64; ++i) in[i] = static_cast<uint8_t>(i * 3);
    buf.copyFromHost(in, 64);
    buf.copyToHost(out, 64);
    EXPECT_EQ(std::memcmp(in, out, 64), 0);
    buf.fill32(0x7fc00001u);
    uint32_t words[16];
    buf.copyToHost(words, 64);
    EXPECT_EQ(words[0], 0x7fc00001u);
    EXPECT_EQ(words[15], 0x7fc00001u);
    buf.fill(0xAB);
    buf.copyToHost(out, 64);
    EXPECT_EQ(out[63], 0xAB);
    DeviceBuffer moved = std::move(buf);
    EXPECT_EQ(buf.ptr(), 0u);
  }
  EXPECT_EQ(fake.state().allocations, 1);
  EXPECT_EQ(fake.state().frees, 1);
}

TEST(DeviceBuffer, OutOfMemoryNamesTheSizeAndDevice) {
  FakeDriver fake;
  auto ctx = Context::primary(fake.driver());
  EXPECT_EQ(errorOf([&] { DeviceBuffer::allocate(ctx, size_t(1) << 41); }),
            "cuMemAlloc of 2199023255552 bytes on Fake H200 failed: CUDA_ERROR_OUT_OF_MEMORY (out "
            "of memory)");
}

TEST(DeviceBuffer, EmptyBufferAllocatesNothing) {
  FakeDriver fake;
  auto ctx = Context::primary(fake.driver());
  auto buf = DeviceBuffer::allocate(ctx, 0);
  EXPECT_EQ(buf.ptr(), 0u);
  buf.fill(0);
  EXPECT_EQ(fake.state().allocations, 0);
}

}  // namespace
}  // namespace kiln::runtime
