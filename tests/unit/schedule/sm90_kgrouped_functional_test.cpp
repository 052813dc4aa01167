// sm90_ws_persistent with groups along K (tile.for_tiles {ragged = K}, the weight gradient;
// ops/grouped_programs.h Layout::GroupsAlongK; src/schedule/sm90/ragged_walk.cpp): dW_g = A[:, ks of
// g] · B[ks of g, :], run by the warp-specialized simulator (tests/unit/testing/grouped_sim.h) against
// the tile-IR interpreter on the same inputs, C f32 [G, M, N] poisoned first in both. Groups whose
// token counts are not multiples of the K step (the step past a group's end reads the next
// group's tokens, which the consumers zero), an empty group (zeros), one group of every token,
// more K steps than stages (the ring wraps inside and across groups), ping-pong; then the configs
// it refuses.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "backend/assembler.h"
#include "interp/random_inputs.h"
#include "kiln/interp/interpreter.h"
#include "kiln/compile.h"
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
  bool poisonNextTokens = false;  // tokens past the last offset hold inf (none may reach C)
};

std::unique_ptr<ir::Module> programOf() {
  return ops::groupedGemmProgram({L::GroupsAlongK, ScalarType::BF16, ScalarType::F32}, "wgrad");
}

// The elements of C that differ from the interpreter's (at most 8 reported, `report`: as test
// failures); `mutate` edits the kernel's kern IR before it runs (to show a check can fail).
int mismatches(const std::string& configText, const KGroups& p, bool report,
               const std::function<void(ir::Operation&)>& mutate = nullptr) {
  SCOPED_TRACE(configText);
  auto module = programOf();
  testing::GroupedSimOptions o;
  o.blocks = p.blocks;
  o.mutate = mutate;
  o.prepare = [&](std::map<std::string, interp::HostTensor>& t) {
    std::memcpy(t.at("offsets").bytes.data(), p.offsets.data(), p.offsets.size() * 4);
    if (p.poisonNextTokens) {  // B's rows (tokens) past the last group: +inf (bf16 0x7F80)
      interp::HostTensor& B = t.at("B");
      for (int64_t tok = p.offsets.back(); tok < p.k; ++tok)
        for (int64_t c = 0; c < p.n; ++c) {
          const uint16_t inf = 0x7F80;
          std::memcpy(B.bytes.data() + 2 * (tok * p.n + c), &inf, 2);
        }
    }
  };
  const std::map<std::string, int64_t> dims = {{"G", int64_t(p.offsets.size())}, {"M", p.m}, {"N", p.n}, {"K", p.k}};
  testing::GroupedSimRun run = testing::runGroupedSim(*module, configText, dims, uint64_t(p.m * 131 + p.n * 7 + p.k), o);
  if (!run.error.empty()) return ADD_FAILURE() << run.error, -1;
  const interp::HostTensor &want = run.want, &got = run.got;
  const int64_t n = interp::numElements(want);
  double scale = 0;
  for (int64_t i = 0; i < n; ++i) scale = std::max(scale, std::fabs(interp::getElement(want, i)));
  if (!(scale > 0)) return ADD_FAILURE() << "the interpreter's C is all zeros", -1;
  const double atol = std::ldexp(scale, -16);
  int bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double r = interp::getElement(want, i), g = interp::getElement(got, i);
    // f32 sums of the same bf16 products, in another order: a few ulps of the terms' size.
    if (!(std::fabs(g - r) <= 1e-5 * std::fabs(r) + atol) && ++bad <= 8 && report) {
      const int64_t mn = p.m * p.n;
      ADD_FAILURE() << "C element " << i << " (group " << i / mn << ", row " << i % mn / p.n << ", column "
                    << i % p.n << ") = " << g << ", interpreter " << r;
    }
  }
  return bad;
}

void check(const std::string& configText, const KGroups& p) { EXPECT_EQ(mismatches(configText, p, true), 0); }

// A [M, K] M-contiguous (x.t() of a row-major [K, M]), B [K, N] row-major, C f32.
const std::string kBase = "strategy=sm90_ws_persistent bk=64 warps_n=1 epilogue=direct ";

// Groups of 70, 0 (an empty expert), 131, 1 and 50 tokens: none a multiple of the K step, a
// group of one token, and tokens 252.. that no group owns (read by the last group's tail box).
const std::vector<int32_t> kEnds = {70, 70, 201, 202, 252};

TEST(Sm90KGroupedFunctional, EachGroupSumsOnlyItsTokensAndAnEmptyGroupIsZeros) {
  check(kBase + "bm=64 bn=64 stages=3 warps_m=1", {72, 40, 300, kEnds});
  // Two consumer warpgroups (the B stage's tail zeroed by both, then a barrier of both).
  check(kBase + "bm=128 bn=128 stages=2 warps_m=2", {136, 136, 300, kEnds, 2});
  // Ping-pong: each warpgroup zeroes the stages of its own units.
  check(kBase + "bm=64 bn=64 stages=4 warps_m=2 consumers=pingpong", {72, 72, 300, kEnds});
}

TEST(Sm90KGroupedFunctional, TheNextTokensNeverReachAGroup) {
  // Tokens past the last group are inf in B: the last group's tail step reads them, zeroed (an
  // operand zeroed on one side only would give 0 x inf = NaN).
  const KGroups p{64, 64, 256, {100, 150}, 2, true};
  check(kBase + "bm=64 bn=64 stages=3 warps_m=1", p);
  // Without the consumers' zeroing every group's last step mixes in the next group's tokens.
  auto noZeroing = [](ir::Operation& k) {
    std::vector<ir::Operation*> stores;
    k.walk([&](ir::Operation& op) {
      if (op.is("kern.st_shared")) stores.push_back(&op);
    });
    ASSERT_FALSE(stores.empty());
    for (ir::Operation* op : stores) op->erase();
  };
  EXPECT_GT(mismatches(kBase + "bm=64 bn=64 stages=3 warps_m=1", p, false, noZeroing), 0);
  EXPECT_GT(mismatches(kBase + "bm=64 bn=64 stages=3 warps_m=1", {72, 40, 300, kEnds}, false, noZeroing), 0);
}

// The family's pick for the MoE weight gradient (what kiln.ops.grouped_mm and kiln_grouped_bench
// run): a variant that walks the groups, assembling with no spill or stack frame, and correct in
// the simulator at a small shape.
TEST(Sm90KGroupedFunctional, TheFamilyPicksAVariantThatLowersItSpillFree) {
  const testing::AssembledPick a =
      testing::assembleFamilyPick(*programOf(), {{"G", 8}, {"M", 7168}, {"N", 4096}, {"K", 12416}}, "gemm_bf16");
  SCOPED_TRACE(a.pick.why);
  ASSERT_EQ(a.error, "");
  EXPECT_EQ(a.report.stackFrameBytes, 0);
  EXPECT_EQ(a.report.spillStoreBytes + a.report.spillLoadBytes, 0);
  // The f32 output goes out by the TMA-store epilogue (32-column boxes, st.shared.v2 staging).
  EXPECT_EQ(a.pick.config.epilogue, EpilogueStore::Tma);
  check(a.pick.config.str(), {136, 264, 300, kEnds, 2});
}

// epilogue=tma: each group's tile staged in boxes of 32 f32 columns (st.shared.v2) and stored by
// TMA at batch coordinate = its group, an empty group's zeros included; the zeroing of the token
// tail (st_shared of one element into the ring) beside the staging's pairs.
const std::string kTma = "strategy=sm90_ws_persistent bk=64 warps_n=1 epilogue=tma ";

TEST(Sm90KGroupedFunctional, TheTmaStoreEpilogueStoresEachGroupAtItsBatch) {
  check(kTma + "bm=64 bn=64 stages=3 warps_m=1", {72, 40, 300, kEnds});
  check(kTma + "bm=128 bn=256 stages=2 warps_m=2", {136, 264, 300, kEnds, 2});
  check(kTma + "bm=64 bn=64 stages=4 warps_m=2 consumers=pingpong", {72, 72, 300, kEnds});
  check(kTma + "bm=128 bn=128 stages=3 warps_m=2 store_slots=1", {136, 136, 300, kEnds, 2});
  // The store's batch coordinate made the tile's row instead of its group: wrong.
  auto rowAsBatch = [](ir::Operation& k) {
    int stores = 0;
    k.walk([&](ir::Operation& op) {
      if (op.is("kern.tma_store") && op.numOperands() == 6) op.setOperand(5, op.operand(4)), ++stores;
    });
    ASSERT_GT(stores, 0);
  };
  EXPECT_GT(mismatches(kTma + "bm=64 bn=64 stages=3 warps_m=1", {72, 40, 300, kEnds}, false, rowAsBatch), 0);
}

// The registered ping-pong variants with the TMA store (bf16_gemm_sm90_128x128x64_s5_tma_pp and
// _64x256x64_s4_tma_pp, whose configs the family's K-grouped pick may choose): each warpgroup owns
// whole tiles, zeroes its own stages' token tails and stages its f32 boxes in its own slots while
// the other runs its K loop. Two blocks over 2 x 3 x 5 (or 3 x 2 x 5) units, so each warpgroup
// walks several tiles (its slots reused across tiles, its stores left in flight between them) and
// the turn passes inside and across groups.
TEST(Sm90KGroupedFunctional, PingPongVariantsStoreEachGroupByTma) {
  const std::string pp = kTma + "warps_m=2 consumers=pingpong l2_hint=reuse raster=grouped ";
  check(pp + "bm=128 bn=128 stages=5", {136, 264, 300, kEnds, 2});
  check(pp + "bm=64 bn=256 stages=4", {136, 264, 300, kEnds, 2});
  // Each box waits for the store that last read its slot (sm90-stage-epilogue's pending counts,
  // across tiles too); with no wait a slot is restaged while its store may still read it, which
  // the simulator's store groups report.
  auto noSlotWaits = [](ir::Operation& k) {
    int waits = 0;
    k.walk([&](ir::Operation& op) {
      const ir::Attribute* read = op.attr("read");
      if (op.is("kern.bulk_wait") && read && read->asBool()) op.setAttr("pending", int64_t{7}), ++waits;
    });
    ASSERT_GT(waits, 0);
  };
  auto module = programOf();
  testing::GroupedSimOptions o;
  o.blocks = 2;
  o.mutate = noSlotWaits;
  o.prepare = [&](std::map<std::string, interp::HostTensor>& t) {
    std::memcpy(t.at("offsets").bytes.data(), kEnds.data(), kEnds.size() * 4);
  };
  const testing::GroupedSimRun run = testing::runGroupedSim(
      *module, pp + "bm=128 bn=128 stages=5", {{"G", 5}, {"M", 136}, {"N", 264}, {"K", 300}}, 11, o);
  EXPECT_NE(run.error.find("hazard: a TMA store's source in shared memory"), std::string::npos) << run.error;
}

// Offsets on the device that decrease or run past K: the walk clamps them, so the TMA stores, as
// the direct ones, stay inside C (the simulator's memory aborts on any access outside a tensor).
TEST(Sm90KGroupedFunctional, BadOffsetsStayInsideTheTensorsWithTheTmaStore) {
  for (const std::vector<int32_t>& ends : std::vector<std::vector<int32_t>>{{100, 50, 400}, {-5, 30, 29}}) {
    auto module = programOf();
    testing::GroupedSimOptions o;
    o.runInterpreter = false;  // it refuses such offsets by name
    o.prepare = [&](std::map<std::string, interp::HostTensor>& t) {
      std::memcpy(t.at("offsets").bytes.data(), ends.data(), ends.size() * 4);
    };
    const testing::GroupedSimRun run = testing::runGroupedSim(
        *module, kTma + "bm=64 bn=64 stages=3 warps_m=1", {{"G", 3}, {"M", 72}, {"N", 40}, {"K", 300}}, 7, o);
    EXPECT_EQ(run.error, "");
  }
}

TEST(Sm90KGroupedFunctional, OneGroupOfEveryTokenAndRingsThatWrapAcrossGroups) {
  check(kBase + "bm=64 bn=64 stages=2 warps_m=1", {64, 64, 128, {128}, 1});
  check(kBase + "bm=64 bn=64 stages=2 warps_m=1", {64, 128, 700, {700}, 2});
  // More K steps than stages in each group, with one block walking every unit.
  check(kBase + "bm=64 bn=64 stages=2 warps_m=1", {128, 64, 600, {0, 250, 250, 590}, 1});
}

TEST(Sm90KGroupedFunctional, RefusesWhatItDoesNotLower) {
  auto module = programOf();
  auto error = [&](const std::string& config) {
    ir::DiagnosticEngine diag;
    EXPECT_FALSE(compile(*module, Target::sm90a(), Config::parse(config), diag));
    return diag.str();
  };
  const std::string walks = "sm90_ws_persistent walks groups along K (tile.for_tiles {ragged = \"K\"}) only with ";
  // The f32 output staged for TMA: pairs only (sm90_f32_tma_store_test.cpp has the others).
  EXPECT_NE(error(kTma + "bm=128 bn=128 stages=3 warps_m=2 stage_store=stmatrix")
                .find("stage_store=stmatrix moves 16-bit matrices; an f32 output is staged by st.shared.v2 pairs: use "
                      "stage_store=pairs"),
            std::string::npos);
  EXPECT_NE(error(kBase + "bm=128 bn=128 stages=3 warps_m=2 split_k=2").find(walks + "split_k=1 stream_k=0"),
            std::string::npos);
  // Stream-K is lifted for groups of rows only: a unit along K runs its group's own K steps.
  EXPECT_NE(error(kBase + "bm=128 bn=128 stages=3 warps_m=2 stream_k=1")
                .find(walks + "split_k=1 stream_k=0: a unit runs its group's K steps"),
            std::string::npos);
  // FP8 along K: sm90_kgrouped_fp8_test.cpp.
}

}  // namespace
}  // namespace kiln
