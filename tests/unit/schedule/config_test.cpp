// Config: one-line text form, canonical printing, exact diagnostics.
#include <gtest/gtest.h>

#include "schedule/config.h"

namespace kiln {
namespace {

std::string parseErrors(std::string_view text) {
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(Config::parse(text, diag));
  return diag.str();
}

std::string validateErrors(const std::string& text, const Target& t = Target::sm80()) {
  ir::DiagnosticEngine diag;
  auto c = Config::parse(text, diag);
  EXPECT_TRUE(c) << diag.str();
  if (!c) return {};
  EXPECT_FALSE(validate(*c, t, OperandInfo{}, diag));
  return diag.str();
}

TEST(Config, DefaultsPrintCanonically) {
  EXPECT_EQ(Config{}.str(),
            "strategy=sm80_multistage bm=128 bn=128 bk=32 stages=3 warps_m=2 warps_n=2 raster=row group_m=8 "
            "split_k=1 swap_ab=false cluster_m=1 cluster_n=1 epilogue=direct regs_producer=0 regs_consumer=0 "
            "consumers=cooperative frag_prefetch=a l2_hint=none stream_fill=128 stage_store=pairs stream_k=0 store_hint=none "
            "reuse_stage=false split_handover=workspace store_slots=0 store_pieces=0 fp8_accum=fast epilogue_loads=late "
            "stagger=0");
}

TEST(Config, ParsesAndRoundTrips) {
  Config c = Config::parse("bm=64  bn=256 bk=64 stages=4 warps_n=4 raster=grouped group_m=16 swap_ab=true "
                           "frag_prefetch=ab l2_hint=reuse stage_store=stmatrix store_hint=evict_first reuse_stage=true "
                           "split_handover=cluster stream_fill=sector store_slots=1 epilogue_loads=early");
  EXPECT_EQ(c.bm, 64);
  EXPECT_EQ(c.bn, 256);
  EXPECT_EQ(c.bk, 64);
  EXPECT_EQ(c.stages, 4);
  EXPECT_EQ(c.warpsN, 4);
  EXPECT_EQ(c.raster, Raster::Grouped);
  EXPECT_EQ(c.groupM, 16);
  EXPECT_TRUE(c.swapAB);
  EXPECT_EQ(c.fragPrefetch, FragPrefetch::AB);
  EXPECT_EQ(c.l2Hint, L2Hint::Reuse);
  EXPECT_EQ(c.streamFill, StreamFill::Sector);
  EXPECT_EQ(c.stageStore, StageStore::Stmatrix);
  EXPECT_EQ(c.storeHint, StoreHint::EvictFirst);
  EXPECT_TRUE(c.reuseStage);
  EXPECT_EQ(c.splitHandover, SplitHandover::Cluster);
  EXPECT_EQ(c.storeSlots, 1);
  EXPECT_EQ(c.epilogueLoads, EpilogueLoads::Early);
  EXPECT_EQ(Config::parse(c.str()), c);
  EXPECT_EQ(Config::parse(""), Config{});
  Config prefetch = Config::parse("epilogue_loads=prefetch");
  EXPECT_EQ(prefetch.epilogueLoads, EpilogueLoads::Prefetch);
  EXPECT_EQ(Config::parse(prefetch.str()), prefetch);
}

TEST(Config, UnknownKey) {
  EXPECT_EQ(parseErrors("bm=64 bq=3"),
            "error: unknown config key 'bq'; known keys: strategy, bm, bn, bk, stages, warps_m, warps_n, raster, "
            "group_m, split_k, swap_ab, cluster_m, cluster_n, epilogue, regs_producer, regs_consumer, consumers, "
            "frag_prefetch, l2_hint, stream_fill, stage_store, stream_k, store_hint, reuse_stage, split_handover, "
            "store_slots, store_pieces, fp8_accum, epilogue_loads, stagger, row_threads, block_threads, vectors, scalar, "
            "blocks_per_sm\n");
}

TEST(Config, BadValues) {
  EXPECT_EQ(parseErrors("bm=abc"), "error: config key 'bm' needs a positive integer up to 1024, got 'abc'\n");
  EXPECT_EQ(parseErrors("bm=-64"), "error: config key 'bm' needs a positive integer up to 1024, got '-64'\n");
  EXPECT_EQ(parseErrors("stages=0"), "error: config key 'stages' needs a positive integer up to 16, got '0'\n");
  EXPECT_EQ(parseErrors("raster=diagonal"), "error: config key 'raster' must be one of row, grouped, got 'diagonal'\n");
  EXPECT_EQ(parseErrors("consumers=both"),
            "error: config key 'consumers' must be one of cooperative, pingpong, got 'both'\n");
  EXPECT_EQ(parseErrors("swap_ab=yes"), "error: config key 'swap_ab' must be one of false, true, got 'yes'\n");
  EXPECT_EQ(parseErrors("frag_prefetch=b"), "error: config key 'frag_prefetch' must be one of none, a, ab, got 'b'\n");
  EXPECT_EQ(parseErrors("l2_hint=first"), "error: config key 'l2_hint' must be one of none, reuse, got 'first'\n");
  EXPECT_EQ(parseErrors("stream_fill=64"), "error: config key 'stream_fill' must be one of 256, 128, sector, got '64'\n");
  EXPECT_EQ(parseErrors("bm"), "error: config entry 'bm' must have the form key=value\n");
  EXPECT_EQ(parseErrors("bm=64 bm=128"), "error: config key 'bm' is given twice\n");
}

TEST(Config, ThrowingParseCarriesTheMessage) {
  try {
    Config::parse("bk=x");
    FAIL() << "expected an exception";
  } catch (const ir::Error& e) {
    EXPECT_STREQ(e.what(), "error: config key 'bk' needs a positive integer up to 1024, got 'x'");
  }
}

TEST(ConfigValidate, AcceptsTheDefaultsOnEveryTarget) {
  for (const Target& t : Target::all()) {
    ir::DiagnosticEngine diag;
    EXPECT_TRUE(validate(Config{}, t, OperandInfo{}, diag)) << t.name << ": " << diag.str();
  }
}

TEST(ConfigValidate, WarpTiling) {
  EXPECT_EQ(validateErrors("bm=80 warps_m=2"),
            "error: bm=80 does not split into warps_m=2 warp tiles whose height is a multiple of 16 (the m16n8k16 "
            "MMA tile)\n");
  EXPECT_EQ(validateErrors("bn=64 warps_n=8"),
            "error: bn=64 does not split into warps_n=8 warp tiles whose width is a multiple of 16 (two n8 MMA "
            "tiles, loaded by one ldmatrix.x4)\n");
}

TEST(ConfigValidate, WarpTileWidthIsAPowerOfTwo) {
  EXPECT_EQ(validateErrors("bn=96 warps_n=2"),
            "error: the warp tile width bn/warps_n=48 must be a power of two (the swizzled B fragment addressing "
            "needs it)\n");
}

TEST(ConfigValidate, SharedMemoryBudgetSaysWhatIsNeeded) {
  EXPECT_EQ(validateErrors("bm=128 bn=128 bk=64 stages=4 warps_n=4", Target::sm89()),
            "error: the pipeline needs 131072 bytes of shared memory (4 stages x 32768 bytes), but sm_89 allows at "
            "most 101376 bytes per block; lower stages, bm, bn or bk\n");
}

TEST(ConfigValidate, OtherLimits) {
  EXPECT_EQ(validateErrors("bk=48"),
            "error: bk=48 is not supported by sm80_multistage: use 32, 64 or 128 (a power-of-two shared-memory row "
            "of at least 64 bytes, which the swizzle needs)\n");
  EXPECT_EQ(validateErrors("stages=1"),
            "error: stages=1 is too few: sm80_multistage needs at least 2 (one buffer filling while another is "
            "read)\n");
  EXPECT_EQ(validateErrors("bm=32 bn=64 warps_m=2 warps_n=4"),
            "error: the A tile (32x32, 128 16-byte chunks) does not divide evenly among 256 threads\n");
  EXPECT_EQ(validateErrors("strategy=sm90_ws"), "error: unknown strategy 'sm90_ws'; known strategies: sm80_multistage, sm90_ws_persistent, rowwise\n");
}

TEST(ConfigValidate, UnimplementedFieldsAreRefused) {
  EXPECT_EQ(validateErrors("split_k=2"), "error: split_k=2 is not supported by sm80_multistage yet\n");
  EXPECT_EQ(validateErrors("split_handover=cluster"),
            "error: split_handover=cluster reduces split-K slices through a thread-block cluster, which "
            "sm80_multistage does not split into; leave split_handover=workspace\n");
  EXPECT_EQ(validateErrors("store_slots=1"),
            "error: store_slots sets the staging of the TMA-store epilogue, which sm80_multistage does not have; "
            "leave store_slots=0\n");
  EXPECT_EQ(validateErrors("store_pieces=2"),
            "error: store_pieces sets the staging of the TMA-store epilogue, which sm80_multistage does not have; "
            "leave store_pieces=0\n");
  EXPECT_EQ(validateErrors("fp8_accum=promote"),
            "error: fp8_accum=promote sets where FP8 wgmma sums, which sm80_multistage does not issue; leave "
            "fp8_accum=fast\n");
  EXPECT_EQ(validateErrors("stream_k=1"),
            "error: stream_k=1 is not supported by sm80_multistage; use sm90_ws_persistent\n");
  EXPECT_EQ(validateErrors("cluster_m=2"),
            "error: cluster_m=2 cluster_n=1 needs thread-block clusters, which sm_80 does not have\n");
  EXPECT_EQ(validateErrors("epilogue=tma"), "error: epilogue=tma needs TMA, which sm_80 does not have\n");
  EXPECT_EQ(validateErrors("epilogue=smem"),
            "error: epilogue=smem is not supported by sm80_multistage yet; use epilogue=direct\n");
  EXPECT_EQ(validateErrors("regs_producer=40"),
            "error: regs_producer/regs_consumer split registers between warp roles; sm80_multistage has no roles "
            "(leave them 0)\n");
  EXPECT_EQ(validateErrors("consumers=pingpong"),
            "error: consumers=pingpong alternates tiles between consumer warpgroups; sm80_multistage has no "
            "warpgroup roles (use consumers=cooperative)\n");
  EXPECT_EQ(validateErrors("l2_hint=reuse"),
            "error: l2_hint=reuse is not supported by sm80_multistage yet (its cp.async loads carry no cache "
            "policy); use l2_hint=none\n");
  EXPECT_EQ(validateErrors("stage_store=stmatrix"),
            "error: stage_store=stmatrix writes the staged TMA-store epilogue, which sm80_multistage does not "
            "have; use stage_store=pairs\n");
  EXPECT_EQ(validateErrors("stream_fill=256"),
            "error: stream_fill=256 sets how l2_hint=reuse streams an operand, which sm80_multistage does not "
            "support; drop stream_fill\n");
  EXPECT_EQ(validateErrors("store_hint=evict_first"),
            "error: store_hint=evict_first applies to TMA stores of the output, which sm80_multistage does not "
            "have; use store_hint=none\n");
  EXPECT_EQ(validateErrors("reuse_stage=true"),
            "error: reuse_stage=true stages the TMA-store epilogue in the wgmma ring, which sm80_multistage does "
            "not have; use reuse_stage=false\n");
  EXPECT_EQ(parseErrors("epilogue_loads=soon"),
            "error: config key 'epilogue_loads' must be one of late, early, prefetch, got 'soon'\n");
  EXPECT_EQ(validateErrors("epilogue_loads=early"),
            "error: epilogue_loads=early starts the epilogue's vector loads ahead of the K loop, which "
            "sm80_multistage does not do yet; use epilogue_loads=late\n");
  EXPECT_EQ(validateErrors("epilogue_loads=prefetch"),
            "error: epilogue_loads=prefetch starts the epilogue's vector loads ahead of the K loop, which "
            "sm80_multistage does not do yet; use epilogue_loads=late\n");
}

}  // namespace
}  // namespace kiln
