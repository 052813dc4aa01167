// Module loading and kernel lookup, against the fake libcuda.
#include "kiln/runtime/module.h"

#include <gtest/gtest.h>

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

TEST(Module, ImageKindFromMagic) {
  EXPECT_TRUE(isPtxImage(".version 8.0\n.target sm_90\n"));
  EXPECT_FALSE(
      isPtxImage(std::string_view("\x7f"
                                  "ELF\x02\x01",
                                  6)));
  EXPECT_FALSE(isPtxImage(std::string_view("\x50\xed\x55\xba\x01\x00", 6)));
  EXPECT_TRUE(isPtxImage(""));
}

TEST(Module, PtxIsPassedNulTerminated) {
  FakeDriver fake;
  auto ctx = Context::primary(fake.driver());
  const std::string text = ".version 8.0 // and more that is not part of the image";
  auto m = Module::load(ctx, std::string_view(text).substr(0, 12), "k");
  EXPECT_EQ(fake.state().lastImage, ".version 8.0");
  EXPECT_EQ(m.label(), "k");
}

TEST(Module, LoadFailureCarriesTheJitLog) {
  FakeDriver fake;
  auto ctx = Context::primary(fake.driver());
  EXPECT_EQ(errorOf([&] { Module::load(ctx, "syntax error here", "gemm"); }),
            "loading module 'gemm' (PTX, 17 bytes) failed: CUDA_ERROR_INVALID_PTX (a PTX JIT "
            "compilation failed)\nptxas fatal: syntax error");
  EXPECT_EQ(fake.state().modulesLoaded, 0);
}

TEST(Module, UnloadedOnceWhenDestroyed) {
  FakeDriver fake;
  auto ctx = Context::primary(fake.driver());
  {
    auto m = Module::load(ctx, ".version 8.0", "k");
    Module moved = std::move(m);
    EXPECT_EQ(m.handle(), nullptr);
  }
  EXPECT_EQ(fake.state().modulesLoaded, 1);
  EXPECT_EQ(fake.state().modulesUnloaded, 1);
}

TEST(Module, MissingKernelIsNamed) {
  FakeDriver fake;
  auto ctx = Context::primary(fake.driver());
  auto m = Module::load(ctx, ".version 8.0", "gemm.ptx");
  EXPECT_EQ(errorOf([&] { m.function("missing"); }),
            "module 'gemm.ptx' has no kernel named 'missing'");
}

TEST(Module, FunctionReadsItsAttributes) {
  FakeDriver fake([](FakeCudaState& s) { s.funcStaticShared = 1024; });
  auto ctx = Context::primary(fake.driver());
  auto m = Module::load(ctx, ".version 8.0", "k");
  Function f = m.function("k");
  EXPECT_EQ(f.name(), "k");
  EXPECT_EQ(f.attributes().numRegs, 40);
  EXPECT_EQ(f.attributes().staticSharedBytes, 1024);
  EXPECT_EQ(f.attributes().maxDynamicSharedBytes, 48 * 1024);
  EXPECT_EQ(f.attributes().binaryVersion, 90);
}

TEST(Module, SmallSharedMemoryNeedsNoOptIn) {
  FakeDriver fake;
  auto ctx = Context::primary(fake.driver());
  auto m = Module::load(ctx, ".version 8.0", "k");
  m.function("k", 48 * 1024);
  EXPECT_TRUE(fake.state().funcAttributesSet.empty());
}

TEST(Module, LargeSharedMemoryRaisesTheLimit) {
  FakeDriver fake;
  auto ctx = Context::primary(fake.driver());
  auto m = Module::load(ctx, ".version 8.0", "k");
  Function f = m.function("k", 200 * 1024);
  ASSERT_EQ(fake.state().funcAttributesSet.size(), 1u);
  EXPECT_EQ(fake.state().funcAttributesSet[0].first,
            CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
  EXPECT_EQ(fake.state().funcAttributesSet[0].second, 200 * 1024);
  EXPECT_EQ(f.attributes().maxDynamicSharedBytes, 200 * 1024);
  f.reserveDynamicShared(100 * 1024);  // already allowed: no driver call
  EXPECT_EQ(fake.state().funcAttributesSet.size(), 1u);
}

TEST(Module, SharedMemoryBeyondTheDeviceIsRefused) {
  FakeDriver fake([](FakeCudaState& s) { s.funcStaticShared = 1024; });
  auto ctx = Context::primary(fake.driver());
  auto m = Module::load(ctx, ".version 8.0", "k");
  EXPECT_EQ(
      errorOf([&] { m.function("k", 232448); }),
      "kernel 'k' needs 233472 bytes of shared memory per block (1024 static + 232448 "
      "dynamic) but Fake H200 allows at most 232448; use fewer pipeline stages or smaller tiles");
  EXPECT_TRUE(fake.state().funcAttributesSet.empty());
}

}  // namespace
}  // namespace kiln::runtime
