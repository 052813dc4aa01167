// The launch contract of sm90_ws_persistent kernels, on the CPU: tensor-map parameters as data, the
// persistent grid, and the CUtensorMap descriptions Kernel::launch encodes (src/api/kernel.cpp).
#include <gtest/gtest.h>

#include "examples/examples.h"
#include "kiln/kernel.h"
#include "kiln/runtime/stream.h"
#include "ops/gemm_bf16_sm90.h"
#include "schedule/config.h"
#include "target/target.h"
#include "tests/unit/runtime/fake/fake_driver.h"

namespace kiln {
namespace {

const ops::GemmVariant& variant(const char* name) {
  const ops::GemmVariant* v = ops::findGemmBf16Variant(name);
  EXPECT_NE(v, nullptr) << name;
  return *v;
}

Kernel build(const ir::Module& program, const Config& c) {
  ir::DiagnosticEngine diag;
  auto k = Kernel::build(program, Target::sm90a(), c, diag);
  EXPECT_TRUE(k) << diag.str();
  return std::move(*k);
}

const KernelParam& param(const LaunchInfo& l, const std::string& name) {
  for (const auto& p : l.params)
    if (p.name == name) return p;
  ADD_FAILURE() << "no parameter " << name;
  return l.params.front();
}

TEST(Sm90Launch, TensorMapsAreParametersAfterThePointers) {
  const auto& v = variant("bf16_gemm_sm90_128x128x64_s6");
  Kernel k = build(*v.program(false), v.config);
  const LaunchInfo& l = k.launchInfo();
  std::vector<std::string> names;
  for (const auto& p : l.params) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"A", "B", "C", "tmap_A", "tmap_B", "M", "N", "K"}));
  const KernelParam& a = param(l, "tmap_A");
  EXPECT_EQ(a.kind, KernelParam::Kind::TensorMap);
  EXPECT_EQ(a.tensor, "A");
  EXPECT_EQ(a.box, (std::vector<int64_t>{64, 128}));
  EXPECT_EQ(a.swizzleBytes, 128);
  EXPECT_EQ(param(l, "tmap_B").box, (std::vector<int64_t>{64, 64}));  // row-major B: 64 columns x bk rows
  EXPECT_EQ(l.threads, 384);
  EXPECT_TRUE(l.persistent);
  // 4096 x 4096 in 128 x 128 tiles is 1024 tiles; a persistent kernel runs one block per SM.
  std::map<std::string, int64_t> dims{{"M", 4096}, {"N", 4096}, {"K", 4096}};
  EXPECT_EQ(l.gridFor(dims)[0], 1024);
  EXPECT_EQ(l.gridFor(dims, 132)[0], 132);
  EXPECT_EQ(l.gridFor({{"M", 100}, {"N", 100}, {"K", 64}}, 132)[0], 1);
  EXPECT_EQ(l.cluster, (std::array<int, 3>{1, 1, 1}));
  // The PTX takes each map by value, 64-byte aligned.
  EXPECT_NE(k.ptx().find(".param .align 64 .b8 bf16_gemm_sm90_128x128x64_s6_param_3[128]"), std::string::npos);
}

// cluster_m=2: the grid counts tile pairs along M and is launched in clusters of two blocks; the
// persistent cap keeps whole clusters; the B map's box is half of the B stage.
TEST(Sm90Launch, ClusterVariantsLaunchInPairs) {
  const auto& v = variant("bf16_gemm_sm90_128x256x64_s4_tma_c2");
  for (bool kMajor : {false, true}) {
    Kernel k = build(*v.program(kMajor), v.config);
    const LaunchInfo& l = k.launchInfo();
    EXPECT_EQ(l.cluster, (std::array<int, 3>{2, 1, 1}));
    EXPECT_EQ(param(l, "tmap_B").box, kMajor ? (std::vector<int64_t>{64, 128}) : (std::vector<int64_t>{64, 32}));
    std::map<std::string, int64_t> big{{"M", 4096}, {"N", 4096}, {"K", 4096}};
    EXPECT_EQ(l.gridFor(big)[0], 512);        // 16 pairs x 16 N tiles, two blocks each
    EXPECT_EQ(l.gridFor(big, 132)[0], 132);
    EXPECT_EQ(l.gridFor(big, 133)[0], 132);   // whole clusters only
    // 300 rows: 3 M tiles, so 2 pairs (the second tile of the last lies past M) x 1 N tile.
    EXPECT_EQ(l.gridFor({{"M", 300}, {"N", 256}, {"K", 64}}, 132)[0], 4);
    EXPECT_NE(k.ptx().find(".reqnctapercluster 2, 1, 1"), std::string::npos);
  }
}

// Kernel::launch sizes a persistent cluster grid by the clusters the device runs at once
// (cuOccupancyMaxActiveClusters), asked once per kernel: 60 clusters -> 120 blocks, not 132.
TEST(Sm90Launch, PersistentClusterGridFollowsTheActiveClusters) {
  const auto& v = variant("bf16_gemm_sm90_128x256x64_s4_tma_c2");
  for (int active : {60, 66, 80}) {
    runtime::testing::FakeDriver fake([active](FakeCudaState& s) { s.maxActiveClusters = active; });
    auto ctx = runtime::Context::primary(fake.driver());
    Kernel fresh = build(*v.program(false), v.config);  // a kernel asks once, then remembers
    std::map<std::string, int64_t> dims{{"M", 4096}, {"N", 4096}, {"K", 4096}};
    std::vector<uint64_t> ptrs = {0x7f0000000000, 0x7f1000000000, 0x7f2000000000};
    fresh.launch(ctx, nullptr, ptrs, {}, dims);
    fresh.launch(ctx, nullptr, ptrs, {}, dims);
    ASSERT_EQ(fake.state().launches.size(), 2u);
    EXPECT_EQ(fake.state().occupancyQueries.size(), 1u);
    EXPECT_EQ(fake.state().launches[0].grid[0], std::min(2u * active, 132u)) << active << " active clusters";
    EXPECT_EQ(fake.state().launches[0].cluster[0], 2u);
  }
}

TEST(Sm90Launch, TensorMapDescriptionsFollowTheTensorLayouts) {
  const auto& v = variant("bf16_gemm_sm90_128x256x64_s4");
  std::map<std::string, int64_t> dims{{"M", 300}, {"N", 520}, {"K", 1000}};
  std::vector<uint64_t> ptrs = {0x10000, 0x200000, 0x400000};
  {
    Kernel k = build(*v.program(false), v.config);
    auto a = tensorMapDescFor(param(k.launchInfo(), "tmap_A"), k.signature(), ptrs, dims);
    EXPECT_EQ(a.name, "tmap_A");
    EXPECT_EQ(a.globalAddress, 0x10000u);
    EXPECT_EQ(a.dtype, ir::ScalarType::BF16);
    EXPECT_EQ(a.globalDims, (std::vector<uint64_t>{1000, 300}));  // K fastest
    EXPECT_EQ(a.globalStrides, (std::vector<uint64_t>{2000}));    // bytes per row of A
    EXPECT_EQ(a.boxDims, (std::vector<uint32_t>{64, 128}));
    EXPECT_EQ(a.swizzle, runtime::TmaSwizzle::B128);
    auto b = tensorMapDescFor(param(k.launchInfo(), "tmap_B"), k.signature(), ptrs, dims);
    EXPECT_EQ(b.globalAddress, 0x200000u);
    EXPECT_EQ(b.globalDims, (std::vector<uint64_t>{520, 1000}));  // row-major B: N fastest
    EXPECT_EQ(b.globalStrides, (std::vector<uint64_t>{1040}));
    EXPECT_EQ(b.boxDims, (std::vector<uint32_t>{64, 64}));
    ir::DiagnosticEngine diag;
    EXPECT_TRUE(runtime::validateTensorMap(a, diag) && runtime::validateTensorMap(b, diag)) << diag.str();
  }
  {
    Kernel k = build(*v.program(true), v.config);  // K-major B: [N][K] in memory
    auto b = tensorMapDescFor(param(k.launchInfo(), "tmap_B"), k.signature(), ptrs, dims);
    EXPECT_EQ(b.globalDims, (std::vector<uint64_t>{1000, 520}));
    EXPECT_EQ(b.globalStrides, (std::vector<uint64_t>{2000}));
    EXPECT_EQ(b.boxDims, (std::vector<uint32_t>{64, 256}));
  }
}

// l2_hint=reuse: the kernel states when each operand streams, and the map of an operand that
// streams in this launch fills 128-byte lines; every other map promotes 256 bytes.
TEST(Sm90Launch, StreamedOperandsFillAsTheirRuleSays) {
  const auto& v = variant("bf16_gemm_sm90_64x64x64_s13");
  std::vector<uint64_t> ptrs = {0x10000, 0x200000, 0x400000};
  auto fills = [&](const Kernel& k, int64_t m, int64_t n, int64_t kk) {
    std::map<std::string, int64_t> dims{{"M", m}, {"N", n}, {"K", kk}};
    return std::pair{tensorMapDescFor(param(k.launchInfo(), "tmap_A"), k.signature(), ptrs, dims).l2Promotion,
                     tensorMapDescFor(param(k.launchInfo(), "tmap_B"), k.signature(), ptrs, dims).l2Promotion};
  };
  using P = runtime::TmaL2Promotion;
  {
    Kernel k = build(*v.program(false), v.config);
    const auto& a = param(k.launchInfo(), "tmap_A").stream;
    const auto& b = param(k.launchInfo(), "tmap_B").stream;
    ASSERT_TRUE(a && b);
    EXPECT_EQ(std::tuple(a->boundDim, a->bound, a->rowDim, a->rowMultiple, a->fillBytes),
              std::tuple(std::string("N"), int64_t{64}, std::string("K"), int64_t{64}, 128));
    EXPECT_EQ(std::tuple(b->boundDim, b->bound, b->rowDim, b->rowMultiple, b->fillBytes),
              std::tuple(std::string("M"), int64_t{64}, std::string("N"), int64_t{64}, 128));
    EXPECT_EQ(fills(k, 64, 5056, 5120), std::pair(P::B256, P::B128));  // B streams
    EXPECT_EQ(fills(k, 65, 5056, 5120), std::pair(P::B256, P::B256));  // two tile rows read B
    EXPECT_EQ(fills(k, 64, 5000, 5120), std::pair(P::B256, P::B256));  // B's rows not on lines
    EXPECT_EQ(fills(k, 8192, 64, 4096), std::pair(P::B128, P::B256));  // A streams
  }
}

TEST(Sm90Launch, BatchedOperandsUseThreeDimensionalMaps) {
  const auto& v = variant("bf16_gemm_sm90_128x128x64_s6");
  Kernel k = build(*examples::batchedGemm(), v.config);
  std::map<std::string, int64_t> dims{{"B", 3}, {"M", 256}, {"N", 128}, {"K", 64}};
  auto a = tensorMapDescFor(param(k.launchInfo(), "tmap_A"), k.signature(), {0x10000, 0x20000, 0x40000}, dims);
  EXPECT_EQ(a.globalDims, (std::vector<uint64_t>{64, 256, 3}));
  EXPECT_EQ(a.globalStrides, (std::vector<uint64_t>{128, 256 * 128}));
  EXPECT_EQ(a.boxDims, (std::vector<uint32_t>{64, 128, 1}));
  EXPECT_EQ(k.launchInfo().gridFor(dims)[0], 2 * 1 * 3);  // tiles of every batch
}

TEST(Sm90Launch, ValidateChecksPointersStridesAndMapsBeforeAnythingRuns) {
  const auto& v = variant("bf16_gemm_sm90_64x128x64_s8");
  Kernel k = build(*v.program(false), v.config);
  std::map<std::string, int64_t> dims{{"M", 64}, {"N", 128}, {"K", 64}};
  ir::DiagnosticEngine ok;
  EXPECT_TRUE(k.validate({0x10000, 0x20000, 0x40000}, {}, dims, ok)) << ok.str();
  ir::DiagnosticEngine misaligned;
  EXPECT_FALSE(k.validate({0x10000, 0x20008, 0x40000}, {}, dims, misaligned));
  EXPECT_NE(misaligned.str().find("argument 'B'"), std::string::npos) << misaligned.str();
  ir::DiagnosticEngine badN;
  EXPECT_FALSE(k.validate({0x10000, 0x20000, 0x40000}, {}, {{"M", 64}, {"N", 100}, {"K", 64}}, badN));
  EXPECT_NE(badN.str().find("needs N to be a multiple of 8 (got 100)"), std::string::npos) << badN.str();
}

// split_k: the kernel takes the runtime's workspace (two pointers after the tensor maps), sized per
// tile; Kernel::launch allocates one per stream (flags and partials), reuses it, grows it for a
// larger problem, keeps the flags in place for a smaller one, and frees every buffer with the
// kernel (the outgrown too: a launch may still have been using it).
TEST(Sm90Launch, SplitKWorkspaceIsOnePerStreamAndGrows) {
  const auto& v = variant("bf16_gemm_sm90_128x128x64_s6_tma_sk2");
  runtime::testing::FakeDriver fake;
  auto ctx = runtime::Context::primary(fake.driver());
  runtime::Stream other = runtime::Stream::create(ctx);
  std::vector<uint64_t> ptrs = {0x7f0000000000, 0x7f1000000000, 0x7f2000000000};
  int before = fake.state().allocations, freedBefore = fake.state().frees;
  {
    Kernel k = build(*v.program(false), v.config);
    const LaunchInfo& l = k.launchInfo();
    std::vector<std::string> names;
    for (const auto& p : l.params) names.push_back(p.name);
    EXPECT_EQ(names, (std::vector<std::string>{"A", "B", "C", "tmap_A", "tmap_B", "tmap_C", "ws_flags", "ws_partials",
                                               "M", "N", "K"}));
    EXPECT_EQ(param(l, "ws_flags").kind, KernelParam::Kind::Workspace);
    EXPECT_EQ(param(l, "ws_flags").elem, ir::ScalarType::I32);
    EXPECT_EQ(param(l, "ws_partials").kind, KernelParam::Kind::Workspace);
    EXPECT_EQ(param(l, "ws_partials").elem, ir::ScalarType::F32);
    // 512 x 512 in 128 x 128 tiles: 16 tiles, 32 units; per tile a flag per consumer warpgroup and
    // one slice of 128 x 128 partial sums.
    std::map<std::string, int64_t> small{{"M", 512}, {"N", 512}, {"K", 4096}}, large{{"M", 1024}, {"N", 1024}, {"K", 4096}};
    EXPECT_EQ(l.workspaceBytes(small), (std::array<int64_t, 2>{16 * 8, 16 * 128 * 128 * 4}));
    EXPECT_EQ(l.gridFor(small, 132)[0], 32);
    EXPECT_EQ(l.gridFor(large, 132)[0], 128);
    // Flags and partials are two buffers per stream, each grown on its own.
    k.launch(ctx, nullptr, ptrs, {}, small);
    k.launch(ctx, nullptr, ptrs, {}, small);
    EXPECT_EQ(fake.state().allocations, before + 2) << "one workspace (flags, partials) for the stream, reused";
    k.launch(ctx, other.handle(), ptrs, {}, small);
    EXPECT_EQ(fake.state().allocations, before + 4) << "another stream, another workspace";
    k.launch(ctx, nullptr, ptrs, {}, large);
    auto [flagsLarge, partialsLarge] = k.workspaceFor(ctx, nullptr, large);
    k.launch(ctx, nullptr, ptrs, {}, small);
    EXPECT_EQ(fake.state().allocations, before + 6) << "both grown once for the larger problem, then reused";
    // A smaller problem after a larger one keeps the flags where they were: its partial sums must
    // not land on flags the larger problem's next launch expects to find zero.
    auto [flagsSmall, partialsSmall] = k.workspaceFor(ctx, nullptr, small);
    EXPECT_EQ(flagsSmall, flagsLarge);
    EXPECT_EQ(partialsSmall, partialsLarge);
    EXPECT_TRUE(partialsSmall >= flagsSmall + 64 * 8 || partialsSmall + 16 * 128 * 128 * 4 <= flagsSmall)
        << "the partial sums overlap the larger problem's flags";
    EXPECT_EQ(fake.state().frees, freedBefore);
    EXPECT_EQ(fake.state().launches.size(), 5u);
  }
  EXPECT_EQ(fake.state().frees, freedBefore + 6);
  // An unsplit kernel has no workspace.
  const auto& plain = variant("bf16_gemm_sm90_128x128x64_s6_tma");
  Kernel k = build(*plain.program(false), plain.config);
  EXPECT_EQ(k.launchInfo().workspaceBytes({{"M", 512}, {"N", 512}, {"K", 64}}), (std::array<int64_t, 2>{0, 0}));
  k.launch(ctx, nullptr, ptrs, {}, {{"M", 512}, {"N", 512}, {"K", 64}});
  EXPECT_EQ(fake.state().allocations, before + 6);
}

// stream_k: the workspace is per block of the launched grid (a flag per consumer warpgroup and one
// tile of partial sums each), and the grid is a block per K step of every tile, capped at the SM
// count (the runs must not be empty).
TEST(Sm90Launch, StreamKWorkspaceIsPerBlockOfTheGrid) {
  const auto& v = variant("bf16_gemm_sm90_128x256x64_s4_tma");
  Config config = v.config;
  config.streamK = 2;
  runtime::testing::FakeDriver fake;
  auto ctx = runtime::Context::primary(fake.driver());
  std::vector<uint64_t> ptrs = {0x7f0000000000, 0x7f1000000000, 0x7f2000000000};
  Kernel k = build(*v.program(false), config);
  const LaunchInfo& l = k.launchInfo();
  EXPECT_TRUE(l.workspacePerBlock);
  EXPECT_EQ(param(l, "ws_flags").kind, KernelParam::Kind::Workspace);
  std::map<std::string, int64_t> big{{"M", 4096}, {"N", 4096}, {"K", 4096}}, tiny{{"M", 128}, {"N", 256}, {"K", 128}};
  EXPECT_EQ(l.gridFor(big, 132)[0], 132);
  EXPECT_EQ(l.gridFor(tiny, 132)[0], 2) << "one tile of two K steps: two blocks";
  EXPECT_EQ(l.workspaceBytes(big, 132), (std::array<int64_t, 2>{132 * 8, 132 * 128 * 256 * 4}));
  EXPECT_EQ(l.workspaceBytes(tiny, 132), (std::array<int64_t, 2>{2 * 8, 2 * 128 * 256 * 4}));
  int before = fake.state().allocations;
  size_t launches = fake.state().launches.size();
  k.launch(ctx, nullptr, ptrs, {}, tiny);
  k.launch(ctx, nullptr, ptrs, {}, big);
  k.launch(ctx, nullptr, ptrs, {}, tiny);
  EXPECT_EQ(fake.state().allocations, before + 4) << "flags and partials grown once for the larger grid, then reused";
  ASSERT_EQ(fake.state().launches.size(), launches + 3);
  EXPECT_EQ(fake.state().launches[launches].grid[0], 2u);
  EXPECT_EQ(fake.state().launches[launches + 1].grid[0], 132u);
}

}  // namespace
}  // namespace kiln
