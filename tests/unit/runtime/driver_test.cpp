#include "kiln/runtime/driver.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "kiln/ir/diagnostics.h"
#include "tests/unit/runtime/fake/fake_driver.h"

namespace kiln::runtime {
namespace {

using testing::FakeDriver;

constexpr const char* kAdvice =
    "Kiln can still compile, inspect and interpret programs: try `kiln run --interpret`";

TEST(Driver, MissingLibraryGivesPlainSentence) {
  std::string why;
  EXPECT_EQ(Driver::load("/nonexistent/libcuda.so.1", &why), nullptr);
  const std::string prefix =
      "no NVIDIA driver found (/nonexistent/libcuda.so.1 could not be loaded: ";
  EXPECT_EQ(why.substr(0, prefix.size()), prefix) << why;
  EXPECT_NE(why.find("No such file"), std::string::npos) << why;  // dlerror's reason is kept
  EXPECT_EQ(why.substr(why.size() - std::string(kAdvice).size()), kAdvice) << why;
}

TEST(Driver, LibraryThatIsNotADriverIsUnusable) {
  std::string why;
  EXPECT_EQ(Driver::load("libm.so.6", &why), nullptr);
  EXPECT_EQ(why, std::string("the NVIDIA driver libm.so.6 is unusable (it does not provide "
                             "cuDriverGetVersion); ") +
                     kAdvice);
}

TEST(Driver, DefaultLibraryPathHonoursKilnLibcuda) {
  const char* old = std::getenv("KILN_LIBCUDA");
  std::string saved = old ? old : "";
  setenv("KILN_LIBCUDA", "/opt/driver/libcuda.so.1", 1);
  EXPECT_EQ(Driver::defaultLibraryPath(), "/opt/driver/libcuda.so.1");
  setenv("KILN_LIBCUDA", "", 1);  // empty means unset
  EXPECT_EQ(Driver::defaultLibraryPath(), "libcuda.so.1");
  unsetenv("KILN_LIBCUDA");
  EXPECT_EQ(Driver::defaultLibraryPath(), "libcuda.so.1");
  if (old) setenv("KILN_LIBCUDA", saved.c_str(), 1);
}

TEST(Driver, ResolvesEveryEntryPointThroughGetProcAddress) {
  FakeDriver fake;
  Driver* d = fake.get();
  ASSERT_NE(d, nullptr) << fake.whyNot();
  EXPECT_TRUE(d->usedGetProcAddress());
  EXPECT_EQ(d->version(), 12080);
  EXPECT_EQ(d->libraryPath(), KILN_FAKE_LIBCUDA);
#define KILN_EXPECT_RESOLVED(member, sym, ver, exported, required) \
  EXPECT_NE(reinterpret_cast<void*>(d->member), nullptr) << #sym;
  KILN_CU_ENTRY_POINTS(KILN_EXPECT_RESOLVED)
}

// The dlsym fallback reads the exported names (cuMemAlloc_v2, ...): this checks them against a
// library that exports what a real driver exports.
TEST(Driver, FallsBackToExportedNamesWithoutGetProcAddress) {
  FakeDriver fake({}, KILN_FAKE_LIBCUDA_NOPROC);
  Driver* d = fake.get();
  ASSERT_NE(d, nullptr) << fake.whyNot();
  EXPECT_FALSE(d->usedGetProcAddress());
  KILN_CU_ENTRY_POINTS(KILN_EXPECT_RESOLVED)
#undef KILN_EXPECT_RESOLVED
}

TEST(Driver, OptionalEntryPointsStayNullOnAnOldDriver) {
  FakeDriver fake([](FakeCudaState& s) { s.driverVersion = 11040; });
  Driver* d = fake.get();
  ASSERT_NE(d, nullptr) << fake.whyNot();
  EXPECT_EQ(d->tensorMapEncodeTiled, nullptr);  // CUDA 12.0
  EXPECT_EQ(d->launchKernelEx, nullptr);        // CUDA 11.8
  EXPECT_NE(d->launchKernel, nullptr);
}

TEST(Driver, MissingRequiredEntryPointIsNamed) {
  FakeDriver fake([](FakeCudaState& s) { s.hiddenSymbol = "cuModuleGetFunction"; });
  EXPECT_EQ(fake.get(), nullptr);
  EXPECT_EQ(fake.whyNot(), "the NVIDIA driver " + fake.path() +
                               " is unusable (it does not provide cuModuleGetFunction, which needs "
                               "CUDA 2.0; the driver is CUDA 12.8); " +
                               kAdvice);
}

TEST(Driver, CuInitFailureMeansNoUsableGpu) {
  FakeDriver fake([](FakeCudaState& s) { s.initResult = CUDA_ERROR_NO_DEVICE; });
  EXPECT_EQ(fake.get(), nullptr);
  EXPECT_EQ(fake.whyNot(), std::string("no usable NVIDIA GPU (cuInit failed: CUDA_ERROR_NO_DEVICE "
                                       "(no CUDA-capable device is detected)); ") +
                               kAdvice);
}

TEST(Driver, ZeroDevicesMeansNoGpu) {
  FakeDriver fake([](FakeCudaState& s) { s.deviceCount = 0; });
  EXPECT_EQ(fake.get(), nullptr);
  EXPECT_EQ(fake.whyNot(),
            "no NVIDIA GPU found (the driver " + fake.path() + " reports no devices); " + kAdvice);
}

TEST(Driver, CheckCuThrowsWithErrorNameAndString) {
  FakeDriver fake;
  const Driver& d = fake.driver();
  EXPECT_NO_THROW(d.checkCu(CUDA_SUCCESS, "cuInit"));
  try {
    d.checkCu(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc of 8 bytes");
    FAIL() << "checkCu did not throw";
  } catch (const ir::Error& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].message,
              "cuMemAlloc of 8 bytes failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
    EXPECT_STREQ(e.what(),
                 "error: cuMemAlloc of 8 bytes failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  }
}

TEST(Driver, ErrorTextOfAnUnknownCodeStillSaysSomething) {
  FakeDriver fake;
  EXPECT_EQ(fake.driver().errorText(static_cast<CUresult>(12345)), "CUDA error 12345");
}

TEST(Driver, VersionString) {
  EXPECT_EQ(versionString(12080), "12.8");
  EXPECT_EQ(versionString(11040), "11.4");
  EXPECT_EQ(versionString(13000), "13.0");
}

// The library must not link libcuda (DESIGN.md): no cu* symbol may be visible in the process.
// The fakes are opened RTLD_LOCAL, so they do not show up here either.
TEST(Driver, ProcessDoesNotLinkLibcuda) {
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "cuInit"), nullptr);
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "cuLaunchKernel"), nullptr);
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "cuGetProcAddress_v2"), nullptr);
}

}  // namespace
}  // namespace kiln::runtime
