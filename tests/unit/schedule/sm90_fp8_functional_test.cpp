// sm90_ws_persistent with FP8 operands (examples::fp8RowwiseGemm: e4m3 A and K-major B, C =
// (A·B) x scale_a[m] x scale_b[n] in BF16), run by the warp-specialized simulator against a
// double-precision reference (sm90_sim_check.h). A K step is bk = 128 one-byte elements, one
// 128-byte swizzled row, and each wgmma is m64nNk32 reading both operands K-major. Ragged M, N and
// K (K a multiple of 16, not of 128), one to three consumer warpgroups, swapped operands (split
// along M and along N), clusters, split-K and stream-K, fp8_accum=promote and promote_pairs, the
// scales loaded or prefetched before the K loop; then the config and program errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <regex>
#include <string>

#include "examples/examples.h"
#include "kiln/compile.h"
#include "kiln/ir/builder.h"
#include "kiln/ir/operation.h"
#include "kiln/program_builder.h"
#include "kiln/target.h"
#include "schedule/config.h"
#include "kiln/kernel.h"
#include "kiln/runtime/launch_args.h"
#include "kiln/runtime/tensor_map.h"
#include "ops/fp8_programs.h"
#include "ops/gemm_fp8.h"
#include "tests/unit/runtime/launch_args_fixture.h"
#include "tests/unit/schedule/sm90_sim_check.h"

namespace kiln {
namespace {
using namespace sm90sim;

TEST(Sm90Fp8Functional, TilesOfOneToThreeWarpgroups) {
  check(kFp8 + "bm=128 bn=128 stages=3 warps_m=2", fp8(136, 200, 272, 3));  // ragged M, N, K
  check(kFp8 + "bm=128 bn=256 stages=2 warps_m=2", fp8(130, 264, 400, 2));  // two K steps and a tail
  check(kFp8 + "bm=64 bn=64 stages=4 warps_m=1", fp8(72, 136, 144, 3));     // the ring wraps across tiles
  check(kFp8 + "bm=192 bn=128 stages=2 warps_m=3", fp8(200, 136, 272, 2));
  // The epilogue stored straight from registers.
  check("strategy=sm90_ws_persistent bk=128 bm=128 bn=128 stages=3 warps_m=2 warps_n=1", fp8(136, 200, 272, 3));
}

TEST(Sm90Fp8Functional, SwappedOperands) {
  check(kFp8 + "swap_ab=true bm=64 bn=128 stages=4 warps_m=1", fp8(40, 264, 400, 3));  // small M
  check("strategy=sm90_ws_persistent bk=128 epilogue=tma stage_store=stmatrix swap_ab=true bm=208 bn=128 stages=2 "
        "warps_m=1 warps_n=2",
        fp8(424, 200, 144, 3));
}

TEST(Sm90Fp8Functional, ClustersAndSplits) {
  check(kFp8 + "bm=128 bn=128 stages=3 warps_m=2 cluster_m=2", fp8(264, 200, 272, 4));
  check(kFp8 + "bm=128 bn=128 stages=3 warps_m=2 cluster_n=2", fp8(136, 392, 272, 4));
  check(kFp8 + "bm=64 bn=128 stages=4 warps_m=1 split_k=2", fp8(72, 200, 528, 4));
  check(kFp8 + "bm=128 bn=128 stages=3 warps_m=2 stream_k=1", fp8(264, 264, 656, 5));
}

// fp8_accum=promote: each K step's wgmmas sum from zero, added to the f32 accumulators after
// their group is waited for, and the stage goes back at once. Alone, in ping-pong, in K slices
// and in stream-K runs (whose accumulators start at zero and may run no K step), in pairs along M
// (each stage's release goes to both blocks' producers), and on three consumer warpgroups.
TEST(Sm90Fp8Functional, PromotedSumsInRegisters) {
  check(kFp8 + "fp8_accum=promote bm=128 bn=128 stages=3 warps_m=2", fp8(136, 200, 400, 3));
  check("strategy=sm90_ws_persistent bk=128 warps_n=1 fp8_accum=promote bm=64 bn=128 stages=4 warps_m=1",
        fp8(72, 200, 272, 3));
  check(kFp8 + "fp8_accum=promote bm=64 bn=64 stages=4 warps_m=2 consumers=pingpong", fp8(136, 200, 400, 2));
  check(kFp8 + "fp8_accum=promote bm=64 bn=128 stages=4 warps_m=1 split_k=2", fp8(72, 200, 528, 4));
  check(kFp8 + "fp8_accum=promote bm=128 bn=128 stages=3 warps_m=2 stream_k=1", fp8(264, 264, 656, 5));
  check(kFp8 + "fp8_accum=promote bm=128 bn=160 stages=3 warps_m=2 cluster_m=2", fp8(264, 328, 400, 4));
  // Three consumer warpgroups of 64 x 96 (48 + 48 registers of sums each), the columns past the
  // last 64-column box stored on their own.
  check(kFp8 + "fp8_accum=promote bm=192 bn=96 stages=3 warps_m=3", fp8(200, 200, 400, 3));
}

// Tensorwise scales (ops/fp8_programs.h): the product of the two one-element scales, read once per
// tile, multiplies the f32 sums in the epilogue, with fast and promoted sums, stored through TMA and
// from registers.
TEST(Sm90Fp8Functional, TensorwiseScalesFoldIntoTheEpilogue) {
  Problem p = fp8(136, 200, 272, 3);
  p.tensorwise = true;
  check(kFp8 + "bm=128 bn=128 stages=3 warps_m=2", p);
  check(kFp8 + "fp8_accum=promote_pairs bm=128 bn=128 stages=3 warps_m=2", p);
  check(kFp8 + "fp8_accum=promote epilogue_loads=early bm=64 bn=128 stages=4 warps_m=1", p);
  check("strategy=sm90_ws_persistent bk=128 bm=128 bn=128 stages=3 warps_m=2 warps_n=1", p);
}

// Block scales (tile.dot_scaled, 1x128 x 128x128 and 1x128 x 1x128): each K step is one slice of
// 128, its sums multiplied by its rows' and columns' scales as they are promoted (slice_scales.cpp,
// sm90-promote-fp8). Single steps and pairs (an odd K step count ends in a single step), ragged M,
// N and K, 128x160 tiles (columns past a 128-wide scale block), three warpgroups, ping-pong, K
// slices and stream-K runs (their K steps from kbase), clusters.
TEST(Sm90Fp8Functional, BlockScalesPerSliceOfK) {
  for (int mode : {1, 2}) {
    auto bw = [&](int64_t m, int64_t n, int64_t k, uint32_t blocks) {
      Problem p = fp8(m, n, k, blocks);
      p.blockwise = mode;
      return p;
    };
    check(kFp8 + "fp8_accum=promote bm=128 bn=128 stages=3 warps_m=2", bw(136, 200, 400, 3));
    check(kFp8 + "fp8_accum=promote_pairs bm=128 bn=128 stages=3 warps_m=2", bw(136, 200, 400, 3));
    check(kFp8 + "fp8_accum=promote bm=128 bn=160 stages=3 warps_m=2", bw(136, 328, 272, 3));
    check(kFp8 + "fp8_accum=promote bm=192 bn=96 stages=3 warps_m=3", bw(200, 200, 272, 3));
    check(kFp8 + "fp8_accum=promote bm=64 bn=64 stages=4 warps_m=2 consumers=pingpong", bw(136, 200, 400, 2));
    check(kFp8 + "fp8_accum=promote_pairs bm=64 bn=128 stages=4 warps_m=1 split_k=2", bw(72, 200, 656, 4));
    check(kFp8 + "fp8_accum=promote bm=128 bn=128 stages=3 warps_m=2 stream_k=1", bw(264, 264, 656, 5));
    check(kFp8 + "fp8_accum=promote_pairs bm=128 bn=128 stages=3 warps_m=2 cluster_m=2", bw(264, 200, 400, 4));
    check("strategy=sm90_ws_persistent bk=128 warps_n=1 fp8_accum=promote bm=64 bn=128 stages=4 warps_m=1",
          bw(72, 200, 272, 3));
    // M off 4 (tokens come in any number): scale_a's stage copies start up to 3 rows before the
    // tile's (staged_scales.cpp), at every K block a different amount.
    check(kFp8 + "fp8_accum=promote_pairs bm=128 bn=128 stages=3 warps_m=2", bw(137, 200, 400, 3));
    check(kFp8 + "fp8_accum=promote bm=128 bn=128 stages=3 warps_m=2 stream_k=1", bw(262, 264, 656, 5));
    check("strategy=sm90_ws_persistent bk=128 warps_n=1 fp8_accum=promote bm=64 bn=128 stages=4 warps_m=1",
          bw(61, 200, 656, 3));
  }
}

// The gemm_fp8 family's K-sliced rings for block scales at small M (64x128 s8, split_k=2, single
// steps and pairs: the registered configs themselves), in both block modes: fewer rows than the
// tile (M = 41, off 4), a last tile past N, an odd K step count whose last step is 16 wide (K = 1040: 9
// steps, slices of 5 and 4, the second starting its scale rows and scale_b's stage copies at K
// block 5), and a tile with more slices than blocks per round (2 blocks: each runs 3 units).
// 1x128 x 1x128 with pairs (one consumer warpgroup: the family makes it eligible) included.
TEST(Sm90Fp8Functional, BlockScalesInKSlicesAtSmallM) {
  int ran = 0;
  for (const auto& v : ops::gemmFp8Variants()) {
    if (v.config.splitK < 2) continue;
    for (int mode : {1, 2}) {
      SCOPED_TRACE(v.name + (mode == 1 ? " 1x128 x 128x128" : " 1x128 x 1x128"));
      for (auto [m, n, k, blocks] : {std::tuple{41, 264, 1040, 4}, {64, 136, 2048, 2}}) {
        Problem p = fp8(m, n, k, uint32_t(blocks));
        p.blockwise = mode;
        check(v.config.str(), p);
        ++ran;
      }
    }
  }
  EXPECT_EQ(ran, 8);  // two registered variants, two modes, two problems
}

// Per-column scale_b (1x128 x 1x128) stored with its columns contiguous ([K / 128][N], torch's
// layout): the producer copies the tile's bn columns of the step's K block into the stage through a
// fourth tensor map (slice_scales.cpp, sharedColumnScales), and each consumer thread reads its 40
// columns (128x160) with ld.shared once the step's sums are waited for: no global load of scale_b
// in the K loop. The launch asks scale_b 16-byte aligned and N a multiple of 4 (16-byte rows), and
// refuses otherwise naming the argument (BlockScalesPerSliceOfK runs such kernels in the
// simulator, which checks every read against the copy's barrier phase, at N = 200 and 328: the
// last tile's columns past N zero-filled). Stored column-major ([N][K / 128], the columns apart),
// each column keeps its own 4-byte global load.
TEST(Sm90Fp8Functional, PerColumnScalesCopiedWithTheStage) {
  auto program = [](bool columnsContiguous) {
    ProgramBuilder p("per_column");
    auto [M, N, K] = p.dims("M", "N", "K");
    auto A = p.input("A", f8e4m3, {M, K});
    auto B = p.input("B", f8e4m3, {K, N}, /*order=*/{0, 1});
    auto SA = p.scales("scale_a", {M, K}, {1, 128}, /*order=*/{0, 1});
    auto SB = columnsContiguous ? p.scales("scale_b", {K, N}, {128, 1}) : p.scales("scale_b", {K, N}, {128, 1}, {0, 1});
    auto C = p.output("C", bf16, {M, N});
    p.tile({M, N}, [&](Coord m, Coord n) {
      Tile acc = p.zeros(f32, {m, n});
      p.reduce(K, [&](Coord k) { acc = dot_scaled(A(m, k), SA(m, k), B(k, n), SB(k, n), acc); });
      C(m, n) = cast(bf16, acc);
    });
    return p.finish();
  };
  auto count = [](const std::string& ptx, const char* re) {
    const std::regex r(re);
    return std::distance(std::sregex_iterator(ptx.begin(), ptx.end(), r), std::sregex_iterator());
  };
  for (bool contiguous : {true, false}) {
    SCOPED_TRACE(contiguous ? "columns contiguous" : "columns apart");
    auto prog = program(contiguous);
    ir::DiagnosticEngine diag;
    auto r = compile(*prog, Target::sm90a(), Config::parse(kFp8 + "fp8_accum=promote bm=128 bn=160 stages=3 warps_m=2"),
                     diag);
    ASSERT_TRUE(r) << diag.str();
    bool mapped = false;
    for (const auto& param : r->launch.params) mapped |= param.name == "tmap_scale_b";
    EXPECT_EQ(mapped, contiguous);
    // 160 columns over 4 lanes: 40 a thread a K step, from the stage or from global memory.
    // (and scale_a's 2 rows a thread from the stage too: sharedRowScales)
    EXPECT_EQ(count(r->ptx, R"(ld\.shared\.f32)"), contiguous ? 42 : 2);
    EXPECT_EQ(count(r->ptx, R"(ld\.global(\.[a-z0-9]+)*\.v2\.f32)"), 0);
    if (!contiguous) continue;
    runtime::KernelSignature sig = signatureOf(*prog->body().front(), r->launch);
    runtime::LaunchArgs args;
    args.dims = {{"M", 256}, {"N", 320}, {"K", 512}};
    args.tensors = {{0x100000, ir::ScalarType::F8E4M3, {256, 512}, {}},
                    {0x200000, ir::ScalarType::F8E4M3, {512, 320}, {}},
                    {0x300000, ir::ScalarType::F32, {256, 4}, {}},
                    {0x400008, ir::ScalarType::F32, {4, 320}, {}},
                    {0x500000, ir::ScalarType::BF16, {256, 320}, {}}};
    const runtime::testing::Messages got = runtime::testing::check(sig, args);
    ASSERT_EQ(got.size(), 1u) << ::testing::PrintToString(got);
    EXPECT_EQ(got[0].rfind("argument 'scale_b': pointer 0x400008 is not aligned to 16 bytes", 0), 0u) << got[0];
    args.tensors[3].ptr = 0x400000;
    EXPECT_EQ(runtime::testing::check(sig, args), runtime::testing::Messages{});
    args.dims["N"] = 322;
    for (size_t i : {1, 3, 4}) args.tensors[i].shape.back() = 322;
    const runtime::testing::Messages rows = runtime::testing::check(sig, args);
    EXPECT_NE(std::find(rows.begin(), rows.end(),
                        "argument 'scale_b': stride of dim 0 (K) is 322 elements = 1288 bytes (contiguous layout), not "
                        "a multiple of 16 bytes; every row must start 16-byte aligned (TMA and 16-byte vector loads): "
                        "pad rows to a multiple of 4 elements"),
              rows.end())
        << ::testing::PrintToString(rows);
    // scale_a's rows of a K block through a flat map: any M (staged_scales.cpp).
    args.dims = {{"M", 258}, {"N", 320}, {"K", 512}};
    for (size_t i : {1, 3, 4}) args.tensors[i].shape.back() = 320;
    args.tensors[0].shape[0] = args.tensors[2].shape[0] = args.tensors[4].shape[0] = 258;
    EXPECT_EQ(runtime::testing::check(sig, args), runtime::testing::Messages{});
  }
}

// 128x128-block scale_b (1x128 x 128x128) stored [N blocks][K blocks] (K contiguous, the layout
// fp8_programs.h and DeepGEMM use): the producer copies, per stage, one 16-byte box per block the
// tile's columns span, from the block's element of the step's K block, through a flat tensor map
// (the stored elements as one row, so a box may start at any element: a row of K / 128 floats is
// 16-byte aligned only where K / 128 % 4 == 0), and the consumers read it with ld.shared: with
// scale_a's rows from the stage too, no global load of a scale is left in the K loop.
// BlockScalesPerSliceOfK runs these kernels in the simulator (K / 128 = 3 and 4; N = 200 and 328:
// a 160-column tile's second block past N). The launch asks scale_b 16-byte aligned (the check of
// its tensor map, which names it), and nothing of K.
TEST(Sm90Fp8Functional, BlockScalesOfBCopiedWithTheStage) {
  auto program = ops::fp8GemmProgram({ops::Fp8Scaling::Block1x128x128x128}, "blockwise");
  auto count = [](const std::string& ptx, const char* re) {
    const std::regex r(re);
    return std::distance(std::sregex_iterator(ptx.begin(), ptx.end(), r), std::sregex_iterator());
  };
  for (int bn : {128, 160}) {
    SCOPED_TRACE(bn);
    ir::DiagnosticEngine diag;
    auto r = compile(*program, Target::sm90a(),
                     Config::parse(kFp8 + "fp8_accum=promote bm=128 bn=" + std::to_string(bn) + " stages=3 warps_m=2"),
                     diag);
    ASSERT_TRUE(r) << diag.str();
    auto param = [&](const std::string& name) -> const KernelParam* {
      for (const auto& p : r->launch.params)
        if (p.name == name) return &p;
      return nullptr;
    };
    const KernelParam* map = param("tmap_scale_b");
    ASSERT_NE(map, nullptr);
    EXPECT_TRUE(map->flat);
    EXPECT_EQ(map->box, (std::vector<int64_t>{4, 1}));
    // scale_a's rows: a box of bm + 4 floats from the 16-byte boundary at or before the tile's first.
    const KernelParam* mapA = param("tmap_scale_a");
    ASSERT_NE(mapA, nullptr);
    EXPECT_TRUE(mapA->flat);
    EXPECT_EQ(mapA->box, (std::vector<int64_t>{132, 1}));
    // Per K step and thread: 2 rows of scale_a and a block (two at 160 columns) of scale_b, all
    // from the stage; the only global loads left are the epilogue's (none: a bf16 store).
    EXPECT_EQ(count(r->ptx, R"(ld\.shared\.f32)"), bn == 160 ? 4 : 3);
    EXPECT_EQ(count(r->ptx, R"(ld\.global)"), 0);
    // The producer's copies of a stage: A, B, scale_a's row and one box per block of scale_b.
    EXPECT_EQ(count(r->ptx, R"(cp\.async\.bulk\.tensor\.2d\.shared::cluster)"), bn == 160 ? 5 : 4);
    if (bn != 160) continue;
    runtime::KernelSignature sig = signatureOf(*program->body().front(), r->launch);
    runtime::LaunchArgs args;
    args.dims = {{"M", 256}, {"N", 328}, {"K", 272}};
    args.tensors = {{0x100000, ir::ScalarType::F8E4M3, {256, 272}, {}},
                    {0x200000, ir::ScalarType::F8E4M3, {272, 328}, {}},
                    {0x300000, ir::ScalarType::F32, {256, 3}, {}},
                    {0x400004, ir::ScalarType::F32, {3, 3}, {}},
                    {0x500000, ir::ScalarType::BF16, {256, 328}, {}}};
    // K / 128 = 3 (12-byte rows of scale_b): the arguments pass, and the flat map is 9 elements
    // long and valid where a 2-D map of [3][3] would not be (its row stride 12 bytes).
    EXPECT_EQ(runtime::testing::check(sig, args), runtime::testing::Messages{});
    std::vector<uint64_t> ptrs;
    for (const auto& t : args.tensors) ptrs.push_back(t.ptr);
    runtime::TensorMapDesc d = tensorMapDescFor(*map, sig, ptrs, args.dims);
    EXPECT_EQ(d.globalDims, (std::vector<uint64_t>{9, 1}));
    EXPECT_EQ(d.globalStrides, (std::vector<uint64_t>{48}));
    ir::DiagnosticEngine mapDiag;
    EXPECT_FALSE(runtime::validateTensorMap(d, mapDiag));  // the map's start, as Kernel::validate checks it
    EXPECT_EQ(mapDiag.str().find("tensor map 'tmap_scale_b': global address 0x400004 is not 16-byte aligned") ==
                  std::string::npos,
              false)
        << mapDiag.str();
    d.globalAddress = 0x400000;
    ir::DiagnosticEngine okDiag;
    EXPECT_TRUE(runtime::validateTensorMap(d, okDiag)) << okDiag.str();
    // M = 61: scale_a's flat map of 3 x 61 floats is valid, where a 2-D map's rows of 244 bytes
    // would not be, and the launch asks nothing of M.
    args.dims["M"] = 61;
    args.tensors[0].shape[0] = args.tensors[2].shape[0] = args.tensors[4].shape[0] = 61;
    args.tensors[3].ptr = 0x400000;
    EXPECT_EQ(runtime::testing::check(sig, args), runtime::testing::Messages{});
    ptrs.clear();
    for (const auto& t : args.tensors) ptrs.push_back(t.ptr);
    runtime::TensorMapDesc da = tensorMapDescFor(*mapA, sig, ptrs, args.dims);
    EXPECT_EQ(da.globalDims, (std::vector<uint64_t>{183, 1}));
    ir::DiagnosticEngine aDiag;
    EXPECT_TRUE(runtime::validateTensorMap(da, aDiag)) << aDiag.str();
  }
}

// Block scales loaded an iteration ahead (sm90-promote-fp8) read the next iteration's K steps
// only where they exist: each such load is predicated on kt < ksteps as well as on its row or
// column. With that part of the predicate dropped, the last iteration's loads of scale_a (stored
// [K blocks][M]: the next K block is past the tensor) read outside it, which the simulator reports.
TEST(Sm90Fp8Functional, ScalesLoadedAheadStayInsideTheKRange) {
  Problem p = fp8(136, 200, 400, 3);
  p.blockwise = 1;
  for (const char* accum : {"promote", "promote_pairs"}) {
    int dropped = 0;
    auto dropKRange = [&](ir::Operation& k) {
      k.walk([&](ir::Operation& op) {
        if (!op.is("kern.ld_global")) return;
        const ir::Operation* on = op.operand(1)->definingOp();
        if (!on || !on->is("arith.andi") || !on->operand(1)->definingOp() ||
            !on->operand(1)->definingOp()->is("arith.cmpi") || on->operand(1)->definingOp()->stringAttr("pred") != "slt")
          return;
        op.setOperand(1, on->operand(0));
        ++dropped;
      });
    };
    // Two blocks an SM: the scales stay in registers (no copy with the stage, slice_scales.cpp
    // plainScaleOperands), and so the loads an iteration ahead.
    const std::string cfg = std::string("strategy=sm90_ws_persistent bk=128 warps_n=1 epilogue=direct fp8_accum=") +
                            accum + " bm=64 bn=32 stages=3 warps_m=1 blocks_per_sm=2";
    check(cfg, p);
    check(cfg, p, dropKRange, "global access");
    EXPECT_GT(dropped, 0) << accum << ": no scale load predicated on the K range";
  }
}

// fp8_accum=promote_pairs: two K steps in flight, the first's sums added while the second's
// wgmmas run; an odd K step count ends in a loop of one single step (3 K steps: one pair and the
// tail; 2: the pair alone; 5 with a ring of 3: the pairs wrap the ring), and split-K slices and
// stream-K runs of every parity.
TEST(Sm90Fp8Functional, PromotedSumsInPairsOfSteps) {
  for (int64_t k : {272, 256, 656})
    check(kFp8 + "fp8_accum=promote_pairs bm=128 bn=128 stages=3 warps_m=2", fp8(136, 200, k, 3));
  check("strategy=sm90_ws_persistent bk=128 warps_n=1 fp8_accum=promote_pairs bm=64 bn=128 stages=4 warps_m=1",
        fp8(72, 200, 400, 3));
  check(kFp8 + "fp8_accum=promote_pairs bm=64 bn=128 stages=4 warps_m=1 split_k=2", fp8(72, 200, 656, 4));
  check(kFp8 + "fp8_accum=promote_pairs bm=128 bn=128 stages=3 warps_m=2 stream_k=1", fp8(264, 264, 656, 5));
}

// epilogue_loads=early: scale_a and scale_b loaded before the K loop, with fast and promoted sums
// (128x160: the columns past the last 64-column box), alone and in ping-pong.
TEST(Sm90Fp8Functional, ScalesLoadedBeforeTheKLoop) {
  const std::string early = " epilogue_loads=early";
  check(kFp8 + "bm=128 bn=128 stages=3 warps_m=2" + early, fp8(136, 200, 272, 3));
  check(kFp8 + "fp8_accum=promote bm=128 bn=160 stages=3 warps_m=2" + early, fp8(136, 328, 400, 3));
  check(kFp8 + "fp8_accum=promote_pairs bm=64 bn=128 stages=4 warps_m=1" + early, fp8(72, 200, 400, 3));
  check(kFp8 + "bm=128 bn=128 stages=3 warps_m=2 consumers=pingpong" + early, fp8(264, 136, 272, 2));
  // The family's 128x128 promote_pairs tile as registered (six stages, pairs stored through TMA,
  // 2026-12-06: its 36 scale values a thread held through the K loop beside 192 sums), rowwise and
  // tensorwise, four tiles a block over an odd count of K steps (pairs and the last single step).
  const std::string pairs =
      "strategy=sm90_ws_persistent bm=128 bn=128 bk=128 stages=6 warps_m=2 warps_n=1 epilogue=tma "
      "fp8_accum=promote_pairs l2_hint=reuse" + early;
  check(pairs, fp8(264, 264, 528, 2));  // five K steps: two pairs and one alone, the last ragged
  Problem tensorwise = fp8(264, 264, 528, 2);
  tensorwise.tensorwise = true;
  check(pairs, tensorwise);
}

// epilogue_loads=prefetch: at each tile's start its warpgroups prefetch into L1 the lines of the
// scales the epilogue then loads, inside the tensors (the simulator checks every prefetched
// address lies in a buffer). Every line a block's epilogue reads must have been prefetched by that
// block: ragged tiles, 128x160 (a six-line span), pairs along M, a warpgroup per tile (ping-pong),
// swapped operands, K slices, and the BF16 program's row scale and column bias stored from
// registers.
TEST(Sm90Fp8Functional, ScaleLinesPrefetchedBeforeTheKLoop) {
  auto covered = [](const std::string& cfg, const Problem& p) {
    CacheLines lines;
    check(cfg, p, {}, "", nullptr, &lines);
    size_t loaded = 0;
    for (size_t b = 0; b < lines.loaded.size(); ++b) {
      loaded += lines.loaded[b].size();
      for (uint64_t line : lines.loaded[b])
        EXPECT_TRUE(lines.prefetched[b].count(line)) << cfg << ": block " << b << " read line " << line
                                                     << " that it did not prefetch";
    }
    EXPECT_GT(loaded, 0u) << cfg;
  };
  const std::string pf = " epilogue_loads=prefetch";
  covered(kFp8 + "fp8_accum=promote bm=128 bn=160 stages=3 warps_m=2" + pf, fp8(136, 328, 400, 3));
  covered(kFp8 + "fp8_accum=promote bm=128 bn=160 stages=3 warps_m=2 cluster_m=2" + pf, fp8(264, 328, 400, 4));
  covered(kFp8 + "fp8_accum=promote_pairs bm=128 bn=128 stages=3 warps_m=2" + pf, fp8(264, 200, 272, 3));
  covered(kFp8 + "bm=128 bn=128 stages=3 warps_m=2 consumers=pingpong" + pf, fp8(264, 136, 272, 2));
  covered(kFp8 + "swap_ab=true bm=64 bn=128 stages=4 warps_m=1" + pf, fp8(40, 264, 400, 3));
  covered(kFp8 + "fp8_accum=promote bm=64 bn=128 stages=4 warps_m=1 split_k=2" + pf, fp8(72, 200, 528, 4));
  Problem scaled{424, 200, 136, false, 0, 3};
  scaled.scaled = true;
  covered(std::string(k128) + pf, scaled);
  // The control: with the scales loaded late nothing is prefetched, so the check above can fail.
  CacheLines late;
  check(kFp8 + "fp8_accum=promote bm=128 bn=160 stages=3 warps_m=2", fp8(136, 328, 400, 3), {}, "", nullptr, &late);
  for (const auto& block : late.prefetched) EXPECT_TRUE(block.empty());
}

// The prefetches' predicates keep them inside the tensors: with every one forced true, the threads
// past a scale's lines (their line index below 0 for the second scale) address before the first
// tile's span, which the simulator reports.
TEST(Sm90Fp8Functional, PrefetchesOutsideTheScalesAreCaught) {
  auto unpredicated = [](ir::Operation& kernel) {
    std::vector<ir::Operation*> prefetches;
    kernel.walk([&](ir::Operation& op) {
      if (op.is("kern.prefetch_global")) prefetches.push_back(&op);
    });
    ASSERT_FALSE(prefetches.empty());
    for (ir::Operation* op : prefetches) {
      ir::OpBuilder b;
      b.setInsertionPoint(op);
      ir::Operation* on = b.create("arith.constant", {}, {ir::Type::scalar(ir::ScalarType::I1)}, {{"value", true}});
      op->setOperand(1, on->result());
    }
  };
  check(kFp8 + "fp8_accum=promote bm=128 bn=160 stages=3 warps_m=2 epilogue_loads=prefetch", fp8(136, 328, 400, 3),
        unpredicated, "global access");
}

// The K step's sums are added only after their group is waited for: with the waits that retire
// them relaxed to leave one group pending, the simulator reports the first addition as a read of
// a wgmma result in flight (the PTX ISA leaves its value undefined).
TEST(Sm90Fp8Functional, SumsReadBeforeTheirWaitAreCaught) {
  for (const char* accum : {"promote", "promote_pairs"}) {
    const std::string cfg = kFp8 + "fp8_accum=" + accum + " bm=128 bn=128 stages=3 warps_m=2";
    int relaxed = 0;
    auto relaxWaits = [&](ir::Operation& k) {
      k.walk([&](ir::Operation& op) {
        // The waits inside a K loop's body (the one after the loop stays).
        ir::Operation* parent = op.parentBlock() ? op.parentBlock()->parentOp() : nullptr;
        if (op.is("kern.wgmma_wait") && parent && parent->is("scf.for")) {
          op.setAttr("pending", ir::Attribute(op.intAttr("pending", 0) + 1));
          ++relaxed;
        }
      });
    };
    check(cfg, fp8(136, 200, 400, 2), relaxWaits, "reads a wgmma result before its group was waited for");
    EXPECT_GT(relaxed, 0) << accum << ": no wgmma_wait in a K loop to relax";
  }
}

// The fast K loop carries its accumulators in flight across iterations and out of the loop; the
// wait after the loop retires them. With that wait relaxed to leave a group pending, the epilogue
// reads them in flight, which the simulator reports (it follows results through loops).
TEST(Sm90Fp8Functional, AccumulatorsCarriedOutOfTheLoopInFlightAreCaught) {
  int relaxed = 0;
  auto relaxWaitAfterLoop = [&](ir::Operation& k) {
    k.walk([&](ir::Operation& op) {
      ir::Block* blk = op.parentBlock();
      if (!op.is("kern.wgmma_wait") || !blk) return;
      auto it = blk->find(&op);
      if (it != blk->operations().begin() && (*std::prev(it))->is("scf.for")) {
        op.setAttr("pending", ir::Attribute(int64_t{1}));
        ++relaxed;
      }
    });
  };
  check(kFp8 + "bm=128 bn=128 stages=3 warps_m=2", fp8(136, 200, 400, 2), relaxWaitAfterLoop,
        "reads a wgmma result before its group was waited for");
  EXPECT_GT(relaxed, 0) << "no wgmma_wait right after a K loop to relax";
}

TEST(Sm90Fp8Functional, ConfigAndProgramErrorsSayWhatToChange) {
  auto program = examples::fp8RowwiseGemm();
  EXPECT_NE(compileError(*program, "strategy=sm90_ws_persistent bm=128 bn=128 bk=64 stages=4 warps_m=2 warps_n=1")
                .find("bk=64 is not supported by sm90_ws_persistent: use bk=128 (one 128-byte swizzled row of FP8 "
                      "elements per TMA box row)"),
            std::string::npos);
  EXPECT_NE(compileError(*program, kFp8 + "fp8_accum=promote bm=128 bn=256 stages=3 warps_m=2")
                .find("bm=128 bn=256 gives each consumer thread 256 f32 accumulators (with fp8_accum=promote's K-step "
                      "sums); at most 192 fit"),
            std::string::npos);
  EXPECT_NE(compileError(*examples::gemmBf16(), "strategy=sm90_ws_persistent bm=128 bn=128 bk=64 stages=4 warps_m=2 "
                                                "warps_n=1 fp8_accum=promote")
                .find("fp8_accum=promote sums FP8 wgmma in registers; this program's operands are 16-bit"),
            std::string::npos);
  // wgmma has no transposed 8-bit form: a row-major FP8 B is refused with the layout to use.
  ProgramBuilder p("fp8_row_major_b");
  auto [M, N, K] = p.dims("M", "N", "K");
  auto A = p.input("A", f8e4m3, {M, K});
  auto B = p.input("B", f8e4m3, {K, N});
  auto C = p.output("C", bf16, {M, N});
  p.tile({M, N}, [&](Coord m, Coord n) {
    Tile acc = p.zeros(f32, {m, n});
    p.reduce(K, [&](Coord k) { acc = dot(A(m, k), B(k, n), acc); });
    C(m, n) = cast(bf16, acc);
  });
  auto rowMajorB = p.finish();
  EXPECT_NE(compileError(*rowMajorB, "strategy=sm90_ws_persistent bm=128 bn=128 bk=128 stages=4 warps_m=2 warps_n=1")
                .find("needs an FP8 B stored K-major (order = [0, 1]): wgmma reads 8-bit operands K-major only"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln
