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
            "strategy=sm80_multistage bm=128 bn=128 bk=32 stages=3 warps_m=2 warps_n=2 frag_prefetch=a align_a=16 "
            "align_b=16 raster=row group_m=8 align_c=16");
  EXPECT_EQ(Config::parse("strategy=sm90_ws_persistent").str(),
            "strategy=sm90_ws_persistent bm=128 bn=128 bk=64 stages=3 warps_m=2 warps_n=1 consumers=cooperative "
            "swap_ab=false l2_hint=none raster=row group_m=8 split_k=1 stream_k=0 blocks_per_sm=0 cluster_m=1 cluster_n=1 "
            "epilogue=direct stage_store=pairs reuse_stage=false store_slots=0 store_pieces=0 align_c=16 "
            "epilogue_loads=late fp8_accum=fast pdl=false");
}

TEST(Config, ParsesAndRoundTrips) {
  Config a = Config::parse("bm=64  bn=256 bk=64 stages=4 warps_n=4 raster=grouped group_m=16 frag_prefetch=none");
  EXPECT_EQ(a.bm, 64);
  EXPECT_EQ(a.bn, 256);
  EXPECT_EQ(a.bk, 64);
  EXPECT_EQ(a.stages, 4);
  EXPECT_EQ(a.warpsN, 4);
  EXPECT_EQ(a.raster, Raster::Grouped);
  EXPECT_EQ(a.groupM, 16);
  EXPECT_EQ(a.fragPrefetch, FragPrefetch::None);
  EXPECT_EQ(Config::parse(a.str()), a);
  EXPECT_EQ(Config::parse(""), Config{});
  Config b = Config::parse("swap_ab=true l2_hint=reuse stage_store=stmatrix reuse_stage=true store_slots=1 "
                           "epilogue_loads=early strategy=sm90_ws_persistent");
  EXPECT_EQ(b.strategy, "sm90_ws_persistent");
  EXPECT_TRUE(b.swapAB);
  EXPECT_EQ(b.l2Hint, L2Hint::Reuse);
  EXPECT_EQ(b.stageStore, StageStore::Stmatrix);
  EXPECT_TRUE(b.reuseStage);
  EXPECT_EQ(b.storeSlots, 1);
  EXPECT_EQ(b.epilogueLoads, EpilogueLoads::Early);
  EXPECT_EQ(b.bk, 64);  // sm90_ws_persistent's default, not the struct's
  EXPECT_EQ(Config::parse(b.str()), b);
}

TEST(Config, UnknownKey) {
  EXPECT_EQ(parseErrors("bm=64 bq=3"),
            "error: unknown config key 'bq' for sm80_multistage (did you mean 'bm'?); its keys: strategy, bm, bn, bk, "
            "stages, warps_m, warps_n, frag_prefetch, align_a, align_b, raster, group_m, align_c\n");
  EXPECT_EQ(parseErrors("strategy=rowwise vector=2"),
            "error: unknown config key 'vector' for rowwise (did you mean 'vectors'?); its keys: strategy, "
            "row_threads, block_threads, vectors, scalar, blocks_per_sm\n");
  EXPECT_EQ(parseErrors("tile=64"),
            "error: unknown config key 'tile' for sm80_multistage; its keys: strategy, bm, bn, bk, stages, warps_m, "
            "warps_n, frag_prefetch, align_a, align_b, raster, group_m, align_c\n");
  EXPECT_EQ(parseErrors("split_k=2"),
            "error: config key 'split_k' is not an option of sm80_multistage (it is one of sm90_ws_persistent, gemv); "
            "drop it or change the strategy\n");
  EXPECT_EQ(parseErrors("strategy=sm90_ws"),
            "error: unknown strategy 'sm90_ws'; known strategies: sm80_multistage, sm90_ws_persistent, rowwise, gemv\n");
  EXPECT_EQ(parseErrors("strategy=rowwize"),
            "error: unknown strategy 'rowwize' (did you mean 'rowwise'?); known strategies: sm80_multistage, "
            "sm90_ws_persistent, rowwise, gemv\n");
}

TEST(Config, BadValues) {
  EXPECT_EQ(parseErrors("bm=abc"), "error: config key 'bm' needs a positive integer up to 1024, got 'abc'\n");
  EXPECT_EQ(parseErrors("bm=-64"), "error: config key 'bm' needs a positive integer up to 1024, got '-64'\n");
  EXPECT_EQ(parseErrors("stages=0"), "error: config key 'stages' needs a positive integer up to 16, got '0'\n");
  EXPECT_EQ(parseErrors("raster=diagonal"), "error: config key 'raster' must be one of row, grouped, got 'diagonal'\n");
  const std::string sm90 = "strategy=sm90_ws_persistent ";
  EXPECT_EQ(parseErrors(sm90 + "consumers=both"),
            "error: config key 'consumers' must be one of cooperative, pingpong, got 'both'\n");
  EXPECT_EQ(parseErrors(sm90 + "swap_ab=yes"), "error: config key 'swap_ab' must be one of false, true, got 'yes'\n");
  EXPECT_EQ(parseErrors("frag_prefetch=b"), "error: config key 'frag_prefetch' must be one of none, a, got 'b'\n");
  EXPECT_EQ(parseErrors(sm90 + "l2_hint=first"), "error: config key 'l2_hint' must be one of none, reuse, got 'first'\n");
  EXPECT_EQ(parseErrors(sm90 + "stream_k=3"), "error: config key 'stream_k' needs an integer from 0 to 2, got '3'\n");
  EXPECT_EQ(parseErrors("strategy=rowwise block_threads=16"),
            "error: config key 'block_threads' needs an integer from 32 to 1024, got '16'\n");
  EXPECT_EQ(parseErrors(sm90 + "epilogue_loads=soon"),
            "error: config key 'epilogue_loads' must be one of late, early, prefetch, got 'soon'\n");
  EXPECT_EQ(parseErrors("bm"), "error: config entry 'bm' must have the form key=value\n");
  EXPECT_EQ(parseErrors("bm=64 bm=128"), "error: config key 'bm' is given twice\n");
  EXPECT_EQ(parseErrors("strategy=rowwise strategy=rowwise"), "error: config key 'strategy' is given twice\n");
}

// Each parse error points at its entry: at its column when the location is the text's, else at
// the location (an op's) with the column named.
TEST(Config, ErrorsPointAtTheirEntry) {
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(Config::parse("bm=64  stages=0 bq=1", diag, {"--config", 1, 1}, true));
  EXPECT_EQ(diag.str(),
            "--config:1:8: error: config key 'stages' needs a positive integer up to 16, got '0'\n"
            "--config:1:17: error: unknown config key 'bq' for sm80_multistage (did you mean 'bm'?); its keys: "
            "strategy, bm, bn, bk, stages, warps_m, warps_n, frag_prefetch, align_a, align_b, raster, group_m, align_c\n");
  ir::DiagnosticEngine diag2;
  EXPECT_FALSE(Config::parse("strategy=rowwise vectors=99", diag2, {"f.kiln", 3, 1}));
  EXPECT_EQ(diag2.str(), "f.kiln:3:1: error: config key 'vectors' needs a positive integer up to 16, got '99' "
                         "(config column 18)\n");
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
}

// A typed config (built in C++, not parsed) can set a field its strategy has no key for: validate
// refuses it rather than ignoring it.
TEST(ConfigValidate, FieldsOfOtherStrategiesAreRefused) {
  Config c;
  c.splitK = 2;
  c.epilogueLoads = EpilogueLoads::Early;
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(validate(c, Target::sm80(), OperandInfo{}, diag));
  EXPECT_EQ(diag.str(),
            "error: split_k=2 is not an option of sm80_multistage (it is one of sm90_ws_persistent, gemv); "
            "leave it at 1\n"
            "error: epilogue_loads=early is not an option of sm80_multistage (it is one of sm90_ws_persistent); "
            "leave it at late\n");
  Config s90 = Config::parse("strategy=sm90_ws_persistent");
  s90.fragPrefetch = FragPrefetch::None;
  ir::DiagnosticEngine diag2;
  EXPECT_FALSE(validate(s90, Target::sm90a(), OperandInfo{}, diag2));
  EXPECT_EQ(diag2.str(),
            "error: frag_prefetch=none is not an option of sm90_ws_persistent (it is one of sm80_multistage); "
            "leave it at a\n");
}

}  // namespace
}  // namespace kiln
