// sm90_ws_persistent's config rules (sm90/config.cpp): the shape it derives and each exact message.
#include <gtest/gtest.h>

#include <initializer_list>

#include "schedule/config.h"

namespace kiln {
namespace {

const char* kBase = "strategy=sm90_ws_persistent warps_n=1 ";

std::string errors(const std::string& extra, const Target& t = Target::sm90a()) {
  ir::DiagnosticEngine diag;
  std::string line = std::string(kBase) + extra;
  if (extra.find("bk=") == std::string::npos) line += " bk=64";
  auto c = Config::parse(line, diag);
  EXPECT_TRUE(c) << diag.str();
  if (!c) return {};
  EXPECT_FALSE(validate(*c, t, OperandInfo{}, diag));
  return diag.str();
}

TEST(Sm90Config, ShapeOfTwoConsumerWarpgroups) {
  Config c = Config::parse(std::string(kBase) + "bk=64 bm=128 bn=256 stages=4 warps_m=2");
  ir::DiagnosticEngine diag;
  EXPECT_TRUE(validate(c, Target::sm90a(), OperandInfo{}, diag)) << diag.str();
  Sm90Shape s = sm90Shape(c, 2);
  EXPECT_EQ(s.threads, 384);
  EXPECT_EQ(s.regsProducer, 40);
  EXPECT_EQ(s.regsConsumer, 232);
  EXPECT_EQ(s.maxRegsAtEntry, 168);  // 65536 / 384 = 170.7, down to a multiple of 8
  EXPECT_EQ(s.barrierOffset, 4 * (128 + 256) * 128);
  EXPECT_EQ(s.smemBytes, 4 * (128 + 256) * 128 + 4 * 16);
}

// Each config line (after kBase) validates for sm_90a without a diagnostic.
void expectAccepted(std::initializer_list<const char*> extras) {
  for (const char* extra : extras) {
    ir::DiagnosticEngine diag;
    EXPECT_TRUE(validate(Config::parse(std::string(kBase) + "bk=64 " + extra), Target::sm90a(), OperandInfo{}, diag))
        << extra << ": " << diag.str();
  }
}

TEST(Sm90Config, TwoBlocksPerSmShareTheRegisterFileAndSharedMemory) {
  Config c = Config::parse(std::string(kBase) + "bk=64 bm=64 bn=128 stages=4 warps_m=1 epilogue=tma blocks_per_sm=2");
  ir::DiagnosticEngine diag;
  EXPECT_TRUE(validate(c, Target::sm90a(), OperandInfo{}, diag)) << diag.str();
  Sm90Shape s = sm90Shape(c, 2);
  EXPECT_EQ(s.threads, 256);
  EXPECT_EQ(s.maxRegsAtEntry, 128);  // 65536 / (2 x 256)
  EXPECT_EQ(s.regsConsumer, 0);      // no setmaxnreg split
  EXPECT_EQ(sm90Shape(Config::parse(std::string(kBase) + "bk=64 bm=64 bn=128 warps_m=1"), 2).maxRegsAtEntry, 0);
  expectAccepted({"bm=64 bn=64 stages=6 warps_m=1 blocks_per_sm=2", "bm=128 bn=64 stages=4 warps_m=1 blocks_per_sm=2",
                  "bm=64 bn=128 stages=4 warps_m=1 split_k=2 blocks_per_sm=2",
                  "bm=64 bn=128 stages=4 warps_m=1 stream_k=1 blocks_per_sm=2",
                  "bm=64 bn=128 stages=4 warps_m=1 swap_ab=true epilogue=tma stage_store=stmatrix blocks_per_sm=2"});
}

TEST(Sm90Config, TwoBlocksPerSmSayWhatDoesNotFit) {
  EXPECT_NE(errors("bm=128 bn=128 stages=4 warps_m=2 blocks_per_sm=2")
                .find("blocks_per_sm=2 needs one consumer warpgroup (warps_m=1 warps_n=1): with 2 the register split "
                      "(setmaxnreg) takes the whole register file"),
            std::string::npos);
  EXPECT_NE(errors("bm=64 bn=64 stages=4 warps_m=1 cluster_m=2 blocks_per_sm=2")
                .find("blocks_per_sm=2 with cluster_m=2 cluster_n=1 is not supported by sm90_ws_persistent: use one or "
                      "the other"),
            std::string::npos);
  EXPECT_NE(errors("bm=64 bn=128 stages=8 warps_m=1 blocks_per_sm=2")
                .find("blocks_per_sm=2 needs 2 x 197760 bytes of shared memory (the pipeline and the 1 KB reserved per "
                      "block), but an SM of sm_90a has 233472; lower stages"),
            std::string::npos);
  // 128 registers a thread hold at most 72 accumulators beside the rest: 64 x 256 has 128.
  EXPECT_NE(errors("bm=64 bn=256 stages=2 warps_m=1 blocks_per_sm=2")
                .find("bm=64 bn=256 gives each consumer thread 128 f32 accumulators; at most 72 fit in its 128 "
                      "registers"),
            std::string::npos);
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(Config::parse("strategy=sm90_ws_persistent blocks_per_sm=3", diag));
  EXPECT_NE(diag.str().find("config key 'blocks_per_sm' needs an integer from 0 to 2, got '3'"), std::string::npos)
      << diag.str();
}

TEST(Sm90Config, ClusterOfTwoAlongMIsAccepted) {
  expectAccepted({"bm=128 bn=256 stages=3 warps_m=2 epilogue=tma cluster_m=2",
                  "bm=128 bn=128 stages=5 warps_m=2 consumers=pingpong epilogue=tma cluster_m=2",
                  "bm=64 bn=64 stages=4 warps_m=1 cluster_m=2"});
}

TEST(Sm90Config, ClustersAlongNAreAccepted) {
  expectAccepted({"bm=64 bn=64 stages=13 warps_m=1 cluster_n=4", "bm=64 bn=128 stages=9 warps_m=1 cluster_n=2",
                  "bm=128 bn=256 stages=4 warps_m=2 epilogue=tma reuse_stage=true cluster_n=2",
                  "bm=128 bn=128 stages=5 warps_m=2 consumers=pingpong epilogue=tma cluster_n=2"});
}

TEST(Sm90Config, SquareClustersAreAccepted) {
  expectAccepted({"bm=128 bn=256 stages=4 warps_m=2 epilogue=tma cluster_m=2 cluster_n=2",
                  "bm=192 bn=192 stages=4 warps_m=3 epilogue=tma store_slots=1 cluster_m=2 cluster_n=2",
                  "bm=64 bn=128 stages=9 warps_m=1 cluster_m=2 cluster_n=2"});
}

// swap_ab: a warpgroup's rows are wgmma's N (any multiple of 8 up to 256), the tile's columns its
// m64 blocks; the transposed tile goes out through stmatrix .trans and the TMA store.
TEST(Sm90Config, SwappedOperandsTakeTileHeightsInEights) {
  const std::string swap = "swap_ab=true epilogue=tma stage_store=stmatrix ";
  for (const char* extra : {"bm=208 bn=128 stages=4 warps_m=2", "bm=192 bn=192 stages=4 warps_m=2 store_slots=1",
                            "bm=112 bn=128 stages=5 warps_m=2 consumers=pingpong", "bm=8 bn=64 stages=4 warps_m=1",
                            "bm=208 bn=128 stages=4 warps_m=2 cluster_n=2 cluster_m=2"})
    expectAccepted({(swap + extra).c_str()});
  // 192 x 192 in two warpgroups: 144 accumulators, more than unswapped tiles may hold (128).
  EXPECT_EQ(errors("warps_m=2 bm=256 bn=256 stages=2 " + swap),
            "error: bm=256 bn=256 gives each consumer thread 256 f32 accumulators; at most 176 fit in its 232 registers "
            "(use a smaller tile or more consumer warpgroups)\n");
  EXPECT_EQ(errors("warps_m=2 bm=200 " + swap),
            "error: bm=200 with swap_ab=true gives each of 2 consumer warpgroup(s) an equal share of its rows, which "
            "must be a multiple of 8 from 8 to 256 rows (wgmma's N)\n");
  EXPECT_EQ(errors("warps_m=2 consumers=pingpong bm=264 " + swap),
            "error: bm=264 with swap_ab=true gives each of 1 consumer warpgroup(s) the whole tile, which must be a "
            "multiple of 8 from 8 to 256 rows (wgmma's N)\n");
  EXPECT_EQ(errors("warps_m=2 bm=128 bn=96 " + swap),
            "error: bn=96 with swap_ab=true is not whole m64 wgmma blocks: use 64, 128, 192 or 256\n");
  EXPECT_EQ(errors("warps_m=2 bm=128 swap_ab=true epilogue=tma"),
            "error: swap_ab=true holds the tile transposed in registers and stages it through stmatrix .trans: add "
            "epilogue=tma stage_store=stmatrix\n");
  EXPECT_EQ(errors("warps_m=2 bm=128 bn=256 reuse_stage=true " + swap),
            "error: reuse_stage=true with swap_ab=true is not supported by sm90_ws_persistent\n");
  EXPECT_EQ(errors("warps_m=2 bm=384 bn=64 " + swap), "error: bm=384 is more rows than a TMA box of A holds (256)\n");
  EXPECT_EQ(errors("warps_m=2 bm=208 cluster_n=4 " + swap),
            "error: bm=208 does not split into cluster_n=4 pieces of A on the 128-byte swizzle's 8-row period: use a "
            "multiple of 32\n");
}

// warps_n: with swapped operands the consumer warpgroups may split the tile's columns (whole m64
// wgmma blocks each); each stages its own boxes, so the staging is warps_n times the rows.
TEST(Sm90Config, SwappedColumnsSplitBetweenWarpgroups) {
  const std::string base = "strategy=sm90_ws_persistent bk=64 swap_ab=true epilogue=tma stage_store=stmatrix ";
  auto diagnose = [&](const std::string& extra) {
    ir::DiagnosticEngine diag;
    bool ok = validate(Config::parse(base + extra), Target::sm90a(), OperandInfo{}, diag);
    EXPECT_EQ(ok, diag.str().empty()) << extra;
    return diag.str();
  };
  for (const char* extra : {"bm=208 bn=128 stages=4 warps_m=1 warps_n=2", "bm=192 bn=192 stages=3 warps_m=1 warps_n=3",
                            "bm=104 bn=256 stages=3 warps_m=1 warps_n=2 cluster_m=2"})
    EXPECT_EQ(diagnose(extra), "") << extra;
  Sm90Shape s = sm90Shape(Config::parse(base + "bm=208 bn=128 stages=4 warps_m=1 warps_n=2"), 2);
  EXPECT_EQ(s.consumerWarpgroups, 2);
  EXPECT_EQ(s.threads, 384);
  EXPECT_EQ(s.regsConsumer, 232);
  EXPECT_EQ(s.cSlots, 1);                 // one 64-column box per warpgroup
  EXPECT_EQ(s.cBytes, 2 * 208 * 64 * 2);  // each warpgroup's 208 rows
  EXPECT_EQ(diagnose("bm=128 bn=192 stages=4 warps_m=1 warps_n=2"),
            "error: bn=192 does not split into warps_n=2 consumer warpgroups of whole m64 wgmma blocks: use a multiple "
            "of 128\n");
  EXPECT_EQ(diagnose("bm=128 bn=128 stages=4 warps_m=2 warps_n=2"),
            "error: warps_m=2 warps_n=2 is not supported by sm90_ws_persistent: they count consumer warpgroups along "
            "the tile's rows and columns, 1 to 3 in all\n");
  EXPECT_NE(diagnose("bm=128 bn=128 stages=4 warps_m=1 warps_n=2 consumers=pingpong")
                .find("consumers=pingpong alternates tiles between two consumer warpgroups: use warps_m=2 warps_n=1"),
            std::string::npos);
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(validate(Config::parse("strategy=sm90_ws_persistent bk=64 bm=128 bn=128 stages=4 warps_m=1 warps_n=2"),
                        Target::sm90a(), OperandInfo{}, diag));
  EXPECT_EQ(diag.str(),
            "error: warps_n=2 splits the tile's columns between consumer warpgroups in m64 wgmma blocks, which are "
            "columns only with swapped operands: add swap_ab=true or use warps_n=1\n");
}

// store_pieces: a swapped box staged and stored in row pieces, so a slot holds one piece.
TEST(Sm90Config, SwappedBoxesStoreInRowPieces) {
  const std::string base = "strategy=sm90_ws_persistent bk=64 swap_ab=true epilogue=tma stage_store=stmatrix ";
  Config c = Config::parse(base + "bm=224 bn=128 stages=4 warps_m=1 warps_n=2 store_slots=1 store_pieces=2");
  ir::DiagnosticEngine diag;
  EXPECT_TRUE(validate(c, Target::sm90a(), OperandInfo{}, diag)) << diag.str();
  Sm90Shape s = sm90Shape(c, 2);
  EXPECT_EQ(s.cSlots, 1);
  EXPECT_EQ(s.cBytes, 2 * 112 * 64 * 2);  // one 112-row piece per warpgroup
  EXPECT_EQ(s.smemBytes, 4 * (224 + 128) * 128 + 2 * 112 * 64 * 2 + 4 * 16);
  EXPECT_EQ(sm90Shape(Config::parse(base + "bm=240 bn=128 stages=2 warps_m=1 warps_n=2 store_pieces=3"), 2).cSlots, 2);
  EXPECT_EQ(errors("bm=128 bn=128 stages=4 warps_m=2 epilogue=tma store_pieces=2"),
            "error: store_pieces=2 stores a swapped tile's staged boxes in row pieces; it needs swap_ab=true and "
            "epilogue=tma\n");
  EXPECT_EQ(errors("bm=208 bn=128 stages=4 warps_m=2 swap_ab=true epilogue=tma stage_store=stmatrix store_pieces=2"),
            "error: store_pieces=2 does not cut a warpgroup's 104 rows into pieces of whole 8-row stmatrix blocks: use "
            "a divisor of 13\n");
}

TEST(Sm90Config, OneConsumerWarpgroupNeedsNoRegisterSplit) {
  Sm90Shape s = sm90Shape(Config::parse(std::string(kBase) + "bk=64 bm=64 bn=256 stages=5 warps_m=1"), 2);
  EXPECT_EQ(s.threads, 256);
  EXPECT_EQ(s.regsProducer, 0);
  EXPECT_EQ(s.maxRegsAtEntry, 0);
}

// bn not a multiple of 64: the B stage keeps whole 64-column boxes (a row-major B is copied in
// them), so 128x160 takes a 128 x 192 B stage, and the smem bound counts it.
TEST(Sm90Config, NarrowTilesKeepWholeBoxesOfB) {
  Sm90Shape s = sm90Shape(Config::parse(std::string(kBase) + "bk=64 bm=128 bn=160 stages=4 warps_m=2"), 2);
  EXPECT_EQ(s.bStageRows, 192);
  EXPECT_EQ(s.stageBytes, (128 + 192) * 64 * 2);
  EXPECT_EQ(s.cOffset, 4 * s.stageBytes);
  EXPECT_EQ(sm90Shape(Config::parse(std::string(kBase) + "bk=64 bm=128 bn=256 stages=4 warps_m=2"), 2).bStageRows, 256);
  expectAccepted({"bm=128 bn=160 stages=4 warps_m=2 epilogue=tma", "bm=192 bn=144 stages=4 warps_m=3",
                  "bm=64 bn=16 stages=8 warps_m=1", "bm=128 bn=208 stages=3 warps_m=2 cluster_m=2"});
  // 128x144 s6 would fit at 144 rows of B (6 x 34 KB), not at the 192 it stages (6 x 40 KB > 227 KB).
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(validate(Config::parse(std::string(kBase) + "bk=64 bm=128 bn=144 stages=6 warps_m=2"), Target::sm90a(),
                        OperandInfo{}, diag));
  EXPECT_NE(diag.str().find("6 stages x 40960 bytes"), std::string::npos) << diag.str();
}

TEST(Sm90Config, ThreeConsumerWarpgroupsSplitTheRegisters) {
  Sm90Shape s = sm90Shape(Config::parse(std::string(kBase) + "bk=64 bm=192 bn=192 stages=3 warps_m=3 epilogue=tma"), 2);
  EXPECT_EQ(s.threads, 512);
  EXPECT_EQ(s.regsProducer, 40);
  EXPECT_EQ(s.regsConsumer, 152);
  EXPECT_EQ(s.maxRegsAtEntry, 128);
  EXPECT_LE(128 * (s.regsProducer + 3 * s.regsConsumer), 65536);
  ir::DiagnosticEngine diag;
  EXPECT_TRUE(validate(Config::parse(std::string(kBase) + "bk=64 bm=192 bn=192 stages=3 warps_m=3 epilogue=tma"),
                       Target::sm90a(), OperandInfo{}, diag))
      << diag.str();
}

// FP8 operands take bk = 128 (one 128-byte row, as BF16's 64); the advice says so. Operands of
// other sizes, or of two sizes, are refused once, without a bk advice.
TEST(Sm90Config, EightBitOperandsTakeBk128) {
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(validate(Config::parse(std::string(kBase) + "bk=64 warps_m=2"), Target::sm90a(), OperandInfo{1, 1}, diag));
  EXPECT_EQ(diag.str(), "error: bk=64 is not supported by sm90_ws_persistent: use bk=128 (one 128-byte swizzled row of "
                        "FP8 elements per TMA box row)\n");
  ir::DiagnosticEngine ok;
  EXPECT_TRUE(validate(Config::parse(std::string(kBase) + "bk=128 warps_m=2"), Target::sm90a(), OperandInfo{1, 1}, ok))
      << ok.str();
  ir::DiagnosticEngine mixed;
  EXPECT_FALSE(validate(Config::parse(std::string(kBase) + "bk=64 warps_m=2"), Target::sm90a(), OperandInfo{2, 1}, mixed));
  EXPECT_EQ(mixed.str(), "error: sm90_ws_persistent multiplies 16-bit operands (bf16 or f16) or FP8 operands (f8e4m3, "
                         "f8e5m2)\n");
}

TEST(Sm90Config, ExactMessages) {
  EXPECT_EQ(errors("warps_m=2", Target::sm80()),
            "error: strategy sm90_ws_persistent needs wgmma, TMA and setmaxnreg, which sm_80 does not have (use "
            "sm_90a)\n");
  EXPECT_EQ(errors("warps_m=2", Target::sm90()),
            "error: strategy sm90_ws_persistent needs wgmma, TMA and setmaxnreg, which sm_90 does not have (use "
            "sm_90a)\n");
  EXPECT_EQ(errors("warps_m=2 bk=32"),
            "error: bk=32 is not supported by sm90_ws_persistent: use bk=64 (one 128-byte swizzled row of 16-bit "
            "elements per TMA box row)\n");
  EXPECT_EQ(errors("warps_m=4 bm=256"),
            "error: warps_m=4 warps_n=1 is not supported by sm90_ws_persistent: they count consumer warpgroups along the "
            "tile's rows and columns, 1 to 3 in all\n");
  // Three consumer warpgroups get 152 registers each: 96 accumulators, a 64 x 192 share.
  EXPECT_EQ(errors("warps_m=3 bm=192 bn=256 stages=3"),
            "error: bm=192 bn=256 gives each consumer thread 128 f32 accumulators; at most 96 fit in its 152 "
            "registers (use a smaller tile)\n");
  EXPECT_EQ(errors("warps_m=2 store_slots=1"),
            "error: store_slots=1 sets the staging of the TMA-store epilogue; it needs epilogue=tma\n");
  EXPECT_EQ(errors("warps_m=2 bn=256 stages=3 epilogue=tma reuse_stage=true store_slots=1"),
            "error: store_slots=1 with reuse_stage=true is not supported by sm90_ws_persistent: the ring stage holds "
            "only the boxes past two slots\n");
  EXPECT_EQ(errors("warps_m=3 bm=128"),
            "error: bm=128 does not split into warps_m=3 consumer warpgroups of 64 or 128 rows (m64 wgmma blocks)\n");
  EXPECT_EQ(errors("warps_m=2 bm=64"),
            "error: bm=64 does not split into warps_m=2 consumer warpgroups of 64 or 128 rows (m64 wgmma blocks)\n");
  EXPECT_EQ(errors("warps_m=2 bn=200"),
            "error: bn=200 is not supported by sm90_ws_persistent: use a multiple of 16 up to 256 (wgmma N <= 256, in "
            "the 16 x 16 blocks of the epilogue)\n");
  EXPECT_EQ(errors("warps_m=2 bn=272"),
            "error: bn=272 is not supported by sm90_ws_persistent: use a multiple of 16 up to 256 (wgmma N <= 256, in "
            "the 16 x 16 blocks of the epilogue)\n");
  EXPECT_EQ(errors("warps_m=2 bn=48 epilogue=tma"),
            "error: epilogue=tma stores 64-column boxes, and bn=48 has none: use epilogue=direct\n");
  EXPECT_EQ(errors("warps_m=2 bn=208 epilogue=tma reuse_stage=true"),
            "error: reuse_stage=true stages whole 64-column boxes in the B ring, which bn=208 does not split into: use "
            "a multiple of 64\n");
  EXPECT_EQ(errors("warps_m=2 bn=256 reuse_stage=true"),
            "error: reuse_stage=true stages boxes of the TMA-store epilogue in the ring; it needs epilogue=tma\n");
  EXPECT_EQ(errors("warps_m=2 bn=256 epilogue=tma reuse_stage=true split_k=2"),
            "error: reuse_stage=true is supported by sm90_ws_persistent only with consumers=cooperative, split_k=1 "
            "and stream_k=0 (the ring stage a tile read last must be its own until the next tile starts)\n");
  EXPECT_EQ(errors("warps_m=2 epilogue=tma reuse_stage=true"),
            "error: reuse_stage=true has nothing to do at bn=128: the two staging slots of a warpgroup already hold "
            "every 64-column box\n");
  {
    ir::DiagnosticEngine diag;
    Config ok = Config::parse(std::string(kBase) + "bk=64 bm=128 bn=256 stages=4 warps_m=2 epilogue=tma reuse_stage=true");
    EXPECT_TRUE(validate(ok, Target::sm90a(), OperandInfo{}, diag)) << diag.str();
    EXPECT_EQ(sm90Shape(ok, 2).ringBoxes, 2);
  }
  EXPECT_EQ(errors("warps_m=2 epilogue=smem"),
            "error: epilogue=smem is not supported by sm90_ws_persistent yet; use epilogue=direct or epilogue=tma\n");
  // Clusters: pairs along M, rows of 2 or 4 along N, or 2 x 2 (accepted: ClusterOfTwoAlongMIsAccepted,
  // ClustersAlongNAreAccepted, SquareClustersAreAccepted).
  const std::string clusterHint =
      " is not supported by sm90_ws_persistent: use cluster_m=2 cluster_n=1 (two CTAs along M sharing the B tile "
      "through TMA multicast), cluster_m=1 with cluster_n=2 or 4 (CTAs along N sharing the A tile), cluster_m=2 "
      "cluster_n=2 (both), or no cluster\n";
  EXPECT_EQ(errors("warps_m=2 cluster_m=4"), "error: cluster_m=4 cluster_n=1" + clusterHint);
  EXPECT_EQ(errors("warps_m=2 cluster_n=3"), "error: cluster_m=1 cluster_n=3" + clusterHint);
  EXPECT_EQ(errors("warps_m=2 cluster_n=8"), "error: cluster_m=1 cluster_n=8" + clusterHint);
  EXPECT_EQ(errors("warps_m=2 cluster_m=2 cluster_n=4"), "error: cluster_m=2 cluster_n=4" + clusterHint);
  // split_k: up to 64 slices, not across a cluster.
  EXPECT_EQ(errors("warps_m=2 split_k=65"),
            "error: split_k=65 is more slices than sm90_ws_persistent takes (at most 64; a slice should keep several "
            "K steps)\n");
  EXPECT_EQ(errors("warps_m=2 bn=256 stages=3 split_k=2 cluster_m=2"),
            "error: split_k=2 with cluster_m=2 cluster_n=1 is not supported by sm90_ws_persistent: split K slices "
            "across blocks, or share an operand within a cluster, not both\n");
  EXPECT_EQ(errors("warps_m=2 split_k=2 cluster_n=2"),
            "error: split_k=2 with cluster_m=1 cluster_n=2 is not supported by sm90_ws_persistent: split K slices "
            "across blocks, or share an operand within a cluster, not both\n");
  // stream_k: runs of K steps per block (or cluster), so not with split_k's slices or ping-pong's
  // alternating tiles.
  EXPECT_EQ(errors("warps_m=2 stream_k=2 split_k=2"),
            "error: stream_k=2 with split_k=2 is not supported by sm90_ws_persistent: stream-K already splits the K "
            "steps of the tail tiles; use one or the other\n");
  EXPECT_EQ(errors("warps_m=2 stream_k=2 consumers=pingpong"),
            "error: stream_k=2 with consumers=pingpong is not supported by sm90_ws_persistent: use "
            "consumers=cooperative\n");
  for (const char* extra : {"stream_k=1", "stream_k=2", "bn=256 stages=3 stream_k=1 cluster_m=2",
                            "stream_k=1 cluster_n=4"}) {
    ir::DiagnosticEngine ok;
    auto c = Config::parse(std::string(kBase) + "bk=64 warps_m=2 " + extra, ok);
    ASSERT_TRUE(c) << ok.str();
    EXPECT_TRUE(validate(*c, Target::sm90a(), OperandInfo{}, ok)) << extra << ": " << ok.str();
  }
  EXPECT_EQ(errors("warps_m=2 bm=256 bn=256 stages=2"),
            "error: bm=256 bn=256 gives each consumer thread 256 f32 accumulators; at most 128 fit in its 232 registers "
            "(use a smaller tile or more consumer warpgroups)\n");
  EXPECT_EQ(errors("warps_m=2 bm=256 bn=128 stages=7"),
            "error: the pipeline needs 344176 bytes of shared memory (7 stages x 49152 bytes, 112 bytes of "
            "barriers), but sm_90a allows at most 232448 bytes per block; lower stages, bm or bn\n");
  // consumers=pingpong: two warpgroups, each owning whole tiles of at most 128 rows and 128
  // accumulators; with epilogue=tma each stages its own tile.
  EXPECT_EQ(errors("warps_m=1 bm=64 consumers=pingpong"),
            "error: consumers=pingpong alternates tiles between two consumer warpgroups: use warps_m=2 warps_n=1\n");
  EXPECT_EQ(errors("warps_m=2 bm=256 consumers=pingpong"),
            "error: bm=256 is not a tile one consumer warpgroup can own with consumers=pingpong: use 64 or 128 "
            "rows (m64 wgmma blocks)\n");
  EXPECT_EQ(errors("warps_m=2 bm=128 bn=256 stages=2 consumers=pingpong"),
            "error: bm=128 bn=256 gives each consumer thread 256 f32 accumulators; at most 128 fit in its 232 registers "
            "(use a smaller tile)\n");
  EXPECT_EQ(errors("warps_m=2 bm=128 bn=128 stages=6 consumers=pingpong epilogue=tma"),
            "error: the pipeline needs 262256 bytes of shared memory (6 stages x 32768 bytes, 65536 bytes of output "
            "staging, 112 bytes of barriers), but sm_90a allows at most 232448 bytes per block; lower stages, bm or "
            "bn\n");
  ir::DiagnosticEngine diag;
  EXPECT_TRUE(validate(Config::parse(std::string(kBase) + "bk=64 warps_m=2 bm=128 bn=128 stages=5 consumers=pingpong "
                                                          "epilogue=tma"),
                       Target::sm90a(), OperandInfo{}, diag))
      << diag.str();
  // epilogue=tma stages two 64-column boxes per consumer row (128 x 64 x 2 x 2 bytes), not the tile.
  EXPECT_EQ(errors("warps_m=2 bm=128 bn=256 stages=5 epilogue=tma"),
            "error: the pipeline needs 278608 bytes of shared memory (5 stages x 49152 bytes, 32768 bytes of output "
            "staging, 80 bytes of barriers), but sm_90a allows at most 232448 bytes per block; lower stages, bm or "
            "bn\n");
}

}  // namespace
}  // namespace kiln
