#include "kiln/runtime/launcher.h"

#include <gtest/gtest.h>

#include "tests/unit/runtime/fake/fake_driver.h"
#include "tests/unit/runtime/launch_args_fixture.h"

namespace kiln::runtime {
namespace {

using testing::FakeDriver;
using testing::Messages;

Messages checkConfig(Dim3 grid, Dim3 block, Dim3 cluster, uint32_t smem, LaunchLimits limits = {}) {
  ir::DiagnosticEngine diag;
  const bool ok = checkLaunchConfig("gemm", grid, block, cluster, smem, limits, diag);
  EXPECT_EQ(ok, !diag.hadError());
  return testing::messages(diag);
}

LaunchLimits hopper() {
  LaunchLimits l;
  l.clusterLaunch = true;
  return l;
}

TEST(LaunchConfig, ValidConfigurationsPass) {
  EXPECT_EQ(checkConfig({132, 1, 1}, {384, 1, 1}, {1, 1, 1}, 0), Messages{});
  EXPECT_EQ(checkConfig({132, 2, 1}, {128, 1, 1}, {2, 1, 1}, 48 * 1024, hopper()), Messages{});
}

TEST(LaunchConfig, EmptyGridAndBlock) {
  EXPECT_EQ(
      checkConfig({0, 1, 1}, {0, 1, 1}, {1, 1, 1}, 0),
      (Messages{"launch of 'gemm': grid [0, 1, 1] is empty; every grid dim must be at least 1",
                "launch of 'gemm': block [0, 1, 1] is empty; every block dim must be at least 1"}));
}

TEST(LaunchConfig, GridTooLarge) {
  EXPECT_EQ(checkConfig({1, 70000, 1}, {32, 1, 1}, {1, 1, 1}, 0),
            Messages{"launch of 'gemm': grid [1, 70000, 1] is too large; CUDA allows at most "
                     "[2^31-1, 65535, 65535]"});
}

TEST(LaunchConfig, BlockTooLarge) {
  EXPECT_EQ(checkConfig({1, 1, 1}, {32, 1, 65}, {1, 1, 1}, 0),
            Messages{"launch of 'gemm': block [32, 1, 65] is too large; CUDA allows at most [1024, "
                     "1024, 64]"});
}

TEST(LaunchConfig, BlockBeyondTheKernelsRegisterBudget) {
  LaunchLimits l;
  l.maxThreadsPerBlock = 256;
  EXPECT_EQ(
      checkConfig({1, 1, 1}, {128, 4, 1}, {1, 1, 1}, 0, l),
      Messages{"launch of 'gemm': block [128, 4, 1] has 512 threads but the kernel can run at "
               "most 256 per block (its register use limits it)"});
}

TEST(LaunchConfig, ClustersNeedADeviceThatHasThem) {
  EXPECT_EQ(checkConfig({2, 1, 1}, {128, 1, 1}, {2, 1, 1}, 0),
            Messages{"launch of 'gemm': cluster [2, 1, 1] needs thread-block clusters, which this "
                     "device does not have (sm_90 or newer)"});
}

TEST(LaunchConfig, ClusterMustDivideTheGrid) {
  EXPECT_EQ(
      checkConfig({3, 1, 1}, {128, 1, 1}, {2, 1, 1}, 0, hopper()),
      Messages{"launch of 'gemm': grid [3, 1, 1] is not a whole number of clusters [2, 1, 1]; "
               "round each grid dim up to a multiple of the cluster dim"});
}

TEST(LaunchConfig, ClusterSizeIsPortable) {
  EXPECT_EQ(checkConfig({16, 1, 1}, {128, 1, 1}, {16, 1, 1}, 0, hopper()),
            Messages{"launch of 'gemm': cluster [16, 1, 1] has 16 blocks; at most 8 are portable"});
  EXPECT_EQ(checkConfig({16, 1, 1}, {128, 1, 1}, {0, 1, 1}, 0, hopper()),
            Messages{"launch of 'gemm': cluster [0, 1, 1] is empty; use [1, 1, 1] for no cluster"});
}

TEST(LaunchConfig, SharedMemoryMustBeReservedFirst) {
  EXPECT_EQ(checkConfig({1, 1, 1}, {128, 1, 1}, {1, 1, 1}, 100000),
            Messages{"launch of 'gemm': 100000 bytes of dynamic shared memory requested but the "
                     "kernel is set up for at most 49152; pass the size to Module::function or "
                     "Function::reserveDynamicShared first"});
}

struct Launched {
  FakeDriver fake;
  std::optional<Context> ctx;
  std::optional<Module> mod;
  std::optional<Function> fn;
  std::optional<Stream> stream;
  explicit Launched(std::function<void(FakeCudaState&)> setup = {}) : fake(std::move(setup)) {
    ctx.emplace(Context::primary(fake.driver()));
    mod.emplace(Module::load(*ctx, ".version 8.0", "k"));
    fn.emplace(mod->function("gemm", 64 * 1024));
    stream.emplace(Stream::create(*ctx));
  }
};

TEST(Launch, PlainLaunchUsesCuLaunchKernel) {
  Launched t;
  int arg = 7;
  launch(*t.fn, {4, 2, 1}, {128, 1, 1}, {1, 1, 1}, 64 * 1024, *t.stream, {&arg});
  ASSERT_EQ(t.fake.state().launches.size(), 1u);
  const FakeLaunch& l = t.fake.state().launches[0];
  EXPECT_FALSE(l.ex);
  EXPECT_EQ(l.grid[0], 4u);
  EXPECT_EQ(l.grid[1], 2u);
  EXPECT_EQ(l.block[0], 128u);
  EXPECT_EQ(l.sharedBytes, 64u * 1024);
  EXPECT_EQ(l.stream, t.stream->handle());
  EXPECT_EQ(l.firstParam, &arg);
}

TEST(Launch, NoParametersPassNull) {
  Launched t;
  launch(*t.fn, {1, 1, 1}, {32, 1, 1}, {1, 1, 1}, 0, *t.stream, {});
  ASSERT_EQ(t.fake.state().launches.size(), 1u);
  EXPECT_FALSE(t.fake.state().launches[0].hasParams);
}

TEST(Launch, ClusterLaunchUsesCuLaunchKernelEx) {
  Launched t;
  launch(*t.fn, {132, 2, 1}, {384, 1, 1}, {2, 1, 1}, 0, *t.stream, {});
  ASSERT_EQ(t.fake.state().launches.size(), 1u);
  const FakeLaunch& l = t.fake.state().launches[0];
  EXPECT_TRUE(l.ex);
  EXPECT_EQ(l.grid[0], 132u);
  EXPECT_EQ(l.block[0], 384u);
  EXPECT_EQ(l.cluster[0], 2u);
  EXPECT_EQ(l.cluster[1], 1u);
  EXPECT_EQ(l.stream, t.stream->handle());
}

TEST(Launch, InvalidConfigurationNeverReachesTheDriver) {
  Launched t;
  EXPECT_THROW(launch(*t.fn, {1, 1, 1}, {2048, 1, 1}, {1, 1, 1}, 0, *t.stream, {}), ir::Error);
  EXPECT_THROW(launch(*t.fn, {1, 1, 1}, {32, 1, 1}, {1, 1, 1}, 65 * 1024, *t.stream, {}),
               ir::Error);
  EXPECT_TRUE(t.fake.state().launches.empty());
}

TEST(Launch, DriverRefusalNamesTheLaunch) {
  Launched t([](FakeCudaState& s) { s.launchResult = CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES; });
  try {
    launch(*t.fn, {8, 1, 1}, {256, 1, 1}, {1, 1, 1}, 1024, *t.stream, {});
    FAIL() << "launch did not throw";
  } catch (const ir::Error& e) {
    EXPECT_EQ(
        e.diagnostics()[0].message,
        "launch of 'gemm' (grid [8, 1, 1], block [256, 1, 1], cluster [1, 1, 1], 1024 bytes of "
        "dynamic shared memory) failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (too many resources "
        "requested for launch)");
  }
}

TEST(Launch, ClustersOnAnOldDriver) {
  Launched t([](FakeCudaState& s) { s.driverVersion = 11040; });
  try {
    launch(*t.fn, {2, 1, 1}, {128, 1, 1}, {2, 1, 1}, 0, *t.stream, {});
    FAIL() << "launch did not throw";
  } catch (const ir::Error& e) {
    EXPECT_EQ(e.diagnostics()[0].message,
              "launch of 'gemm': clusters need a CUDA 11.8 driver or newer; this one is CUDA 11.4");
  }
}

// The persistent grid of a cluster kernel is sized by how many clusters run at once.
TEST(Launch, MaxActiveClustersAsksTheDriverWithTheClusterShape) {
  Launched t([](FakeCudaState& s) { s.maxActiveClusters = 60; });
  EXPECT_EQ(maxActiveClusters(*t.fn, {384, 1, 1}, {2, 1, 1}, 64 * 1024), 60);
  ASSERT_EQ(t.fake.state().occupancyQueries.size(), 1u);
  const FakeLaunch& q = t.fake.state().occupancyQueries[0];
  EXPECT_EQ(q.block[0], 384u);
  EXPECT_EQ(q.cluster[0], 2u);
  EXPECT_EQ(q.grid[0], 2u);  // a multiple of the cluster
  EXPECT_EQ(q.sharedBytes, 64u * 1024);
  // No cluster, or a driver without the call: 0 ("cannot say"), and the driver is not asked.
  EXPECT_EQ(maxActiveClusters(*t.fn, {384, 1, 1}, {1, 1, 1}, 0), 0);
  EXPECT_EQ(t.fake.state().occupancyQueries.size(), 1u);
  Launched old([](FakeCudaState& s) { s.driverVersion = 11040; });
  EXPECT_EQ(maxActiveClusters(*old.fn, {384, 1, 1}, {2, 1, 1}, 0), 0);
}

}  // namespace
}  // namespace kiln::runtime
