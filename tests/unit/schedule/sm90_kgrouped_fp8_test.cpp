// sm90_ws_persistent with FP8 groups along K: the blockwise weight gradient (DeepGEMM's k-grouped
// FP8 wgrad; ops/grouped_programs.h Layout::GroupsAlongK with f8e4m3 operands): dW_g = A[:, ks of
// g] · B[ks of g, :] with both operands K-major and 1x128 scales along K for both (scale_a per row
// of A, scale_b per column of B, per 128-token block), run by the warp-specialized simulator
// against the tile-IR interpreter (tests/unit/testing/grouped_sim.h), C f32 [G, M, N] poisoned
// first in both. Every group's token count is a multiple of 128 (the launch contract: a scale block
// never spans two groups, so no K step does and nothing is zeroed); empty groups give zeros;
// tokens past the last offset are NaN and must never be read. Then: offsets off the blocks on the
// device (the documented behaviour: the kernel stays inside its tensors), the family's pick, and
// what the lowering refuses.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "backend/assembler.h"
#include "kiln/compile.h"
#include "kiln/interp/interpreter.h"
#include "kiln/program_builder.h"
#include "kiln/target.h"
#include "ops/default_schedule.h"
#include "ops/grouped_programs.h"
#include "schedule/config.h"
#include "tests/unit/testing/grouped_sim.h"

namespace kiln {
namespace {

using L = ops::GroupedGemmSpec::Layout;
using ir::ScalarType;

struct KGroups {
  int64_t m, n, k;
  std::vector<int32_t> offsets;  // cumulative ends of the groups' tokens
  uint32_t blocks = 3;
};

std::unique_ptr<ir::Module> programOf() {
  return ops::groupedGemmProgram({L::GroupsAlongK, ScalarType::F8E4M3, ScalarType::F32}, "wgrad_fp8");
}

testing::GroupedSimRun simulate(const std::string& configText, const KGroups& p, bool interpret = true) {
  auto module = programOf();
  testing::GroupedSimOptions o;
  o.blocks = p.blocks;
  o.runInterpreter = interpret;
  o.prepare = [&](std::map<std::string, interp::HostTensor>& t) {
    std::memcpy(t.at("offsets").bytes.data(), p.offsets.data(), p.offsets.size() * 4);
    // Tokens past the last group: NaN (e4m3 0x7F) in both operands, A [M][K] and B [N][K].
    for (const char* name : {"A", "B"}) {
      const int64_t rows = *name == 'A' ? p.m : p.n;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t tok = std::max<int64_t>(p.offsets.back(), 0); tok < p.k; ++tok)
          t.at(name).bytes[size_t(r * p.k + tok)] = 0x7F;
    }
  };
  const std::map<std::string, int64_t> dims = {{"G", int64_t(p.offsets.size())}, {"M", p.m}, {"N", p.n}, {"K", p.k}};
  return testing::runGroupedSim(*module, configText, dims, uint64_t(p.m * 131 + p.n * 7 + p.k), o);
}

void check(const std::string& configText, const KGroups& p) {
  SCOPED_TRACE(configText);
  const testing::GroupedSimRun run = simulate(configText, p);
  ASSERT_EQ(run.error, "");
  const int64_t n = interp::numElements(run.want), mn = p.m * p.n;
  double scale = 0;
  for (int64_t i = 0; i < n; ++i) scale = std::max(scale, std::fabs(interp::getElement(run.want, i)));
  ASSERT_TRUE(scale > 0 && std::isfinite(scale)) << "the interpreter's C: max |C| = " << scale;
  // Each 128-token slice's products are exact in f32 (e4m3 x e4m3); the slices' sums and their
  // scaled additions differ from the interpreter's only in order: a few ulps of the terms' size.
  const double atol = std::ldexp(scale, -16);
  int bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double r = interp::getElement(run.want, i), g = interp::getElement(run.got, i);
    if (!(std::fabs(g - r) <= 1e-5 * std::fabs(r) + atol) && ++bad <= 8)
      ADD_FAILURE() << "C element " << i << " (group " << i / mn << ", row " << i % mn / p.n << ", column " << i % p.n
                    << ") = " << g << ", interpreter " << r;
  }
  // An empty group's tile is zeros, bit for bit (not poison, not -0 from a NaN-free path only).
  for (size_t gi = 0; gi < p.offsets.size(); ++gi)
    if (p.offsets[gi] == (gi ? p.offsets[gi - 1] : 0))
      for (int64_t i = int64_t(gi) * mn; i < int64_t(gi + 1) * mn; ++i)
        if (interp::getElement(run.got, i) != 0.0) {
          ADD_FAILURE() << "empty group " << gi << ": C element " << i << " = " << interp::getElement(run.got, i);
          break;
        }
}

const std::string kBase = "strategy=sm90_ws_persistent bk=128 warps_n=1 epilogue=direct ";

// Groups of 128, 0 (an empty expert), 256, 0 and 128 tokens, and 128 tokens past the last offset
// (NaN) that no group owns.
const std::vector<int32_t> kEnds = {128, 128, 384, 384, 512};

TEST(Sm90KGroupedFp8, EachGroupSumsItsScaledBlocksAndAnEmptyGroupIsZeros) {
  check(kBase + "fp8_accum=promote bm=64 bn=128 stages=3 warps_m=1", {72, 136, 640, kEnds});
  // Two consumer warpgroups; promote_pairs (two K steps' sums folded at once).
  check(kBase + "fp8_accum=promote bm=128 bn=128 stages=2 warps_m=2", {136, 136, 640, kEnds, 2});
  check(kBase + "fp8_accum=promote_pairs bm=128 bn=128 stages=4 warps_m=2", {136, 136, 640, kEnds, 2});
  // Ping-pong: the warpgroups' turns over the groups' tiles.
  check(kBase + "fp8_accum=promote bm=64 bn=128 stages=4 warps_m=2 consumers=pingpong", {72, 136, 640, kEnds});
}

// epilogue=tma: each group's f32 tile staged in 32-column boxes (st.shared.v2) and stored by TMA at
// batch coordinate = its group; the empty groups' zeros go out the same way.
const std::string kTma = "strategy=sm90_ws_persistent bk=128 warps_n=1 epilogue=tma ";

TEST(Sm90KGroupedFp8, TheTmaStoreEpilogueStoresEachGroupAtItsBatch) {
  check(kTma + "fp8_accum=promote bm=64 bn=128 stages=3 warps_m=1", {72, 136, 640, kEnds});
  check(kTma + "fp8_accum=promote_pairs bm=128 bn=128 stages=4 warps_m=2", {136, 136, 640, kEnds, 2});
  check(kTma + "fp8_accum=promote bm=64 bn=128 stages=4 warps_m=2 consumers=pingpong", {72, 136, 640, kEnds});
  // The ping-pong config docs/grouped-gemm.md offers for the GPU run (each warpgroup's f32 store
  // under the other's K loop; 64 + 64 sums a thread, no spill): eight stages, scales prefetched,
  // several tiles per warpgroup.
  check(kTma + "fp8_accum=promote bm=64 bn=128 stages=8 warps_m=2 consumers=pingpong raster=grouped l2_hint=reuse "
               "epilogue_loads=prefetch",
        {136, 264, 640, kEnds, 2});
}

TEST(Sm90KGroupedFp8, OneGroupOfEveryTokenAndRingsThatWrapAcrossGroups) {
  check(kBase + "fp8_accum=promote bm=64 bn=128 stages=2 warps_m=1", {64, 128, 512, {512}, 1});
  // More K steps than stages in each group, one block walking every unit; a first empty group.
  check(kBase + "fp8_accum=promote bm=64 bn=128 stages=2 warps_m=1", {64, 128, 768, {0, 384, 384, 768}, 1});
}

// Offsets on the device that are not whole blocks (the host paths refuse them, naming the
// argument; the interpreter gives their exact meaning, which the kernel does not): a group's
// copies then start at the first token of the block its first token lies in, and its last K step
// also reads the next group's first tokens, or TMA's zeros past K. Documented, not reported
// (docs/grouped-gemm.md, "Groups along K"); what must hold is that the kernel reads and writes
// inside its tensors only, which GlobalMemory enforces (it aborts on any access outside them),
// decreasing and too-large offsets included, and that no TMA box starts off 16 bytes, which the
// simulator refuses as the GPU does (an illegal instruction: before the copies started at the
// block, offsets 100 and 300 faulted here).
TEST(Sm90KGroupedFp8, OffsetsOffTheBlocksStayInsideTheTensors) {
  for (const std::vector<int32_t>& ends :
       std::vector<std::vector<int32_t>>{{100, 300, 301}, {200, 50, 1000}, {-5, 130, 129}}) {
    const testing::GroupedSimRun run =
        simulate(kBase + "fp8_accum=promote bm=64 bn=128 stages=3 warps_m=1", {64, 128, 384, ends, 2}, false);
    EXPECT_EQ(run.error, "");
    // The TMA stores too (the clamped group is every tile's batch).
    EXPECT_EQ(simulate(kTma + "fp8_accum=promote bm=64 bn=128 stages=3 warps_m=1", {64, 128, 384, ends, 2}, false).error,
              "");
  }
}

// The family's pick for the MoE weight gradient in FP8 (what kiln.ops.grouped_mm and
// kiln_grouped_bench --layout kgrouped --fp8 run): a gemm_fp8 variant that walks the groups,
// assembling with no spill or stack frame, and right in the simulator at a small shape.
TEST(Sm90KGroupedFp8, TheFamilyPicksAVariantThatLowersItSpillFree) {
  auto module = programOf();
  const testing::AssembledPick a =
      testing::assembleFamilyPick(*module, {{"G", 8}, {"M", 7168}, {"N", 4096}, {"K", 12416}}, "gemm_fp8");
  SCOPED_TRACE(a.pick.why);
  ASSERT_EQ(a.error, "");
  EXPECT_EQ(a.report.stackFrameBytes, 0);
  EXPECT_EQ(a.report.spillStoreBytes + a.report.spillLoadBytes, 0);
  // The f32 output goes out by the TMA-store epilogue (32-column boxes, st.shared.v2 staging).
  EXPECT_EQ(a.pick.config.epilogue, EpilogueStore::Tma);
  const ops::DefaultSchedule& pick = a.pick;
  check(pick.config.str(), {136, 264, 640, kEnds, 2});
  // The picks at the GPU test's shapes (Fp8ModesGroupedGpu.Fp8GroupsAlongKMatchTheInterpreter).
  for (const std::map<std::string, int64_t>& dims : std::vector<std::map<std::string, int64_t>>{
           {{"G", 6}, {"M", 392}, {"N", 520}, {"K", 3072}}, {{"G", 1}, {"M", 256}, {"N", 256}, {"K", 1024}}}) {
    const ops::DefaultSchedule small = ops::defaultSchedule(*module->body().front(), Target::sm90a(), dims);
    SCOPED_TRACE(small.why);
    ASSERT_TRUE(small.fromFamily);
    check(small.config.str(), {136, 264, 640, kEnds, 2});
  }
}

TEST(Sm90KGroupedFp8, RefusesWhatItDoesNotLower) {
  auto module = programOf();
  auto error = [&](const std::string& config) {
    ir::DiagnosticEngine diag;
    EXPECT_FALSE(compile(*module, Target::sm90a(), Config::parse(config), diag));
    return diag.str();
  };
  const std::string walks = "sm90_ws_persistent walks groups along K (tile.for_tiles {ragged = \"K\"}) only with ";
  // The f32 output staged for TMA: pairs only (sm90_f32_tma_store_test.cpp has the other rules).
  EXPECT_NE(error(kTma + "fp8_accum=promote bm=128 bn=128 stages=3 warps_m=2 stage_store=stmatrix")
                .find("stage_store=stmatrix moves 16-bit matrices; an f32 output is staged by st.shared.v2 pairs: use "
                      "stage_store=pairs"),
            std::string::npos);
  EXPECT_NE(error(kBase + "fp8_accum=promote bm=128 bn=128 stages=3 warps_m=2 stream_k=1").find(walks + "split_k=1"),
            std::string::npos);
  // A scale block is one K step: bk = 128 (slice_scales.cpp says so for every blockwise program).
  // Tensorwise scales: nothing makes the groups whole 128-token blocks, and the kernel zeroes no
  // token tail of an 8-bit stage.
  {
    ProgramBuilder p("wgrad_fp8_tensorwise");
    auto [G, M, N, K] = p.dims("G", "M", "N", "K");
    Tensor A = p.input("A", ScalarType::F8E4M3, {M, K});
    Tensor B = p.input("B", ScalarType::F8E4M3, {K, N}, {0, 1});
    Tensor SA = p.input("scale_a", ScalarType::F32, {1});
    Tensor SB = p.input("scale_b", ScalarType::F32, {1});
    Tensor offs = p.input("offsets", ScalarType::I32, {G});
    Tensor C = p.output("C", ScalarType::F32, {G, M, N});
    p.tile_grouped(G, Ragged::byOffsets(K, offs), {M, N}, [&](Index g, Coord m, Coord n) {
      Tile acc = p.zeros(ScalarType::F32, {m, n});
      p.reduce(K, [&](Coord k) { acc = dot(A(m, k), B(k, n), acc); });
      C(g, m, n) = scale(acc, SA.item() * SB.item());
    });
    ir::DiagnosticEngine diag;
    EXPECT_FALSE(compile(*p.finish(), Target::sm90a(),
                         Config::parse(kBase + "fp8_accum=promote bm=128 bn=128 stages=3 warps_m=2"), diag));
    EXPECT_NE(diag.str().find(walks + "block scales along K (tile.dot_scaled {block_k = 128}: each group's tokens "
                                      "are whole scale blocks)"),
              std::string::npos)
        << diag.str();
  }
  // A stored [K][M] (M contiguous, as the BF16 weight gradient takes it): wgmma reads 8-bit
  // operands K-major only.
  ProgramBuilder p("wgrad_fp8_m_contiguous");
  auto [G, M, N, K] = p.dims("G", "M", "N", "K");
  Tensor A = p.input("A", ScalarType::F8E4M3, {M, K}, {0, 1});
  Tensor B = p.input("B", ScalarType::F8E4M3, {K, N}, {0, 1});
  Tensor SA = p.scales("scale_a", {M, K}, {1, 128}, {0, 1});
  Tensor SB = p.scales("scale_b", {K, N}, {128, 1});
  Tensor offs = p.input("offsets", ScalarType::I32, {G});
  Tensor C = p.output("C", ScalarType::F32, {G, M, N});
  p.tile_grouped(G, Ragged::byOffsets(K, offs), {M, N}, [&](Index g, Coord m, Coord n) {
    Tile acc = p.zeros(ScalarType::F32, {m, n});
    p.reduce(K, [&](Coord k) { acc = dot_scaled(A(m, k), SA(m, k), B(k, n), SB(k, n), acc); });
    C(g, m, n) = acc;
  });
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(compile(*p.finish(), Target::sm90a(), Config::parse(kBase + "fp8_accum=promote bm=128 bn=128 stages=3 "
                                                                           "warps_m=2"),
                       diag));
  EXPECT_NE(diag.str().find("error: sm90_ws_persistent needs A row-major [M, K] (K contiguous) for FP8 operands: "
                            "wgmma reads 8-bit operands K-major only; got tensor<f8e4m3, [M, K], order = [0, 1]>"),
            std::string::npos)
      << diag.str();
}

}  // namespace
}  // namespace kiln
