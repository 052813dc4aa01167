// sm90_ws_persistent's TMA-store epilogue with an f32 output (src/schedule/sm90/epilogue.cpp,
// kernel.cpp; docs/sm90-strategy.md "epilogue=tma"): boxes of 32 columns (one 128-byte swizzled
// row), each thread's accumulator pair staged by st.shared.v2.f32, then the fence, the barrier and
// the elected thread's TMA store, as for a bf16 output. Dense and batched BF16 GEMMs with C f32 run
// in the warp-specialized simulator against the tile-IR interpreter (the harness of
// tests/unit/testing/grouped_sim.h, which serves any program with one output C); the staging is
// shown to be checked (pairs swapped fail); the config rules an f32 output adds, each with its
// exact diagnostic; and ptxas's resource report of the staged f32 kernels. Groups along K with
// epilogue=tma: sm90_kgrouped_functional_test.cpp and sm90_kgrouped_fp8_test.cpp.
#include <gtest/gtest.h>

#include <cmath>

#include "backend/assembler.h"
#include "kiln/compile.h"
#include "kiln/program_builder.h"
#include "kiln/target.h"
#include "schedule/config.h"
#include "tests/unit/testing/grouped_sim.h"

namespace kiln {
namespace {

using ir::ScalarType;

// C f32 [M, N] (or [Bt, M, N] batched) = A bf16 [M, K] · B bf16 [K, N], f32 accumulation.
std::unique_ptr<ir::Module> f32Gemm(bool batched) {
  ProgramBuilder p(batched ? "gemm_f32_out_batched" : "gemm_f32_out");
  if (!batched) {
    auto [M, N, K] = p.dims("M", "N", "K");
    Tensor A = p.input("A", ScalarType::BF16, {M, K});
    Tensor B = p.input("B", ScalarType::BF16, {K, N});
    Tensor C = p.output("C", ScalarType::F32, {M, N});
    p.tile({M, N}, [&](Coord m, Coord n) {
      Tile acc = p.zeros(ScalarType::F32, {m, n});
      p.reduce(K, [&](Coord k) { acc = dot(A(m, k), B(k, n), acc); });
      C(m, n) = acc;
    });
    return p.finish();
  }
  auto [Bt, M, N, K] = p.dims("Bt", "M", "N", "K");
  Tensor A = p.input("A", ScalarType::BF16, {Bt, M, K});
  Tensor B = p.input("B", ScalarType::BF16, {Bt, K, N});
  Tensor C = p.output("C", ScalarType::F32, {Bt, M, N});
  p.tile_batched(Bt, {M, N}, [&](Index b, Coord m, Coord n) {
    Tile acc = p.zeros(ScalarType::F32, {m, n});
    p.reduce(K, [&](Coord k) { acc = dot(A(b, m, k), B(b, k, n), acc); });
    C(b, m, n) = acc;
  });
  return p.finish();
}

// The elements of C that differ from the interpreter's beyond f32 summation order (at most 8
// reported when `report`).
int mismatches(const std::string& configText, std::map<std::string, int64_t> dims, bool report = true,
               const std::function<void(ir::Operation&)>& mutate = nullptr) {
  SCOPED_TRACE(configText);
  auto module = f32Gemm(dims.count("Bt") != 0);
  testing::GroupedSimOptions o;
  o.blocks = 3;
  o.mutate = mutate;
  const testing::GroupedSimRun run =
      testing::runGroupedSim(*module, configText, dims, uint64_t(dims.at("M") * 31 + dims.at("N")), o);
  if (!run.error.empty()) return ADD_FAILURE() << run.error, -1;
  const int64_t n = interp::numElements(run.want);
  double scale = 0;
  for (int64_t i = 0; i < n; ++i) scale = std::max(scale, std::fabs(interp::getElement(run.want, i)));
  const double atol = std::ldexp(scale, -16);
  int bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double r = interp::getElement(run.want, i), g = interp::getElement(run.got, i);
    if (!(std::fabs(g - r) <= 1e-5 * std::fabs(r) + atol) && ++bad <= 8 && report)
      ADD_FAILURE() << "C element " << i << " = " << g << ", interpreter " << r;
  }
  return bad;
}

const std::string kTma = "strategy=sm90_ws_persistent bk=64 warps_n=1 epilogue=tma ";

TEST(Sm90F32TmaStore, DenseTilesGoOutInBoxesOf32Columns) {
  // Edges: the boxes past M = 72 and N = 40 are clipped by TMA.
  EXPECT_EQ(mismatches(kTma + "bm=64 bn=64 stages=3 warps_m=1", {{"M", 72}, {"N", 40}, {"K", 200}}), 0);
  // Two consumer warpgroups, 8 boxes each at bn = 256 through 2 slots (the slot waits of a tile's
  // later boxes and of the next tile's first ones), one slot only, ping-pong.
  EXPECT_EQ(mismatches(kTma + "bm=128 bn=256 stages=2 warps_m=2", {{"M", 136}, {"N", 264}, {"K", 192}}), 0);
  EXPECT_EQ(mismatches(kTma + "bm=128 bn=128 stages=3 warps_m=2 store_slots=1", {{"M", 136}, {"N", 136}, {"K", 192}}),
            0);
  EXPECT_EQ(mismatches(kTma + "bm=64 bn=64 stages=4 warps_m=2 consumers=pingpong", {{"M", 136}, {"N", 72}, {"K", 256}}),
            0);
  // bn = 80: two boxes and 16 columns past them stored from registers.
  EXPECT_EQ(mismatches(kTma + "bm=64 bn=80 stages=3 warps_m=1", {{"M", 72}, {"N", 168}, {"K", 128}}), 0);
}

TEST(Sm90F32TmaStore, BatchedTilesStoreAtTheirBatch) {
  EXPECT_EQ(mismatches(kTma + "bm=64 bn=64 stages=3 warps_m=1", {{"Bt", 3}, {"M", 72}, {"N", 96}, {"K", 128}}), 0);
}

// The staging is what the check sees: each pair's two values swapped (st.shared.v2 {hi, lo}).
TEST(Sm90F32TmaStore, SwappedPairsFail) {
  auto swapPairs = [](ir::Operation& k) {
    int pairs = 0;
    k.walk([&](ir::Operation& op) {
      if (!op.is("kern.st_shared") || op.numOperands() != 5) return;
      ir::Value *lo = op.operand(3), *hi = op.operand(4);
      op.setOperand(3, hi);
      op.setOperand(4, lo);
      ++pairs;
    });
    ASSERT_GT(pairs, 0);
  };
  EXPECT_GT(mismatches(kTma + "bm=64 bn=64 stages=3 warps_m=1", {{"M", 72}, {"N", 40}, {"K", 200}}, false, swapPairs),
            0);
}

std::string refusal(const std::string& config) {
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(compile(*f32Gemm(false), Target::sm90a(), Config::parse(config), diag)) << config;
  return diag.str();
}

TEST(Sm90F32TmaStore, RefusesWhatAnF32OutputCannotStage) {
  auto has = [](const std::string& text, const std::string& message) {
    EXPECT_NE(text.find(message), std::string::npos) << text;
  };
  has(refusal(kTma + "bm=128 bn=128 stages=3 warps_m=2 stage_store=stmatrix"),
      "stage_store=stmatrix moves 16-bit matrices; an f32 output is staged by st.shared.v2 pairs: use "
      "stage_store=pairs");
  has(refusal(kTma + "bm=128 bn=128 stages=3 warps_m=2 swap_ab=true stage_store=stmatrix"),
      "swap_ab=true with epilogue=tma stages the transposed tile by stmatrix .trans, which moves 16-bit matrices; "
      "with an f32 output use swap_ab=false or epilogue=direct");
  has(refusal(kTma + "bm=128 bn=256 stages=3 warps_m=2 reuse_stage=true"),
      "reuse_stage=true stages the 6 boxes of 32 x 64 past a warpgroup's slots in its 128 rows of the B stage, which "
      "hold 2 (an f32 output's boxes are 32 columns): use reuse_stage=false");
  // The budget counts the staging: 5 stages of 48 KB and 32 KB of slots (2 warpgroups x 2 x 64 rows x
  // 128 bytes) do not fit; 4 do.
  has(refusal(kTma + "bm=128 bn=256 stages=5 warps_m=2"),
      "the pipeline needs 278608 bytes of shared memory (5 stages x 49152 bytes, 32768 bytes of output staging, 80 "
      "bytes of barriers), but sm_90a allows at most 232448 bytes per block; lower stages, bm or bn");
  // A 64-column warpgroup share is one bf16 box but two f32 ones, so f32 takes two slots (32 KB at
  // 128 rows) where bf16 takes one: two such blocks fit an SM with a bf16 output, not with f32.
  const std::string twoPerSm = kTma + "bm=128 bn=64 stages=4 warps_m=1 blocks_per_sm=2";
  has(refusal(twoPerSm),
      "blocks_per_sm=2 needs 2 x 132160 bytes of shared memory (the pipeline and the 1 KB reserved per block), but an "
      "SM of sm_90a has 233472; lower stages");
  ir::DiagnosticEngine diag;
  EXPECT_TRUE(validate(Config::parse(twoPerSm), Target::sm90a(), OperandInfo{2, 2, 2}, diag)) << diag.str();
}

// ptxas's report (in-process assembly) of the staged f32 kernels the families pick: no spill, no
// stack frame, and the staging is st.shared.v2.f32 stored by TMA.
TEST(Sm90F32TmaStore, StagedF32KernelsAssembleSpillFree) {
  for (const char* tile : {"bm=128 bn=256 stages=4 warps_m=2", "bm=128 bn=128 stages=5 warps_m=2"}) {
    SCOPED_TRACE(tile);
    ir::DiagnosticEngine diag;
    auto r = compile(*f32Gemm(false), Target::sm90a(), Config::parse(kTma + tile), diag);
    ASSERT_TRUE(r) << diag.str();
    EXPECT_NE(r->ptx.find("st.shared.v2.f32"), std::string::npos);
    EXPECT_NE(r->ptx.find("cp.async.bulk.tensor.2d.global.shared::cta"), std::string::npos);
    auto cubin = backend::assemble(r->ptx, Target::sm90a().ptxTarget, diag);
    ASSERT_TRUE(cubin) << diag.str();
    const auto& report = cubin->resources.begin()->second;
    EXPECT_EQ(report.stackFrameBytes, 0);
    EXPECT_EQ(report.spillStoreBytes + report.spillLoadBytes, 0);
    std::printf("[ f32 tma ] %s: %d registers, %lld bytes of shared memory\n", tile, report.registers,
                static_cast<long long>(r->launch.dynamicSmemBytes));
  }
}

}  // namespace
}  // namespace kiln
