// The runtime on a real GPU: driver, context, PTX and cubin modules, launches (plain, with large
// dynamic shared memory, with clusters) and TMA tensor maps. Without a GPU every test skips and
// prints why (Driver::get's sentence).
#include "kiln/runtime/driver.h"

#include <gtest/gtest.h>
#include <nvJitLink.h>

#include <cstdio>
#include <cstring>
#include <optional>
#include <random>
#include <vector>

#include "kiln/runtime/device.h"
#include "kiln/runtime/launch_args.h"
#include "kiln/runtime/launcher.h"
#include "kiln/runtime/memory.h"
#include "kiln/runtime/module.h"
#include "kiln/runtime/stream.h"
#include "kiln/runtime/tensor_map.h"

namespace kiln::runtime {
namespace {

// c[i] = a[i] + b[i] for i < n, one element per thread. PTX 7.0 for sm_70 JIT-compiles on every
// GPU Kiln supports.
constexpr const char* kVectorAddPtx = R"(
.version 7.0
.target sm_70
.address_size 64

.visible .entry vadd(
    .param .u64 pa,
    .param .u64 pb,
    .param .u64 pc,
    .param .u32 pn)
{
    .reg .pred p;
    .reg .b32 r<5>;
    .reg .b64 rd<11>;
    .reg .f32 f<4>;

    ld.param.u64 rd1, [pa];
    ld.param.u64 rd2, [pb];
    ld.param.u64 rd3, [pc];
    ld.param.u32 r1, [pn];
    mov.u32 r2, %ctaid.x;
    mov.u32 r3, %ntid.x;
    mov.u32 r4, %tid.x;
    mad.lo.s32 r2, r2, r3, r4;
    setp.ge.u32 p, r2, r1;
    @p bra DONE;
    cvta.to.global.u64 rd4, rd1;
    cvta.to.global.u64 rd5, rd2;
    cvta.to.global.u64 rd6, rd3;
    mul.wide.u32 rd7, r2, 4;
    add.s64 rd8, rd4, rd7;
    add.s64 rd9, rd5, rd7;
    add.s64 rd10, rd6, rd7;
    ld.global.f32 f1, [rd8];
    ld.global.f32 f2, [rd9];
    add.f32 f3, f1, f2;
    st.global.f32 [rd10], f3;
DONE:
    ret;
}
)";

class GpuRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    drv_ = Driver::get(&why);
    if (!drv_) GTEST_SKIP() << why;
    ctx_.emplace(Context::primary(*drv_, 0));
  }
  const Context& ctx() const { return *ctx_; }

  // Runs vadd on n random elements (output poisoned with NaN first) and checks every result.
  // Comparing exactly is right: host and device both add f32 rounding to nearest even.
  void runVectorAdd(const Function& fn, Dim3 cluster, uint32_t sharedBytes) {
    const uint32_t n = 1000;  // not a multiple of the block: the tail is masked
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> dist(-4.f, 4.f);
    std::vector<float> a(n), b(n), c(n);
    for (uint32_t i = 0; i < n; ++i) a[i] = dist(rng), b[i] = dist(rng);
    auto da = DeviceBuffer::allocate(ctx(), n * 4);
    auto db = DeviceBuffer::allocate(ctx(), n * 4);
    auto dc = DeviceBuffer::allocate(ctx(), n * 4);
    da.copyFromHost(a.data(), n * 4);
    db.copyFromHost(b.data(), n * 4);
    dc.fill32(0x7fc00000u);  // NaN: an element the kernel skips cannot pass

    // The checks a Kiln kernel's launch runs, on real device pointers.
    KernelSignature sig;
    sig.dims = {"N"};
    sig.tensors = {{"a", ir::ScalarType::F32, {ir::Extent::of("N")}, {}, 16, false},
                   {"b", ir::ScalarType::F32, {ir::Extent::of("N")}, {}, 16, false},
                   {"c", ir::ScalarType::F32, {ir::Extent::of("N")}, {}, 16, true}};
    LaunchArgs args;
    args.dims = {{"N", n}};
    for (const DeviceBuffer* buf : {&da, &db, &dc})
      args.tensors.push_back({buf->ptr(), ir::ScalarType::F32, {n}, {}});
    ir::DiagnosticEngine diag;
    ASSERT_TRUE(validateLaunch(sig, args, diag)) << diag.str();

    auto stream = Stream::create(ctx());
    CUdeviceptr pa = da.ptr(), pb = db.ptr(), pc = dc.ptr();
    uint32_t pn = n;
    const uint32_t block = 128;
    uint32_t blocks = (n + block - 1) / block;
    blocks = (blocks + cluster.x - 1) / cluster.x * cluster.x;  // whole clusters
    launch(fn, {blocks, 1, 1}, {block, 1, 1}, cluster, sharedBytes, stream, {&pa, &pb, &pc, &pn});
    stream.synchronize();
    dc.copyToHost(c.data(), n * 4);
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << "element " << i;
  }

  Driver* drv_ = nullptr;
  std::optional<Context> ctx_;
};

TEST_F(GpuRuntime, ReportsTheDevice) {
  const DeviceProperties& p = ctx().properties();
  std::printf("driver CUDA %s from %s; device 0: %s\n", versionString(drv_->version()).c_str(),
              drv_->libraryPath().c_str(), p.str().c_str());
  EXPECT_TRUE(drv_->usedGetProcAddress());
  EXPECT_GT(p.smCount, 0);
  EXPECT_GE(p.ccMajor, 7);
  EXPECT_GE(p.maxSharedPerBlockOptin, p.maxSharedPerBlock);
  EXPECT_GT(p.l2Bytes, 0);
  EXPECT_EQ(p.warpSize, 32);
}

TEST_F(GpuRuntime, PtxVectorAdd) {
  auto mod = Module::load(ctx(), kVectorAddPtx, "vadd.ptx");
  Function fn = mod.function("vadd");
  EXPECT_GT(fn.attributes().numRegs, 0);
  EXPECT_EQ(fn.attributes().localBytes, 0);
  runVectorAdd(fn, {1, 1, 1}, 0);
}

TEST_F(GpuRuntime, CubinVectorAdd) {
  const DeviceProperties& p = ctx().properties();
  const std::string arch = "-arch=sm_" + std::to_string(p.computeCapability());
  const char* opts[] = {arch.c_str()};
  nvJitLinkHandle h = nullptr;
  ASSERT_EQ(nvJitLinkCreate(&h, 1, opts), NVJITLINK_SUCCESS);
  ASSERT_EQ(
      nvJitLinkAddData(h, NVJITLINK_INPUT_PTX, kVectorAddPtx, std::strlen(kVectorAddPtx), "vadd"),
      NVJITLINK_SUCCESS);
  ASSERT_EQ(nvJitLinkComplete(h), NVJITLINK_SUCCESS);
  size_t size = 0;
  ASSERT_EQ(nvJitLinkGetLinkedCubinSize(h, &size), NVJITLINK_SUCCESS);
  std::string cubin(size, '\0');
  ASSERT_EQ(nvJitLinkGetLinkedCubin(h, cubin.data()), NVJITLINK_SUCCESS);
  nvJitLinkDestroy(&h);
  ASSERT_FALSE(isPtxImage(cubin));

  auto mod = Module::load(ctx(), cubin, "vadd.cubin");
  Function fn = mod.function("vadd");
  EXPECT_EQ(fn.attributes().binaryVersion, p.computeCapability());
  runVectorAdd(fn, {1, 1, 1}, 0);
}

TEST_F(GpuRuntime, LaunchWithMoreThan48KBOfDynamicSharedMemory) {
  const int bytes = 100 * 1024;
  const DeviceProperties& p = ctx().properties();
  if (p.maxSharedPerBlockOptin < bytes)
    GTEST_SKIP() << p.name << " allows only " << p.maxSharedPerBlockOptin
                 << " bytes of shared memory per block";
  auto mod = Module::load(ctx(), kVectorAddPtx, "vadd.ptx");
  Function fn = mod.function("vadd", bytes);
  EXPECT_GE(fn.attributes().maxDynamicSharedBytes, bytes);
  runVectorAdd(fn, {1, 1, 1}, bytes);
}

TEST_F(GpuRuntime, ClusterLaunch) {
  if (!ctx().properties().clusterLaunch)
    GTEST_SKIP() << ctx().properties().name << " has no thread-block clusters (sm_90 or newer)";
  auto mod = Module::load(ctx(), kVectorAddPtx, "vadd.ptx");
  runVectorAdd(mod.function("vadd"), {2, 1, 1}, 0);
}

TEST_F(GpuRuntime, DriverRefusalsBecomeErrors) {
  EXPECT_THROW(Module::load(ctx(), ".version 7.0\n.target sm_70\nthis is not ptx", "bad.ptx"),
               ir::Error);
  auto mod = Module::load(ctx(), kVectorAddPtx, "vadd.ptx");
  EXPECT_THROW(mod.function("no_such_kernel"), ir::Error);
}

TEST_F(GpuRuntime, EventsTimeAStream) {
  auto stream = Stream::create(ctx());
  auto start = Event::create(ctx());
  auto end = Event::create(ctx());
  start.record(stream);
  end.record(stream);
  EXPECT_GE(Event::elapsedMs(start, end), 0.f);
}

TEST_F(GpuRuntime, TensorMapEncodes) {
  if (ctx().properties().ccMajor < 9) GTEST_SKIP() << "TMA needs sm_90 or newer";
  // A row-major 256 x 128 bf16 matrix, 64 x 64 boxes, 128-byte swizzle: a GEMM operand.
  auto buf = DeviceBuffer::allocate(ctx(), 256 * 128 * 2);
  TensorMapDesc d;
  d.name = "A";
  d.dtype = ir::ScalarType::BF16;
  d.globalAddress = buf.ptr();
  d.globalDims = {128, 256};
  d.globalStrides = {128 * 2};
  d.boxDims = {64, 64};
  d.swizzle = TmaSwizzle::B128;
  d.l2Promotion = TmaL2Promotion::B256;
  CUtensorMap map = encodeTensorMap(ctx(), d);
  bool written = false;
  for (auto q : map.opaque) written |= q != 0;
  EXPECT_TRUE(written);
  // FP8 operands travel as bytes: a 3-D [G, M, K] e4m3 tensor, one 64 x 128 box per group.
  d.dtype = ir::ScalarType::F8E4M3;
  d.globalDims = {128, 64, 4};
  d.globalStrides = {128, 128 * 64};
  d.boxDims = {128, 64, 1};
  EXPECT_NO_THROW(encodeTensorMap(ctx(), d));
}

}  // namespace
}  // namespace kiln::runtime
