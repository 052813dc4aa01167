// GPU correctness of issue 41's kernels: the FP8 GEMM in every scaling mode (tensorwise, rowwise,
// 1x128 x 128x128 and 1x128 x 1x128 blocks; e4m3 and e5m2 A; BF16 and F32 out) and the ragged
// grouped GEMM in both of its sm90 layouts (offsets: MoE forward; counts: the masked layout), BF16
// and FP8 with block scales. Each is compiled with the schedule Kiln picks for its dims
// (ops::defaultSchedule, what kiln.ops uses), launched on the interpreter's seeded random inputs
// with the output poisoned, and compared with the tile-IR interpreter: the same tolerance as the
// other GPU tests where a row is written, bit for bit poison where the interpreter wrote nothing
// (rows no group owns). Groups along K (the weight gradient) likewise, BF16 and FP8 with 1x128
// scales along K; stream-K over ragged groups' tiles, launched twice for the same bits. The
// TMA-store epilogue of an f32 output (32-column boxes staged by st.shared.v2), dense and along K,
// against the interpreter and bit for bit against the direct store of the same kernel. Skips,
// saying why, where there is no Hopper GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <memory>

#include "bench/bench_support.h"
#include "interp/random_inputs.h"
#include "kiln/interp/interpreter.h"
#include "kiln/kernel.h"
#include "kiln/program_builder.h"
#include "kiln/runtime/driver.h"
#include "kiln/target.h"
#include "ops/default_schedule.h"
#include "ops/fp8_programs.h"
#include "ops/gemm_bf16.h"
#include "ops/gemm_fp8.h"
#include "ops/grouped_programs.h"
#include "tests/gpu/ops/gemm_reference.h"
#include "tests/unit/testing/example_runs.h"

namespace kiln {
namespace {

using ir::ScalarType;

class Fp8ModesGroupedGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!testing::needHopper(&why)) GTEST_SKIP() << "no Hopper GPU: " << why;
  }
};

// Runs `module` at `dims` with the picked schedule; `bounds` (name, values) overwrite the seeded
// group bounds. Checks C against the interpreter (poison where it wrote nothing).
// `forced`: that config instead of the pick.
// `again`: launch a second time on a poisoned C and expect the same bits (stream-K's fixed order).
// `out`: receives the kernel's C.
void matches(const ir::Module& module, const std::map<std::string, int64_t>& dims, const std::string& boundsName = "",
             const std::vector<int32_t>& bounds = {}, const Config* forced = nullptr, bool again = false,
             interp::HostTensor* out = nullptr) {
  const ir::Operation& program = *module.body().front();
  const ops::DefaultSchedule pick = ops::defaultSchedule(program, Target::sm90a(), dims);
  SCOPED_TRACE(pick.why);
  ASSERT_TRUE(forced || pick.fromFamily) << pick.why;
  ir::DiagnosticEngine diag;
  auto kernel = Kernel::build(module, Target::sm90a(), forced ? *forced : pick.config, diag);
  ASSERT_TRUE(kernel) << diag.str();
  auto args = interp::generateArguments(program, dims, 41);
  if (!boundsName.empty()) std::memcpy(args.tensors.at(boundsName).bytes.data(), bounds.data(), bounds.size() * 4);
  interp::HostTensor& want = args.tensors.at("C");
  std::memset(want.bytes.data(), 0xFF, want.bytes.size());
  ASSERT_TRUE(interp::run(program, args.request, diag)) << diag.str();

  runtime::Context ctx = runtime::Context::primary(*runtime::Driver::get());
  std::vector<std::unique_ptr<bench::DeviceBuffer>> buffers;
  std::vector<uint64_t> pointers;
  for (const auto& op : program.body().operations()) {
    if (!op->is("tile.input") && !op->is("tile.output")) continue;
    const std::string name = op->stringAttr("name");
    const interp::HostTensor& t = args.tensors.at(name);
    buffers.push_back(std::make_unique<bench::DeviceBuffer>(t.bytes.size()));
    if (name == "C")
      bench::check(cudaMemset(buffers.back()->ptr, 0xFF, t.bytes.size()), "poison");
    else
      bench::check(cudaMemcpy(buffers.back()->ptr, t.bytes.data(), t.bytes.size(), cudaMemcpyHostToDevice), name.c_str());
    pointers.push_back(uint64_t(buffers.back()->ptr));
  }
  kernel->launch(ctx, nullptr, pointers, {}, dims);
  bench::check(cudaDeviceSynchronize(), "kernel");
  interp::HostTensor got = want;
  bench::check(cudaMemcpy(got.bytes.data(), buffers.back()->ptr, got.bytes.size(), cudaMemcpyDeviceToHost), "C");
  if (again) {
    bench::check(cudaMemset(buffers.back()->ptr, 0xFF, got.bytes.size()), "poison");
    kernel->launch(ctx, nullptr, pointers, {}, dims);
    bench::check(cudaDeviceSynchronize(), "kernel");
    std::vector<uint8_t> second(got.bytes.size());
    bench::check(cudaMemcpy(second.data(), buffers.back()->ptr, second.size(), cudaMemcpyDeviceToHost), "C");
    EXPECT_TRUE(second == got.bytes) << "a second launch gave other bits";
  }
  if (out) *out = got;
  if (boundsName.empty()) {
    EXPECT_EQ(testing::compareToInterpreter("C", want, got), "");
    return;
  }
  const int64_t n = interp::numElements(want);
  const int bytes = int(want.bytes.size() / size_t(n));
  double scale = 0;
  for (int64_t i = 0; i < n; ++i)
    if (double v = interp::getElement(want, i); std::isfinite(v)) scale = std::max(scale, std::fabs(v));
  ASSERT_GT(scale, 0) << "the interpreter wrote no row";
  const double ulp = testing::relativeUlp(want.dtype), atol = std::ldexp(scale, -10);
  int bad = 0;
  for (int64_t i = 0; i < n && bad < 8; ++i) {
    const bool poison = std::memcmp(want.bytes.data() + i * bytes, "\xFF\xFF\xFF\xFF", size_t(bytes)) == 0;
    const double r = interp::getElement(want, i), g = interp::getElement(got, i);
    const bool ok = poison ? std::memcmp(got.bytes.data() + i * bytes, "\xFF\xFF\xFF\xFF", size_t(bytes)) == 0
                           : std::fabs(g - r) <= ulp * std::fabs(r) + atol;
    if (!ok && ++bad)
      ADD_FAILURE() << "C element " << i << " = " << g << ", interpreter "
                    << (poison ? "left it unwritten" : std::to_string(r));
  }
}

TEST_F(Fp8ModesGroupedGpu, EveryScalingModeMatchesTheInterpreter) {
  using S = ops::Fp8Scaling;
  for (S mode : {S::Tensorwise, S::Rowwise, S::Block1x128x128x128, S::Block1x128x1x128})
    for (ScalarType a : {ScalarType::F8E4M3, ScalarType::F8E5M2})
      for (ScalarType out : {ScalarType::BF16, ScalarType::F32}) {
        SCOPED_TRACE(std::string(ops::fp8ScalingName(mode)) + (a == ScalarType::F8E5M2 ? " e5m2" : " e4m3") +
                     (out == ScalarType::F32 ? " f32" : " bf16"));
        auto module = ops::fp8GemmProgram({mode, a, ScalarType::F8E4M3, out}, "fp8_modes");
        // Ragged against the tiles, small M, and a long K (scales per 128-wide slice of it).
        for (auto [m, n, k] : {std::tuple{200, 136, 1024}, {64, 1032, 1024}, {264, 392, 4096}})
          matches(*module, {{"M", m}, {"N", n}, {"K", k}});
      }
}

// Every gemm_fp8 variant eligible for block scales, not only the picks, in both block modes: the
// promoted loops' scales carried an iteration ahead (pairs, and an odd K step count's tail), a
// 160-column tile's scale_b from two blocks (N = 392: tiles across blocks 0-1, 1-2 and 2-3, the
// last past N), per-column scales addressed from the thread's first column (columns past N).
TEST_F(Fp8ModesGroupedGpu, EveryBlockwiseVariantMatchesTheInterpreter) {
  using S = ops::Fp8Scaling;
  for (S mode : {S::Block1x128x128x128, S::Block1x128x1x128}) {
    auto module = ops::fp8GemmProgram({mode}, "fp8_blockwise");
    ops::Fp8GemmProblem p{4096, 4096, 4096};
    p.scaling = mode;
    for (const auto& v : ops::gemmFp8Variants()) {
      if (!v.eligible(p, Target::sm90a())) continue;
      SCOPED_TRACE(v.name + " " + std::string(ops::fp8ScalingName(mode)));
      for (auto [m, n, k] : {std::tuple{264, 392, 1152}, {64, 520, 1024}})
        matches(*module, {{"M", m}, {"N", n}, {"K", k}}, "", {}, &v.config);
    }
  }
}

// Block scales at small M in K slices (issue 41, 2026-12-06): the 64x128 ring in two K slices
// (the pairs in both modes; 1x128 x 1x128 runs pairs on its one consumer warpgroup), the family's
// pick at M = 64 until its scales came from the stage (GPU run 13: the unsplit rings then ran
// 4-6% ahead), a long K (64 steps: slices of 32) and an odd K step count whose last step is 16
// wide (17 steps: 9 and 8, the second slice's last step past K reading no scale), fewer rows than
// the tile; each launched twice on a poisoned C (the slices' flags reset for the next launch, the
// finisher adds its peer's sums in a fixed order: the same bits). Then the family's pick there.
TEST_F(Fp8ModesGroupedGpu, SmallMBlockScalesInKSlices) {
  using S = ops::Fp8Scaling;
  const ops::Fp8GemmVariant* slices = ops::findGemmFp8Variant("fp8_gemm_sm90_64x128x128_s8_tma_sk2_pairs");
  ASSERT_NE(slices, nullptr);
  for (S mode : {S::Block1x128x128x128, S::Block1x128x1x128}) {
    SCOPED_TRACE(std::string(ops::fp8ScalingName(mode)));
    auto module = ops::fp8GemmProgram({mode}, "fp8_small_m");
    for (auto [m, n, k] : {std::tuple{64, 1024, 8192}, {40, 392, 2064}}) {
      const std::map<std::string, int64_t> dims = {{"M", m}, {"N", n}, {"K", k}};
      matches(*module, dims, "", {}, &slices->config, true);
      matches(*module, dims, "", {}, nullptr, true);
    }
  }
}

// Block scales at M off 4 (tokens come in any number): scale_a's rows come into the stages through
// a flat map whose boxes start up to 3 rows before the tile's, a different amount every K block
// (sm90 staged_scales.cpp; GemmFp8Gates.BlockScalesAskNothingOfM). One row, 61 and 130 rows, in
// both block modes, by the family's pick, 128x160 and the 64x128 ring, against the interpreter.
TEST_F(Fp8ModesGroupedGpu, BlockScalesAtMOffFour) {
  for (ops::Fp8Scaling mode : {ops::Fp8Scaling::Block1x128x128x128, ops::Fp8Scaling::Block1x128x1x128}) {
    SCOPED_TRACE(mode == ops::Fp8Scaling::Block1x128x128x128 ? "1x128 x 128x128" : "1x128 x 1x128");
    auto module = ops::fp8GemmProgram({mode}, "fp8_m_off_four");
    for (int64_t m : {1, 61, 130}) {
      const std::map<std::string, int64_t> dims = {{"M", m}, {"N", 392}, {"K", 1152}};
      matches(*module, dims);
      for (const char* name : {"fp8_gemm_sm90_128x160x128_s4_tma", "fp8_gemm_sm90_64x128x128_s8_tma_pairs"})
        matches(*module, dims, "", {}, &ops::findGemmFp8Variant(name)->config);
    }
  }
}

// Groups of 0 (an empty expert), 1, 77 and 700 rows, tiles shared between groups, rows past the
// last offset that no group owns; with counts, groups of every fill of their capacity.
TEST_F(Fp8ModesGroupedGpu, RaggedGroupsMatchTheInterpreter) {
  using L = ops::GroupedGemmSpec::Layout;
  for (ScalarType t : {ScalarType::BF16, ScalarType::F8E4M3}) {
    SCOPED_TRACE(t == ScalarType::BF16 ? "bf16" : "fp8 1x128 x 128x128");
    auto offsets = ops::groupedGemmProgram({L::Offsets, t, ScalarType::BF16}, "moe");
    matches(*offsets, {{"G", 6}, {"M", 1200}, {"N", 1024}, {"K", 1024}}, "offsets", {0, 1, 78, 778, 900, 1100});
    auto masked = ops::groupedGemmProgram({L::Masked, t, ScalarType::BF16}, "moe_masked");
    matches(*masked, {{"G", 4}, {"M", 512}, {"N", 768}, {"K", 2048}}, "counts", {0, 512, 129, 7});
  }
}

// kiln_grouped_bench's masked FP8 case (counts 160, 208, 32, 192) at its capacity of 208 rows, not
// a multiple of the 128-row tile (so each group's A, scale_a and C start off the tiles of the one
// before), with its N and a shorter K.
TEST_F(Fp8ModesGroupedGpu, MaskedCapacityOffTheTile) {
  using L = ops::GroupedGemmSpec::Layout;
  for (ScalarType t : {ScalarType::BF16, ScalarType::F8E4M3}) {
    SCOPED_TRACE(t == ScalarType::BF16 ? "bf16" : "fp8 1x128 x 128x128");
    auto masked = ops::groupedGemmProgram({L::Masked, t, ScalarType::BF16}, "moe_masked");
    matches(*masked, {{"G", 4}, {"M", 208}, {"N", 4096}, {"K", 1024}}, "counts", {160, 208, 32, 192});
  }
}

// The benchmark's MoE in miniature (8 experts of 64 to 256 rows, more tiles than SMs along N): its
// full size (512-2048 rows, N = 4096, K = 7168) is checked by kiln_grouped_bench against cuBLAS.
TEST_F(Fp8ModesGroupedGpu, MoeOfEightExperts) {
  using L = ops::GroupedGemmSpec::Layout;
  const std::vector<int32_t> ends = {64, 320, 448, 544, 800, 896, 1088, 1280};
  for (ScalarType t : {ScalarType::BF16, ScalarType::F8E4M3}) {
    auto module = ops::groupedGemmProgram({L::Offsets, t, ScalarType::BF16}, "moe");
    matches(*module, {{"G", 8}, {"M", 1280}, {"N", 4224}, {"K", 512}}, "offsets", ends);
  }
}

// Stream-K over the groups' tiles (docs/grouped-gemm.md, "The last wave"): the family's MoE pick
// (128x256, stream_k=1) where the groups' 17 tile rows x 10 columns make 170 tiles, a wave of 132
// and 38 whose K steps (16 each) are shared out over every SM; an empty group, a group of 100
// rows (under a tile), rows past the last offset no group owns. Launched twice: the finishers add
// their peers' sums in a fixed order, so the bits must not change. Then the masked layout.
TEST_F(Fp8ModesGroupedGpu, RaggedStreamKSharesOutTheLastWave) {
  using L = ops::GroupedGemmSpec::Layout;
  const ops::GemmVariant* v = ops::findGemmBf16Variant("bf16_gemm_sm90_128x256x64_s4_tma_streamk1");
  ASSERT_NE(v, nullptr);
  auto module = ops::groupedGemmProgram({L::Offsets, ScalarType::BF16, ScalarType::BF16}, "moe");
  matches(*module, {{"G", 8}, {"M", 1900}, {"N", 2560}, {"K", 1024}}, "offsets",
          {0, 100, 356, 620, 1000, 1100, 1390, 1800}, &v->config, true);
  auto masked = ops::groupedGemmProgram({L::Masked, ScalarType::BF16, ScalarType::BF16}, "moe_masked");
  matches(*masked, {{"G", 4}, {"M", 1024}, {"N", 2560}, {"K", 1024}}, "counts", {0, 1024, 129, 900}, &v->config,
          true);
}

// The grouped raster's bands stop at each group's end (docs/grouped-gemm.md, "Bands that stop at
// group ends"): an empty group, a group of one row, one of 100 (under a tile), one of 2100 rows (17
// tile rows of 128: bands of 8 or 16 of them, its last band of one), another empty group, groups
// of 1099 and 540 rows, rows past the last offset that no group owns; 33 tile rows x 6 columns = 198 tiles, so
// the stream-K kernels share out a partial second wave. The BF16 MoE pick (stream-K, group_m 16),
// its group_m 8 twin (both launched twice for the same bits), the data-parallel rival with group_m
// 16, and the FP8 blockwise pick, each against the interpreter.
TEST_F(Fp8ModesGroupedGpu, RaggedBandsStopAtGroupEnds) {
  using L = ops::GroupedGemmSpec::Layout;
  const std::map<std::string, int64_t> dims = {{"G", 7}, {"M", 4000}, {"N", 1536}, {"K", 256}};
  const std::vector<int32_t> ends = {0, 1, 101, 2201, 2201, 3300, 3840};
  auto bf16 = ops::groupedGemmProgram({L::Offsets, ScalarType::BF16, ScalarType::BF16}, "moe");
  for (const char* name : {"bf16_gemm_sm90_128x256x64_s4_tma_g16_streamk1", "bf16_gemm_sm90_128x256x64_s4_tma_streamk1",
                           "bf16_gemm_sm90_128x256x64_s4_tma_rs_g16"}) {
    SCOPED_TRACE(name);
    const ops::GemmVariant* v = ops::findGemmBf16Variant(name);
    ASSERT_NE(v, nullptr);
    matches(*bf16, dims, "offsets", ends, &v->config, true);
  }
  auto fp8 = ops::groupedGemmProgram({L::Offsets, ScalarType::F8E4M3, ScalarType::BF16}, "moe");
  matches(*fp8, dims, "offsets", ends);
}

// Groups along K (the weight gradient, C f32 [G, M, N]): token counts off the 64-token K step
// (each group's last step reads the next group's tokens, which the kernel zeroes), an empty group
// (zeros), a group of one token, tokens past the last offset that no group owns; then one group of
// every token.
TEST_F(Fp8ModesGroupedGpu, GroupsAlongKMatchTheInterpreter) {
  using L = ops::GroupedGemmSpec::Layout;
  auto wgrad = ops::groupedGemmProgram({L::GroupsAlongK, ScalarType::BF16, ScalarType::F32}, "wgrad");
  matches(*wgrad, {{"G", 6}, {"M", 384}, {"N", 520}, {"K", 3000}}, "offsets", {70, 70, 201, 202, 902, 2902});
  matches(*wgrad, {{"G", 1}, {"M", 256}, {"N", 256}, {"K", 1000}}, "offsets", {1000});
}

// Groups along K where each tile's K loop is short (8 groups of ~500 tokens: ~8 K steps): the
// family's pick, then the ping-pong 128x128 (one warpgroup staging and storing its f32 tile while
// the other runs its K loop; measured slower than the pick at the MoE shape, docs/grouped-gemm.md),
// against the interpreter; token counts off the K step, an empty group, tokens past the last offset.
TEST_F(Fp8ModesGroupedGpu, GroupsAlongKPickAndPingPongMatchTheInterpreter) {
  using L = ops::GroupedGemmSpec::Layout;
  auto wgrad = ops::groupedGemmProgram({L::GroupsAlongK, ScalarType::BF16, ScalarType::F32}, "wgrad");
  const std::map<std::string, int64_t> dims = {{"G", 8}, {"M", 640}, {"N", 512}, {"K", 4096}};
  const std::vector<int32_t> offsets = {500, 1000, 1000, 1501, 2000, 2561, 3300, 4000};
  matches(*wgrad, dims, "offsets", offsets);
  const Config pp = Config::parse(
      "strategy=sm90_ws_persistent bm=128 bn=128 bk=64 stages=5 warps_m=2 warps_n=1 consumers=pingpong "
      "raster=grouped l2_hint=reuse epilogue=tma");
  matches(*wgrad, dims, "offsets", offsets, &pp);
}

// FP8 groups along K (the blockwise weight gradient: e4m3 operands K-major, 1x128 scales along K
// for both): token counts that are multiples of 128 (the launch contract), two empty groups
// (zeros), tokens past the last offset that no group owns, tiles partial along M and N; then one
// group of every token.
TEST_F(Fp8ModesGroupedGpu, Fp8GroupsAlongKMatchTheInterpreter) {
  using L = ops::GroupedGemmSpec::Layout;
  auto wgrad = ops::groupedGemmProgram({L::GroupsAlongK, ScalarType::F8E4M3, ScalarType::F32}, "wgrad_fp8");
  matches(*wgrad, {{"G", 6}, {"M", 392}, {"N", 520}, {"K", 3072}}, "offsets", {128, 128, 512, 640, 640, 2944});
  matches(*wgrad, {{"G", 1}, {"M", 256}, {"N", 256}, {"K", 1024}}, "offsets", {1024});
}

// The TMA-store epilogue of an f32 output: each config with epilogue=tma against the interpreter,
// and bit for bit against the same config with epilogue=direct (the same accumulators, stored
// from registers): dense (edges off the 32-column boxes, two warpgroups, 8 boxes through 2 slots),
// then groups along K in BF16 and FP8 (an empty group's zeros, tiles partial along M and N).
TEST_F(Fp8ModesGroupedGpu, F32TmaStoreMatchesTheInterpreterAndTheDirectStore) {
  using L = ops::GroupedGemmSpec::Layout;
  auto both = [](const ir::Module& module, const std::map<std::string, int64_t>& dims, const std::string& config,
                 const std::string& boundsName = "", const std::vector<int32_t>& bounds = {}) {
    SCOPED_TRACE(config);
    interp::HostTensor tma, direct;
    const Config c = Config::parse(config + " epilogue=tma"), d = Config::parse(config + " epilogue=direct");
    matches(module, dims, boundsName, bounds, &c, false, &tma);
    matches(module, dims, boundsName, bounds, &d, false, &direct);
    EXPECT_TRUE(tma.bytes == direct.bytes) << "the TMA store's C differs from the direct store's";
  };
  ProgramBuilder p("gemm_f32_out");
  auto [M, N, K] = p.dims("M", "N", "K");
  Tensor A = p.input("A", ScalarType::BF16, {M, K});
  Tensor B = p.input("B", ScalarType::BF16, {K, N});
  Tensor C = p.output("C", ScalarType::F32, {M, N});
  p.tile({M, N}, [&](Coord m, Coord n) {
    Tile acc = p.zeros(ScalarType::F32, {m, n});
    p.reduce(K, [&](Coord k) { acc = dot(A(m, k), B(k, n), acc); });
    C(m, n) = acc;
  });
  auto dense = p.finish();
  const std::string sm90 = "strategy=sm90_ws_persistent bk=64 warps_n=1 ";
  both(*dense, {{"M", 1000}, {"N", 1048}, {"K", 1000}}, sm90 + "bm=128 bn=256 stages=4 warps_m=2");
  both(*dense, {{"M", 520}, {"N", 200}, {"K", 512}}, sm90 + "bm=64 bn=128 stages=4 warps_m=2 consumers=pingpong");
  auto wgrad = ops::groupedGemmProgram({L::GroupsAlongK, ScalarType::BF16, ScalarType::F32}, "wgrad");
  both(*wgrad, {{"G", 6}, {"M", 384}, {"N", 520}, {"K", 3000}}, sm90 + "bm=128 bn=256 stages=4 warps_m=2", "offsets",
       {70, 70, 201, 202, 902, 2902});
  auto fp8 = ops::groupedGemmProgram({L::GroupsAlongK, ScalarType::F8E4M3, ScalarType::F32}, "wgrad_fp8");
  both(*fp8, {{"G", 6}, {"M", 392}, {"N", 520}, {"K", 3072}},
       "strategy=sm90_ws_persistent bk=128 warps_n=1 fp8_accum=promote bm=128 bn=128 stages=5 warps_m=2", "offsets",
       {128, 128, 512, 640, 640, 2944});
  // Ping-pong along K (each warpgroup's whole tile, its boxes in its own slots): the registered
  // BF16 128x128 s5 and the FP8 64x128 s8 that fits with promotion.
  both(*wgrad, {{"G", 6}, {"M", 384}, {"N", 520}, {"K", 3000}},
       sm90 + "bm=128 bn=128 stages=5 warps_m=2 consumers=pingpong l2_hint=reuse raster=grouped", "offsets",
       {70, 70, 201, 202, 902, 2902});
  both(*fp8, {{"G", 6}, {"M", 392}, {"N", 520}, {"K", 3072}},
       "strategy=sm90_ws_persistent bk=128 warps_n=1 fp8_accum=promote bm=64 bn=128 stages=8 warps_m=2 "
       "consumers=pingpong l2_hint=reuse raster=grouped epilogue_loads=prefetch",
       "offsets", {128, 128, 512, 640, 640, 2944});
}

}  // namespace
}  // namespace kiln
