// Kernel::launch asks libcuda about every tensor pointer before it launches (the fake libcuda
// answers cuPointerGetAttribute as each test sets it): a host pointer, another context's memory
// or an allocation shorter than the tensor is an ir::Error naming the argument, and nothing runs.
#include <gtest/gtest.h>

#include "kiln/kernel.h"
#include "kiln/target.h"
#include "ops/fp8_programs.h"
#include "ops/gemm_bf16_sm90.h"
#include "ops/gemm_fp8.h"
#include "tests/unit/runtime/fake/fake_driver.h"

namespace kiln {
namespace {

const std::map<std::string, int64_t> kDims{{"M", 256}, {"N", 256}, {"K", 256}};
const std::vector<uint64_t> kPtrs = {0x7f0000000000, 0x7f1000000000, 0x7f2000000000};

Kernel gemmKernel() {
  const ops::GemmVariant* v = ops::findGemmBf16Variant("bf16_gemm_sm90_128x128x64_s6");
  EXPECT_NE(v, nullptr);
  ir::DiagnosticEngine diag;
  auto k = Kernel::build(*v->program(false), Target::sm90a(), v->config, diag);
  EXPECT_TRUE(k) << diag.str();
  return std::move(*k);
}

// The launch's error text, "" when it launched.
std::string launchError(const std::function<void(FakeCudaState&)>& setup, size_t* launches = nullptr) {
  runtime::testing::FakeDriver fake(setup);
  auto ctx = runtime::Context::primary(fake.driver());
  Kernel k = gemmKernel();
  std::string error;
  try {
    k.launch(ctx, nullptr, kPtrs, {}, kDims);
  } catch (const ir::Error& e) {
    error = e.what();
  }
  if (launches) *launches = fake.state().launches.size();
  return error;
}

TEST(LaunchPointers, DeviceMemoryCoveringEveryTensorLaunches) {
  size_t launches = 0;
  EXPECT_EQ(launchError([](FakeCudaState& s) {
              s.pointerResult = CUDA_SUCCESS;
              s.pointerRangeStart = 0x7f0000000000;
              s.pointerRangeSize = 0x3000000000;
            }, &launches), "");
  EXPECT_EQ(launches, 1u);
}

TEST(LaunchPointers, AHostPointerIsRefusedBeforeLaunch) {
  size_t launches = 0;
  std::string e = launchError([](FakeCudaState& s) { s.pointerResult = CUDA_ERROR_INVALID_VALUE; }, &launches);
  EXPECT_NE(e.find("argument 'A': pointer 0x7f0000000000 is not memory CUDA knows"), std::string::npos) << e;
  EXPECT_EQ(launches, 0u);
}

TEST(LaunchPointers, AnotherContextOrAShortAllocationIsRefused) {
  std::string e = launchError([](FakeCudaState& s) {
    s.pointerResult = CUDA_SUCCESS;
    s.pointerContext = reinterpret_cast<CUcontext>(0xbad);
    s.pointerRangeStart = 0x7f0000000000;
    s.pointerRangeSize = 0x3000000000;
  });
  EXPECT_NE(e.find("argument 'A': pointer 0x7f0000000000 was allocated in another CUDA context (0xbad)"),
            std::string::npos)
      << e;
  // B's allocation ends where B starts: every byte of B is outside it.
  e = launchError([](FakeCudaState& s) {
    s.pointerResult = CUDA_SUCCESS;
    s.pointerRangeStart = 0x7f0000000000;
    s.pointerRangeSize = 0x1000000000;
  });
  EXPECT_NE(e.find("argument 'B': the tensor covers bytes [0x7f1000000000, 0x7f1000020000), 131072 bytes, but its "
                   "allocation is [0x7f0000000000, 0x7f1000000000)"),
            std::string::npos)
      << e;
}

// The same buffers relaunched are not asked about again (the queries would sit inside a
// benchmark's timing); other buffers are.
TEST(LaunchPointers, RelaunchingTheSameBuffersChecksThemOnce) {
  runtime::testing::FakeDriver fake([](FakeCudaState& s) {
    s.pointerResult = CUDA_SUCCESS;
    s.pointerRangeStart = 0x7f0000000000;
    s.pointerRangeSize = 0x3000000000;
  });
  auto ctx = runtime::Context::primary(fake.driver());
  Kernel k = gemmKernel();
  k.launch(ctx, nullptr, kPtrs, {}, kDims);
  const int first = fake.state().pointerQueries;
  EXPECT_GT(first, 0);
  k.launch(ctx, nullptr, kPtrs, {}, kDims);
  EXPECT_EQ(fake.state().pointerQueries, first);
  std::vector<uint64_t> moved = kPtrs;
  moved[1] += 0x100000;
  k.launch(ctx, nullptr, moved, {}, kDims);
  EXPECT_EQ(fake.state().pointerQueries, 2 * first);
  EXPECT_EQ(fake.state().launches.size(), 3u);
}

// A warm relaunch with the same arguments reuses the packed parameters: no pointer query, no
// tensor map encoded again, the same grid. Other dims are validated and packed afresh, and a bad
// launch between two good ones is still refused.
TEST(LaunchPointers, AWarmRelaunchReusesThePackedParameters) {
  runtime::testing::FakeDriver fake([](FakeCudaState& s) {
    s.pointerResult = CUDA_SUCCESS;
    s.pointerRangeStart = 0x7f0000000000;
    s.pointerRangeSize = 0x3000000000;
  });
  auto ctx = runtime::Context::primary(fake.driver());
  Kernel k = gemmKernel();
  k.launch(ctx, nullptr, kPtrs, {}, kDims);
  const size_t maps = fake.state().tensorMaps.size();
  EXPECT_GT(maps, 0u);
  k.launch(ctx, nullptr, kPtrs, {}, kDims);
  EXPECT_EQ(fake.state().tensorMaps.size(), maps);
  ASSERT_EQ(fake.state().launches.size(), 2u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(fake.state().launches[0].grid[i], fake.state().launches[1].grid[i]);
  std::map<std::string, int64_t> odd = kDims;
  odd["K"] = 100;  // the K step is 64 and K must be a multiple of 8: not a shape this kernel runs
  EXPECT_THROW(k.launch(ctx, nullptr, kPtrs, {}, odd), ir::Error);
  EXPECT_EQ(fake.state().launches.size(), 2u);
  std::map<std::string, int64_t> larger = kDims;
  larger["M"] = 512;
  k.launch(ctx, nullptr, kPtrs, {}, larger);
  EXPECT_EQ(fake.state().tensorMaps.size(), 2 * maps);
  k.launch(ctx, nullptr, kPtrs, {}, kDims);
  EXPECT_EQ(fake.state().tensorMaps.size(), 3 * maps);
  EXPECT_EQ(fake.state().launches.size(), 4u);
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// Block scales through the raw-pointer launch (kiln_fp8_bench's and the GPU tests' path): each is
// described by its stored extents, one element per block (scale_a [M, K] in blocks of [1, 128] is
// M x ceil(K / 128) floats), so the launch contract accepts it and the pointer check asks for
// those bytes only: an allocation of exactly the stored floats launches.
TEST(LaunchPointers, BlockScalesAreTheirStoredExtents) {
  auto module = ops::fp8GemmProgram({ops::Fp8Scaling::Block1x128x128x128}, "blockwise");
  ops::Fp8GemmProblem p{256, 256, 1536};
  p.scaling = ops::Fp8Scaling::Block1x128x128x128;
  const ops::Fp8GemmVariant* v = nullptr;
  for (const auto& c : ops::gemmFp8Variants())
    if (!v && c.eligible(p, Target::sm90a())) v = &c;
  ASSERT_NE(v, nullptr);
  ir::DiagnosticEngine diag;
  auto k = Kernel::build(*module, Target::sm90a(), v->config, diag);
  ASSERT_TRUE(k) << diag.str();
  // A, B, scale_a (256 x 12 floats), scale_b (2 x 12 floats), C: each its own allocation.
  const std::vector<uint64_t> ptrs = {0x7f0000000000, 0x7f1000000000, 0x7f2000000000, 0x7f3000000000,
                                      0x7f4000000000};
  runtime::testing::FakeDriver fake([](FakeCudaState& s) {
    s.pointerResult = CUDA_SUCCESS;
    s.pointerRangeStart = 0x7f2000000000;
    s.pointerRangeSize = 256 * 12 * 4;  // scale_a's stored floats, no more: every other range is outside
  });
  auto ctx = runtime::Context::primary(fake.driver());
  std::string error;
  try {
    k->launch(ctx, nullptr, ptrs, {}, {{"M", 256}, {"N", 256}, {"K", 1536}});
  } catch (const ir::Error& e) {
    error = e.what();
  }
  // The contract accepted every extent; the pointer check then reached A, whose bytes lie outside
  // the one allocation the fake knows, and scale_a's stored bytes fit theirs.
  EXPECT_EQ(error.find("extent"), std::string::npos) << error;
  EXPECT_EQ(error.find("argument 'scale_a'"), std::string::npos) << error;
  EXPECT_NE(error.find("argument 'A'"), std::string::npos) << error;
}

}  // namespace
}  // namespace kiln
