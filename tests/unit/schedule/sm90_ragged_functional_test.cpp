// sm90_ws_persistent with ragged groups (tile.for_tiles {ragged = M}; ops/grouped_programs.h):
// the offsets layout (MoE forward: A [M, K] and C [M, N] by rows, B [G, K, N] per group) and the
// masked layout (counts; A, B, C batched by the group), BF16 and FP8 with 1x128 x 128x128 block
// scales, run by the warp-specialized simulator (tests/unit/testing/grouped_sim.h) against the tile-IR
// interpreter on the same inputs. Outputs start poisoned in both: rows no group owns must stay
// poisoned bit for bit, the others match the interpreter to the GPU tests' tolerance. Empty
// groups, groups shorter than a tile, tiles shared by two groups, rows past the last group; bad
// bounds (decreasing, past M, negative) clamped by the kernel so that it stays inside its tensors;
// the grouped raster and TMA-store epilogue; stream-K over the groups' tiles (a partial last wave
// shared out, determinism); then the configs it refuses.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "interp/random_inputs.h"
#include "kiln/interp/interpreter.h"
#include "ops/gemm_bf16.h"
#include "ops/gemm_fp8.h"
#include "ops/grouped_programs.h"
#include "tests/unit/schedule/sm90_sim_check.h"
#include "tests/unit/testing/example_runs.h"
#include "tests/unit/testing/grouped_sim.h"

namespace kiln {
namespace {

using L = ops::GroupedGemmSpec::Layout;
using ir::ScalarType;

struct Ragged {
  L layout = L::Offsets;
  bool fp8 = false;
  int64_t m, n, k;
  std::vector<int32_t> bounds;  // offsets (cumulative ends) or counts, one per group
  uint32_t blocks = 3;
};

std::unique_ptr<ir::Module> programOf(const Ragged& p) {
  return ops::groupedGemmProgram({p.layout, p.fp8 ? ScalarType::F8E4M3 : ScalarType::BF16, ScalarType::BF16},
                                 "ragged");
}

// The kernel's C after a simulated launch, against the interpreter's: the same bits where the
// interpreter left a row unwritten (poison), within the GPU tests' tolerance elsewhere.
// checkInterpreter: false for bounds the interpreter refuses (only that the kernel stays inside
// its tensors, which GlobalMemory enforces, is then checked).
void check(const std::string& configText, const Ragged& p, bool checkInterpreter = true) {
  SCOPED_TRACE(configText);
  auto module = programOf(p);
  testing::GroupedSimOptions o;
  o.blocks = p.blocks;
  o.runInterpreter = checkInterpreter;
  o.prepare = [&](std::map<std::string, interp::HostTensor>& t) {
    std::memcpy(t.at(p.layout == L::Masked ? "counts" : "offsets").bytes.data(), p.bounds.data(), p.bounds.size() * 4);
  };
  const std::map<std::string, int64_t> dims = {{"G", int64_t(p.bounds.size())}, {"M", p.m}, {"N", p.n}, {"K", p.k}};
  testing::GroupedSimRun run = testing::runGroupedSim(*module, configText, dims, uint64_t(p.m * 131 + p.n * 7 + p.k), o);
  ASSERT_EQ(run.error, "");
  if (!checkInterpreter) return;
  const interp::HostTensor &want = run.want, &got = run.got;
  const int64_t n = interp::numElements(want);
  double scale = 0;
  for (int64_t i = 0; i < n; ++i)
    if (double v = interp::getElement(want, i); std::isfinite(v)) scale = std::max(scale, std::fabs(v));
  ASSERT_GT(scale, 0) << "the interpreter wrote no row";
  const double ulp = testing::relativeUlp(want.dtype), atol = std::ldexp(scale, -10);
  int bad = 0;
  for (int64_t i = 0; i < n && bad < 8; ++i) {
    uint16_t wb, gb;
    std::memcpy(&wb, want.bytes.data() + 2 * i, 2);
    std::memcpy(&gb, got.bytes.data() + 2 * i, 2);
    const double r = interp::getElement(want, i), g = interp::getElement(got, i);
    const bool ok = wb == 0xFFFF ? gb == 0xFFFF : std::fabs(g - r) <= ulp * std::fabs(r) + atol;
    if (!ok) {
      ++bad;
      ADD_FAILURE() << "C element " << i << " (row " << i / p.n << ", column " << i % p.n << ") = " << g
                    << ", interpreter " << (wb == 0xFFFF ? "left it unwritten" : std::to_string(r));
    }
  }
}

const std::string kBf16Any = "strategy=sm90_ws_persistent bk=64 warps_n=1 ";
const std::string kFp8Any = "strategy=sm90_ws_persistent bk=128 warps_n=1 fp8_accum=promote ";
const std::string kBf16 = kBf16Any + "epilogue=direct ";
const std::string kFp8 = kFp8Any + "epilogue=direct ";

// Groups of 70, 0 (an empty expert), 131, 1 and 50 rows: tiles shared by two groups' rows, a group
// of one row, and rows 252.. that no group owns.
const std::vector<int32_t> kEnds = {70, 70, 201, 202, 252};

TEST(Sm90RaggedFunctional, OffsetsGiveEachGroupItsRowsAndMatrix) {
  check(kBf16 + "bm=64 bn=64 stages=3 warps_m=1", {L::Offsets, false, 300, 72, 136, kEnds});
  check(kBf16 + "bm=128 bn=128 stages=3 warps_m=2", {L::Offsets, false, 300, 200, 200, kEnds, 2});
  // Ping-pong: the warpgroups' turns over the units that have a tile.
  check(kBf16 + "bm=64 bn=64 stages=4 warps_m=2 consumers=pingpong", {L::Offsets, false, 300, 136, 136, kEnds});
}

TEST(Sm90RaggedFunctional, CountsMaskEachGroupsRows) {
  // Masked: groups of 0, 70 and 128 of 128 rows (A [3, 128, K]); one block walks them all.
  check(kBf16 + "bm=64 bn=64 stages=3 warps_m=1", {L::Masked, false, 128, 72, 136, {0, 70, 128}, 1});
  check(kBf16 + "bm=128 bn=128 stages=3 warps_m=2", {L::Masked, false, 136, 200, 72, {5, 136, 129}, 3});
}

TEST(Sm90RaggedFunctional, Fp8BlockScalesPerGroup) {
  check(kFp8 + "bm=64 bn=128 stages=3 warps_m=1", {L::Offsets, true, 300, 200, 400, kEnds});
  check(kFp8 + "bm=128 bn=128 stages=3 warps_m=2", {L::Masked, true, 136, 136, 272, {70, 0, 136}, 2});
}

// kiln_grouped_bench's masked FP8 case (counts 160, 208, 32, 192 of a capacity of 208: not a
// multiple of the 128-row tile, every group but one short of it) in miniature along N and K, with
// the very variants it ran: the family's pick and the other `_row` tiles. scale_a is [G][kb][M]
// (ops/grouped_programs.cpp); read as the bench once filled it, [kb][G * M], every group's C is
// wrong here (K = 384: three K blocks), as the bench then reported on the GPU.
TEST(Sm90RaggedFunctional, Fp8MaskedCapacityOffTheTile) {
  for (const char* name : {"fp8_gemm_sm90_128x128x128_s6_pairs_row", "fp8_gemm_sm90_128x160x128_s4_row",
                           "fp8_gemm_sm90_64x128x128_s8_row"}) {
    const ops::Fp8GemmVariant* v = ops::findGemmFp8Variant(name);
    ASSERT_NE(v, nullptr) << name;
    check(v->config.str(), {L::Masked, true, 208, 136, 384, {160, 208, 32, 192}, 3});
  }
}

// The dense kernels' walk and stores: raster=grouped (group_m of each group's tile rows column by
// column; a band stops at its group's end) and epilogue=tma, whose TMA store clips only at the
// tensor's edges, so each group's last, partial tile is stored from registers (epilogue.cpp). With
// kEnds and bm = 64, groups 0 and 2 have whole tiles ([0, 64), [70, 134), [134, 198)) and partial
// ones, groups 3 and 4 only partial ones; a TMA store of a partial tile would overwrite the next
// group's rows or the unowned rows 252.. (left poisoned by the interpreter).
TEST(Sm90RaggedFunctional, GroupedRasterAndTmaStores) {
  const std::string tma = kBf16Any + "raster=grouped epilogue=tma group_m=2 ";
  check(tma + "bm=64 bn=64 stages=3 warps_m=1", {L::Offsets, false, 300, 200, 136, kEnds});
  check(kBf16Any + "raster=grouped epilogue=tma group_m=3 bm=128 bn=128 stages=3 warps_m=2",
        {L::Offsets, false, 300, 200, 72, kEnds, 2});
  check(tma + "bm=64 bn=64 stages=4 warps_m=2 consumers=pingpong", {L::Offsets, false, 300, 136, 136, kEnds});
  check(tma + "bm=64 bn=256 stages=3 warps_m=1 stage_store=stmatrix reuse_stage=true",
        {L::Offsets, false, 300, 320, 136, kEnds});
  check(tma + "bm=64 bn=64 stages=3 warps_m=1", {L::Masked, false, 136, 72, 136, {0, 70, 136}, 2});
  check(kBf16 + "raster=grouped group_m=2 bm=64 bn=64 stages=3 warps_m=1", {L::Offsets, false, 300, 200, 72, kEnds});
  const std::string fp8 = kFp8Any + "raster=grouped epilogue=tma group_m=2 ";
  check(fp8 + "bm=64 bn=128 stages=3 warps_m=1", {L::Offsets, true, 300, 256, 256, kEnds});
  check(fp8 + "bm=128 bn=128 stages=3 warps_m=2", {L::Masked, true, 136, 136, 272, {70, 0, 136}, 2});
}

// The grouped raster's bands stop at each group's end (ragged_tile_walk.cpp): groups of 1, 0, 63,
// 1, 200 and 64 rows and 97 that no group owns; at bm = 64 and group_m = 2 the 200-row group has 4
// tile rows (two bands) and the others one each, so every band is one group's, some shorter than
// group_m. Data-parallel and stream-K (4 blocks, tiles in a partial last wave), BF16 and FP8 block
// scales, against the interpreter; the rows no group owns stay poisoned.
TEST(Sm90RaggedFunctional, GroupedRasterBandsStopAtGroupEnds) {
  const std::vector<int32_t> ends = {1, 1, 64, 65, 265, 329};
  const std::string any = kBf16Any + "raster=grouped epilogue=tma group_m=2 bm=64 bn=64 stages=3 warps_m=1 ";
  check(any, {L::Offsets, false, 426, 136, 136, ends, 4});
  check(any + "stream_k=1", {L::Offsets, false, 426, 136, 264, ends, 4});
  check(kBf16Any + "raster=grouped epilogue=tma group_m=3 bm=128 bn=128 stages=3 warps_m=2 stream_k=1",
        {L::Offsets, false, 426, 200, 200, ends, 3});
  check(kFp8Any + "raster=grouped epilogue=tma group_m=2 bm=64 bn=128 stages=3 warps_m=1",
        {L::Offsets, true, 426, 256, 256, ends, 3});
  check(any, {L::Masked, false, 200, 72, 136, {1, 0, 200, 63}, 3});
}

// stream_k over the groups' tiles (kern.tile_loop {ragged, stream_k}): the tile count the walk
// sums from the bounds on the device sets the data-parallel waves and the runs of the last W
// waves' K steps (docs/grouped-gemm.md). kEnds at bm = 64 has 2 + 0 + 3 + 1 + 1 = 7 tile rows
// (an empty group, a group of one row); at N = 72, 14 tiles: on 4 blocks 3 whole waves and 2
// tiles whose 5 K steps each (K = 264) are runs of 2 or 3 steps, so both tiles are finished by a
// block that adds a lower block's partial sums. At bm = 128, 10 tiles on 3 blocks: the last
// tile's 4 K steps on all 3 blocks (its finisher adds 2 peers).
TEST(Sm90RaggedFunctional, StreamKSharesOutTheLastPartialWave) {
  const std::string sk = kBf16 + "bm=64 bn=64 stages=3 warps_m=1 stream_k=";
  check(sk + "1", {L::Offsets, false, 300, 72, 264, kEnds, 4});
  check(sk + "2", {L::Offsets, false, 300, 72, 264, kEnds, 4});
  check(kBf16 + "bm=128 bn=128 stages=3 warps_m=2 stream_k=1", {L::Offsets, false, 300, 200, 200, kEnds, 3});
  // The dense kernels' walk and stores: grouped raster, TMA stores of whole tiles, a group's
  // partial tile stored from registers by its finisher.
  check(kBf16Any + "raster=grouped epilogue=tma group_m=2 bm=64 bn=64 stages=3 warps_m=1 stream_k=1",
        {L::Offsets, false, 300, 72, 264, kEnds, 4});
  // Masked (counts 0, 70, 128: 4 tile rows, 8 tiles on 3 blocks), and fewer tiles than blocks
  // (4 tiles on 5 blocks: no data-parallel wave, every K step shared out).
  check(sk + "1", {L::Masked, false, 128, 72, 264, {0, 70, 128}, 3});
  check(sk + "1", {L::Masked, false, 128, 72, 264, {0, 70, 0}, 5});
  // FP8 block scales: each run's steps scaled by their own K blocks (kbase).
  check(kFp8 + "bm=128 bn=128 stages=3 warps_m=2 stream_k=1", {L::Offsets, true, 300, 136, 400, kEnds, 3});
  // The family's pick for the MoE forward (ragged_pick_test.cpp, group_m 16) and its group_m 8
  // twin: 128x256, grouped raster, TMA stores; kEnds at bm = 128 and N = 520: 15 tiles on 4
  // blocks, 3 waves and 3 tiles shared out.
  for (const char* name : {"bf16_gemm_sm90_128x256x64_s4_tma_g16_streamk1", "bf16_gemm_sm90_128x256x64_s4_tma_streamk1"}) {
    const ops::GemmVariant* pick = ops::findGemmBf16Variant(name);
    ASSERT_NE(pick, nullptr);
    check(pick->config.str(), {L::Offsets, false, 300, 520, 264, kEnds, 4});
  }
  // Every group empty: no tile, no unit; nothing written, no flag left set (runGroupedSim checks).
  check(sk + "1", {L::Offsets, false, 300, 72, 264, {0, 0, 0}, 4}, false);
  // Bad bounds: clamped as without stream-K, inside the tensors.
  check(sk + "1", {L::Offsets, false, 200, 72, 200, {150, 40, 1000, -5}, 4}, false);
}

// The finisher adds its peers' partial sums in a fixed order (nearest block first), so two launches
// give the same bits; and those bits are the sum of the same K steps as without stream-K, to the
// tolerance of the order (the check against the interpreter above).
TEST(Sm90RaggedFunctional, StreamKIsDeterministic) {
  auto module = programOf({L::Offsets, false, 300, 72, 264, kEnds});
  testing::GroupedSimOptions o;
  o.blocks = 4;
  o.runInterpreter = false;
  o.prepare = [&](std::map<std::string, interp::HostTensor>& t) {
    std::memcpy(t.at("offsets").bytes.data(), kEnds.data(), kEnds.size() * 4);
  };
  const std::map<std::string, int64_t> dims = {{"G", 5}, {"M", 300}, {"N", 72}, {"K", 264}};
  const std::string config = kBf16 + "bm=64 bn=64 stages=3 warps_m=1 stream_k=1";
  testing::GroupedSimRun a = testing::runGroupedSim(*module, config, dims, 7, o);
  testing::GroupedSimRun b = testing::runGroupedSim(*module, config, dims, 7, o);
  ASSERT_EQ(a.error, "");
  ASSERT_EQ(b.error, "");
  ASSERT_EQ(a.got.bytes.size(), b.got.bytes.size());
  EXPECT_TRUE(a.got.bytes == b.got.bytes) << "two launches of the same stream-K kernel differ";
  EXPECT_FALSE(a.got.bytes == std::vector<uint8_t>(a.got.bytes.size(), 0xFF)) << "the kernel wrote nothing";
}

// Bounds the interpreter refuses: decreasing offsets, an offset past M, a negative one, counts past
// the rows. The kernel clamps each group's range, so it reads and writes inside its tensors only
// (GlobalMemory aborts on any access outside them).
TEST(Sm90RaggedFunctional, BadBoundsStayInsideTheTensors) {
  for (const std::string& c : {kBf16 + "bm=64 bn=64 stages=3 warps_m=1",
                                kBf16Any + "bm=64 bn=64 stages=3 warps_m=1 raster=grouped group_m=2 epilogue=tma"}) {
    check(c, {L::Offsets, false, 200, 72, 72, {150, 40, 1000, -5}}, false);
    check(c, {L::Masked, false, 100, 72, 72, {300, -7, 100}}, false);
  }
}

TEST(Sm90RaggedFunctional, RefusesConfigsThatCannotWalkTheGroups) {
  auto program = programOf({L::Offsets, false, 1, 1, 1, {}});
  const std::string base = "strategy=sm90_ws_persistent bk=64 warps_n=1 bm=128 bn=128 stages=3 warps_m=2 ";
  const std::string walks =
      "sm90_ws_persistent walks ragged groups (tile.for_tiles {ragged = \"M\"}) only with ";
  EXPECT_NE(sm90sim::compileError(*program, base + "cluster_m=2")
                .find(walks + "cluster_m=1 cluster_n=1: the tiles of a cluster may lie in different groups"),
            std::string::npos);
  EXPECT_NE(sm90sim::compileError(*program, base + "split_k=2")
                .find(walks + "split_k=1: a group's tiles are not cut into fixed K slices (stream_k=1 shares out the "
                              "last wave)"),
            std::string::npos);
  // stream_k is no refusal (StreamKSharesOutTheLastPartialWave), but keeps its own rules.
  EXPECT_NE(sm90sim::compileError(*program, base + "stream_k=1 consumers=pingpong")
                .find("stream_k=1 with consumers=pingpong is not supported by"),
            std::string::npos);
  // Groups along K: sm90_kgrouped_functional_test.cpp.
}

}  // namespace
}  // namespace kiln
