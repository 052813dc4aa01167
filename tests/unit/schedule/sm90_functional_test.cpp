// The sm90_ws_persistent pipeline, run on the CPU by the warp-specialized simulator
// (tests/unit/testing/ws_sim.h: mbarriers, TMA with the 128B swizzle and zero fill, wgmma from
// descriptors through the PTX ISA's canonical layouts, roles taking turns so the producer runs as
// far ahead as the barriers let it, and a hazard check on all shared memory a wgmma or a TMA store
// read), through the harness of sm90_sim_check.h. Ragged M, N and K, both B layouts, fewer blocks
// than tiles (the persistent loop wraps and the ring carries over between tiles), both rasters, one,
// two and three consumer warpgroups, two m64 blocks per warpgroup, batched, FP16, the TMA-store epilogue,
// ping-pong, clusters, reuse_stage, and the protocol breakers of clusters and reuse_stage the
// simulator must catch (those of the ring and the TMA-store staging: sm90_hazards_test.cpp). L2
// hints: sm90_l2_hint_test.cpp; split-K and stream-K: sm90_split_functional_test.cpp.
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "dialects/kern/int_range.h"
#include "examples/examples.h"
#include "kiln/compile.h"
#include "schedule/config.h"
#include "target/target.h"
#include "kiln/ir/operation.h"
#include "tests/unit/schedule/sm90_sim_check.h"

namespace kiln {
namespace {
using namespace sm90sim;

TEST(Sm90Functional, TwoConsumerWarpgroupsRowMajorB) {
  check(k128, {128, 128, 64});
  check(k128, {200, 136, 264, false, 0, 2});  // ragged M, N, K; 4 tiles on 2 blocks
}

TEST(Sm90Functional, TwoConsumerWarpgroupsKMajorB) { check(k128, {136, 200, 200, true, 0, 3}); }

TEST(Sm90Functional, OneConsumerWarpgroupAndTheRingWrapsAcrossTiles) {
  check(k64, {130, 72, 320, false, 0, 2});  // 6 tiles of 5 K steps on a 2-stage ring
  check(k64, {64, 64, 40, true});           // K below one step
  check("strategy=sm90_ws_persistent bm=64 bn=128 bk=64 stages=3 warps_m=1 warps_n=1 raster=row", {96, 256, 128});
}

TEST(Sm90Functional, TwoM64BlocksPerWarpgroupAndWideN) {
  check("strategy=sm90_ws_persistent bm=256 bn=128 bk=64 stages=2 warps_m=2 warps_n=1", {264, 136, 128, false, 0, 1});
  check("strategy=sm90_ws_persistent bm=128 bn=256 bk=64 stages=2 warps_m=2 warps_n=1", {128, 264, 192, true, 0, 1});
}

// warps_m=3: 192-row tiles, three consumer warpgroups of 64 rows after the producer (512 threads,
// the named barrier of the epilogue counts 384).
TEST(Sm90Functional, ThreeConsumerWarpgroups) {
  const std::string k192 = "strategy=sm90_ws_persistent bm=192 bn=128 bk=64 stages=3 warps_m=3 warps_n=1";
  check(k192, {200, 136, 264, false, 0, 2});                       // ragged M, N, K; 4 tiles on 2 blocks
  check(k192 + " epilogue=tma", {392, 200, 200, true, 0, 3});      // K-major B, 6 tiles on 3 blocks
  check("strategy=sm90_ws_persistent bm=192 bn=192 bk=64 stages=3 warps_m=3 warps_n=1 epilogue=tma cluster_m=2",
        {392, 200, 328, false, 0, 4});                              // pairs along M sharing B
  check(k192 + " epilogue=tma stream_k=1", {600, 264, 392, false, 2, 5});  // batched, tail tiles in runs
  // store_slots=1: one staging slot, so each box waits until the store before it has read it
  // (192x192 then fits four stages); pairs along N sharing A, two tiles per block.
  check("strategy=sm90_ws_persistent bm=192 bn=192 bk=64 stages=4 warps_m=3 warps_n=1 epilogue=tma store_slots=1 "
        "cluster_n=2",
        {392, 520, 200, false, 0, 4});
}

TEST(Sm90Functional, Batched) { check(k64, {72, 64, 96, false, 2, 3}); }

// Grouped (MoE, examples::groupedGemm, align 64): each 64-row block multiplies the B its group id
// picks, read by the producer as the B map's third coordinate; the id past G puts B out of the
// map's bounds, so those rows come out zero. Alone, in pairs along N (which share A, not B), two
// m64 blocks per warpgroup, and with the TMA-store epilogue; K-ragged, N-ragged, fewer blocks than
// tiles. Pairs along M would share one B between two groups: refused, as are tiles taller than the
// groups.
TEST(Sm90Functional, GroupedPicksBPerRowBlock) {
  Problem p{320, 136, 200};  // row blocks in groups 1, 0, (3: out of range), 2, 1
  p.groups = 3;
  p.blocks = 3;
  check(k64, p);
  Problem pairs = p;
  pairs.blocks = 4;  // whole clusters
  check(std::string(k64) + " cluster_n=2", pairs);
  check("strategy=sm90_ws_persistent bm=64 bn=128 bk=64 stages=3 warps_m=1 warps_n=1 epilogue=tma", p);
  for (const char* config : {"strategy=sm90_ws_persistent bm=128 bn=64 bk=64 stages=3 warps_m=2 warps_n=1",
                             "strategy=sm90_ws_persistent bm=64 bn=64 bk=64 stages=3 warps_m=1 warps_n=1 cluster_m=2"}) {
    ir::DiagnosticEngine diag;
    EXPECT_FALSE(compile(*examples::groupedGemm(), Target::sm90a(), Config::parse(config), diag)) << config;
    EXPECT_NE(diag.str().find("tile.group_index {align = 64} promises groups of multiples of 64 rows, but "),
              std::string::npos)
        << diag.str();
  }
}

// FP16 operands and output (the gemm_f16 program): wgmma .f16, cvt.rn.f16x2 in the epilogue, FP16
// tensor maps; through the direct and TMA-store epilogues, both B layouts, one and two consumer
// warpgroups and a cluster pair. The check's tolerance is FP16's, so a BF16 rounding anywhere fails.
TEST(Sm90Functional, F16OperandsAndOutput) {
  Problem p{200, 136, 264, false, 0, 2};
  p.f16 = true;
  check(k128, p);
  check(std::string(k128) + " epilogue=tma stage_store=stmatrix", p);
  p.kMajor = true;
  check(std::string(k64) + " epilogue=tma", p);
  check("strategy=sm90_ws_persistent bm=128 bn=256 bk=64 stages=2 warps_m=2 warps_n=1 epilogue=tma cluster_n=2",
        {136, 520, 128, false, 0, 4, true});
}

// bn not a multiple of 64 (a multiple of 16): wgmma N = bn; a row-major B still copied in whole
// 64-column boxes, whose columns past bn are left unread; with epilogue=tma the whole boxes go out
// by TMA and the columns past them directly. Ragged N puts the tile's tail across the tensor's edge.
TEST(Sm90Functional, TilesNotAMultipleOf64Wide) {
  const std::string base = "strategy=sm90_ws_persistent bk=64 warps_n=1 ";
  for (bool kMajor : {false, true}) {
    check(base + "bm=128 bn=160 stages=3 warps_m=2", {200, 296, 264, kMajor, 0, 3});
    check(base + "bm=128 bn=160 stages=3 warps_m=2 epilogue=tma", {264, 328, 200, kMajor, 0, 4});
    check(base + "bm=128 bn=208 stages=2 warps_m=2 epilogue=tma stage_store=stmatrix", {136, 424, 128, kMajor, 0, 2});
    check(base + "bm=64 bn=48 stages=4 warps_m=1", {130, 104, 136, kMajor, 0, 3});
    check(base + "bm=192 bn=144 stages=2 warps_m=3 epilogue=tma store_slots=1", {200, 296, 128, kMajor, 0, 4});
  }
  check(base + "bm=128 bn=96 stages=3 warps_m=2 consumers=pingpong epilogue=tma", {264, 200, 136, false, 0, 2});
  check(base + "bm=128 bn=160 stages=3 warps_m=2 epilogue=tma cluster_m=2", {264, 328, 136, false, 0, 4});
  check(base + "bm=128 bn=160 stages=3 warps_m=2 epilogue=tma cluster_m=2", {264, 328, 136, true, 0, 4});
  check(base + "bm=128 bn=144 stages=3 warps_m=2 epilogue=tma cluster_n=2", {136, 296, 200, false, 0, 4});
  check(base + "bm=64 bn=80 stages=3 warps_m=1 epilogue=tma", {72, 88, 96, false, 2, 3});  // batched
}

// epilogue=tma: the output staged in shared memory per consumer warpgroup and stored by TMA, which
// clips it at the tensor's edges (the guard after C must stay poisoned).
TEST(Sm90Functional, TmaStoreEpilogue) {
  check(std::string(k128) + " epilogue=tma", {200, 136, 264, false, 0, 2});
  check(std::string(k64) + " epilogue=tma", {130, 72, 320, true, 0, 2});
  check("strategy=sm90_ws_persistent bm=256 bn=128 bk=64 stages=2 warps_m=2 warps_n=1 epilogue=tma",
        {264, 136, 128, false, 0, 1});
  check(std::string(k64) + " epilogue=tma", {72, 64, 96, false, 2, 3});  // batched: 3-D output map
  // Three boxes over two slots: box 0 of a block's next tile reuses the slot of the last box of
  // the one before, whose store must have read it (a wait that leaves one group pending fails).
  check("strategy=sm90_ws_persistent bm=128 bn=192 bk=64 stages=3 warps_m=2 warps_n=1 epilogue=tma",
        {392, 200, 328, false, 0, 4});
}

// stage_store=stmatrix: the same tiles staged by stmatrix .x4 (the simulator models which lane's
// registers land in which matrix row; a wrong operand order fails here).
TEST(Sm90Functional, TmaStoreEpilogueThroughStmatrix) {
  const std::string stsm = " epilogue=tma stage_store=stmatrix";
  check(std::string(k128) + stsm, {200, 136, 264, false, 0, 2});
  check(std::string(k64) + stsm, {130, 72, 320, true, 0, 2});
  check("strategy=sm90_ws_persistent bm=128 bn=256 bk=64 stages=2 warps_m=2 warps_n=1" + stsm, {136, 264, 128, false, 0, 2});
  check(std::string(k128) + stsm + " consumers=pingpong", {264, 136, 200, false, 0, 2});
  check(std::string(k64) + stsm, {72, 64, 96, false, 2, 3});
}

// swap_ab=true: each consumer warpgroup computes the transpose of its share of the tile, wgmma's A
// being the B stage's 64-column blocks (MN-major for a row-major B) and its B the warpgroup's A
// rows (wgmma N = those rows, any multiple of 16), and stages it through stmatrix .trans. Tile
// heights that are not multiples of 64, both B layouts, ragged edges, one, two and three
// warpgroups, ping-pong, clusters, split-K, stream-K, batched, FP16, and an epilogue with per-row
// and per-column values (where a transposed fragment's rows are C's columns).
const std::string swapped = "strategy=sm90_ws_persistent bk=64 warps_n=1 swap_ab=true epilogue=tma stage_store=stmatrix ";

TEST(Sm90Functional, SwappedOperandsTransposeTheTile) {
  for (bool kMajor : {false, true}) {
    check(swapped + "bm=128 bn=128 stages=3 warps_m=2", {200, 136, 264, kMajor, 0, 2});
    check(swapped + "bm=208 bn=128 stages=3 warps_m=2", {424, 200, 136, kMajor, 0, 3});  // 104-row shares
    check(swapped + "bm=192 bn=192 stages=2 warps_m=2", {200, 392, 128, kMajor, 0, 2});  // 144 accumulators
    check(swapped + "bm=48 bn=64 stages=4 warps_m=1", {130, 136, 200, kMajor, 0, 3});
  }
  check(swapped + "bm=144 bn=256 stages=2 warps_m=3", {300, 264, 128, false, 0, 2});  // three warpgroups of 48
  check(swapped + "bm=112 bn=128 stages=3 warps_m=2 consumers=pingpong", {330, 264, 200, false, 0, 2});
  check(swapped + "bm=48 bn=64 stages=3 warps_m=1", {72, 136, 96, false, 2, 3});  // batched
  Problem f16{200, 136, 264, false, 0, 2};
  f16.f16 = true;
  check(swapped + "bm=208 bn=128 stages=3 warps_m=2", f16);
}

TEST(Sm90Functional, SwappedOperandsWithPerRowAndPerColumnEpilogue) {
  Problem p{424, 200, 136, false, 0, 3};
  p.scaled = true;
  check(swapped + "bm=208 bn=128 stages=3 warps_m=2", p);
  check(std::string(k128) + " epilogue=tma stage_store=stmatrix", p);  // the same program unswapped
  check(k128, p);                                                        // and stored directly
}

TEST(Sm90Functional, SwappedOperandsInClustersAndSplits) {
  check(swapped + "bm=208 bn=128 stages=3 warps_m=2 cluster_m=2", {424, 200, 136, false, 0, 4});
  check(swapped + "bm=208 bn=128 stages=3 warps_m=2 cluster_n=2", {200, 392, 136, true, 0, 4});  // 104-row A pieces
  check(swapped + "bm=96 bn=128 stages=3 warps_m=2 cluster_m=2 cluster_n=2", {200, 264, 200, false, 0, 4});
  check(swapped + "bm=208 bn=128 stages=3 warps_m=2 split_k=2", {200, 136, 520, false, 0, 4});
  check(swapped + "bm=208 bn=128 stages=3 warps_m=2 stream_k=1", {424, 264, 392, false, 0, 5});
}

// swap_ab with warps_n: the consumer warpgroups split the tile's columns, not its rows, so each
// issues one wgmma as tall as the whole tile (208 x 128 in two: one m64n208 each, not two m64n104)
// and stores its own 64-column boxes. Its B descriptors start at its first box, its TMA stores at
// its first column; both B layouts, one and two blocks per warpgroup, three warpgroups, and
// everything the row split runs with.
const std::string swappedCols = "strategy=sm90_ws_persistent bk=64 swap_ab=true epilogue=tma stage_store=stmatrix ";

TEST(Sm90Functional, SwappedOperandsSplitTheColumnsBetweenWarpgroups) {
  for (bool kMajor : {false, true}) {
    check(swappedCols + "bm=208 bn=128 stages=3 warps_m=1 warps_n=2", {424, 200, 136, kMajor, 0, 3});
    check(swappedCols + "bm=96 bn=256 stages=2 warps_m=1 warps_n=2 store_slots=1", {200, 392, 136, kMajor, 0, 2});
  }
  check(swappedCols + "bm=256 bn=128 stages=2 warps_m=1 warps_n=2", {264, 200, 136, false, 0, 2});  // m64n256
  check(swappedCols + "bm=96 bn=192 stages=2 warps_m=1 warps_n=3", {200, 200, 136, true, 0, 2});
  check(swappedCols + "bm=96 bn=128 stages=2 warps_m=1 warps_n=2", {72, 136, 96, false, 2, 3});  // batched
  Problem f16{200, 136, 264, false, 0, 2};
  f16.f16 = true;
  check(swappedCols + "bm=208 bn=128 stages=3 warps_m=1 warps_n=2", f16);
  Problem scaled{424, 200, 136, false, 0, 3};
  scaled.scaled = true;
  check(swappedCols + "bm=208 bn=128 stages=3 warps_m=1 warps_n=2", scaled);
}

// store_pieces: each warpgroup's staged box goes out in row pieces (a TMA box of rows / pieces),
// one staging slot per piece: 224 rows in two pieces of 112 through one slot, 240 in three of 80
// through two, and split along M 112 rows a warpgroup in two of 56 (seven eights: each piece ends
// with an .x2).
TEST(Sm90Functional, SwappedBoxesStoredInRowPieces) {
  for (bool kMajor : {false, true})
    check(swappedCols + "bm=224 bn=128 stages=2 warps_m=1 warps_n=2 store_slots=1 store_pieces=2",
          {460, 200, 136, kMajor, 0, 3});
  check(swappedCols + "bm=240 bn=128 stages=2 warps_m=1 warps_n=2 store_pieces=3", {500, 136, 200, false, 0, 2});
  check(swappedCols + "bm=224 bn=128 stages=2 warps_m=2 warps_n=1 store_slots=1 store_pieces=2",
        {230, 200, 136, false, 2, 3});  // split along M, batched
  Problem scaled{460, 200, 136, false, 0, 3};
  scaled.scaled = true;
  check(swappedCols + "bm=224 bn=128 stages=2 warps_m=1 warps_n=2 store_slots=1 store_pieces=2 stream_k=1", scaled);
}

TEST(Sm90Functional, SwappedColumnSplitInClustersAndSplits) {
  const std::string cols = swappedCols + "bm=208 bn=128 stages=3 warps_m=1 warps_n=2 ";
  check(cols + "cluster_m=2", {424, 200, 136, false, 0, 4});
  check(cols + "cluster_n=2", {200, 392, 136, true, 0, 4});
  check(cols + "split_k=2", {200, 136, 520, false, 0, 4});
  check(cols + "stream_k=1", {424, 264, 392, false, 0, 5});
}

// epilogue_loads=early: the per-row scale and per-column bias are loaded at the tile's start and
// held through its K loop. Each unit of the epilogue must get its own values back, rows and
// columns past the tensor's edges included: the direct store, 64-column boxes, the columns past
// the last box (bn = 160), a transposed fragment and its row pieces, a warpgroup's column share,
// ping-pong (loaded before the turn), split-K and stream-K (the finishing unit's epilogue).
TEST(Sm90Functional, EpilogueVectorsLoadedBeforeTheKLoop) {
  const std::string early = " epilogue_loads=early";
  Problem p{424, 200, 136, false, 0, 3};
  p.scaled = true;
  check(std::string(k128) + early, p);
  check(std::string(k128) + " epilogue=tma" + early, p);
  check("strategy=sm90_ws_persistent bm=128 bn=160 bk=64 stages=3 warps_m=2 warps_n=1 epilogue=tma" + early,
        {264, 328, 200, false, 0, 4, false, true});
  check(swapped + "bm=208 bn=128 stages=3 warps_m=2" + early, p);
  check(swappedCols + "bm=224 bn=128 stages=2 warps_m=1 warps_n=2 store_slots=1 store_pieces=2" + early,
        {460, 200, 136, false, 0, 3, false, true});
  check(std::string(k128) + " consumers=pingpong epilogue=tma" + early, p);
  check(std::string(k64) + " epilogue=tma split_k=2" + early, {200, 136, 264, false, 0, 4, false, true});
  check(std::string(k128) + " epilogue=tma stream_k=1" + early, {264, 264, 392, false, 0, 5, false, true});
}

// consumers=pingpong: the two consumer warpgroups take whole tiles in turn (tile iter % 2), each
// releasing the stages of its own tiles; odd tile counts per block leave one warpgroup a tile
// ahead, and the ring carries over between them.
TEST(Sm90Functional, PingpongConsumersTakeTilesInTurn) {
  const std::string pp = std::string(k128) + " consumers=pingpong";
  check(pp, {200, 136, 264, false, 0, 1});                   // 4 tiles, one block: 2 each
  // Long K on a short ring: warpgroup 1 reaches its first K step while warpgroup 0 is still many
  // steps from the end of tile 0, so the full barrier of that stage is phases behind.
  check(pp, {256, 128, 1024, false, 0, 1});
  check(pp, {392, 264, 200, true, 0, 2});                    // 12 tiles on 2 blocks, K-major B
  check(pp + " epilogue=tma", {330, 136, 264, false, 0, 2});  // 6 tiles: 3 per block, ragged edges
  check("strategy=sm90_ws_persistent bm=64 bn=256 bk=64 stages=2 warps_m=2 warps_n=1 consumers=pingpong "
        "epilogue=tma",
        {72, 520, 136, false, 2, 3});  // batched, 3-D output map; 5 tiles per batch on 3 blocks
}

// cluster_m=2: the two blocks of a cluster compute M-adjacent tiles and share the B tile, each
// loading half of it and multicasting it to both; each block's consumers release a stage to both
// producers. The simulator runs the two blocks of a cluster together (remote arrives, multicast
// writes and completions in both blocks, cluster barriers).
const std::string c2 = std::string(k128) + " cluster_m=2";
const std::string c2k64 = "strategy=sm90_ws_persistent bm=64 bn=64 bk=64 stages=2 warps_m=1 warps_n=1 cluster_m=2";

TEST(Sm90Functional, ClusterPairsShareBThroughMulticast) {
  check(c2, {328, 136, 264, false, 0, 2});   // 3 M tiles: the last pair's second tile lies past M
  check(c2, {200, 200, 200, true, 0, 4});    // K-major B (halves of bn rows), 2 clusters
  check(c2k64, {130, 72, 320, false, 0, 2}); // long K on a 2-stage ring; 3 M tiles; bn=64 row-major
  check(c2k64, {72, 136, 320, true, 0, 4});  // 2 clusters, more clusters than pairs in a row
  check("strategy=sm90_ws_persistent bm=128 bn=256 bk=64 stages=3 warps_m=2 warps_n=1 epilogue=tma cluster_m=2",
        {200, 264, 192, false, 0, 2});  // the registered _c2 shape
}

TEST(Sm90Functional, ClusterWithPingpongConsumersAndTmaStore) {
  const std::string pp = c2 + " consumers=pingpong";
  check(pp, {256, 128, 1024, false, 0, 2});                   // long K on a short ring
  check(pp + " epilogue=tma", {330, 136, 264, true, 0, 2});   // 3 M tiles, ragged, K-major
  check(pp + " epilogue=tma", {520, 264, 200, false, 0, 2});  // 5 M tiles x 3 N tiles on one cluster
}

TEST(Sm90Functional, ClusterBatched) {
  check(c2k64 + " epilogue=tma", {72, 64, 96, false, 2, 4});
  check(c2k64, {136, 72, 136, false, 3, 2});
}

// cluster_n=2 or 4: the blocks of a cluster compute N-adjacent tiles and share the A tile, each
// loading bm / cluster_n of its rows and multicasting them to all; each block's consumers release
// a stage to every producer of the cluster.
const std::string n2 = std::string(k128) + " cluster_n=2";
const char* kReuseForClusters =
    "strategy=sm90_ws_persistent bm=128 bn=256 bk=64 stages=3 warps_m=2 warps_n=1 epilogue=tma reuse_stage=true";
const std::string n4k64 = std::string(k64) + " cluster_n=4";

// cluster_m=2 cluster_n=2: block r computes sub-tile (r % 2, r / 2) of a 2 x 2 cluster tile; it
// copies half its A rows to the two blocks of its M index and half its B stage to the two of its N
// index, so each block's stage fills from three producers (its own, its row's, its column's).
TEST(Sm90Functional, SquareClustersShareAAndB) {
  const std::string sq = std::string(k128) + " cluster_m=2 cluster_n=2";
  check(sq, {264, 264, 264, false, 0, 4});                    // one cluster; ragged past M and N
  check(sq, {520, 392, 200, true, 0, 8});                     // K-major B; 6 cluster tiles on 2 clusters
  check(sq + " epilogue=tma", {200, 600, 136, false, 0, 4});  // 3 cluster tiles on one cluster (the ring wraps)
  check(std::string(k64) + " cluster_m=2 cluster_n=2 epilogue=tma", {136, 136, 328, false, 2, 8});  // batched
  check("strategy=sm90_ws_persistent bm=192 bn=160 bk=64 stages=2 warps_m=3 warps_n=1 epilogue=tma store_slots=1 "
        "cluster_m=2 cluster_n=2",
        {400, 328, 128, false, 0, 4});
  check(sq + " consumers=pingpong epilogue=tma", {520, 264, 200, false, 0, 4});  // tiles in turn, 2 per block
  check(sq + " epilogue=tma stream_k=1", {264, 520, 640, false, 0, 4});          // 4 cluster tiles over 1 cluster
}

TEST(Sm90Functional, ClusterRowsShareAThroughMulticast) {
  check(n2, {264, 328, 264, false, 0, 2});     // 3 N tiles: the second cluster tile's right half lies past N
  check(n2, {200, 200, 200, true, 0, 4});      // K-major B, 2 clusters, 64-row A pieces
  check(n4k64, {72, 328, 320, false, 0, 4});   // 16-row pieces; 6 N tiles (one cluster tile and a half) x 2 M tiles
  check(n4k64, {130, 136, 200, true, 0, 8});   // 2 clusters; the last cluster tile is 3/4 past N
  check(n4k64 + " epilogue=tma", {64, 520, 128, false, 0, 4});
  check(std::string(k64) + " cluster_n=2 epilogue=tma stage_store=stmatrix", {100, 200, 96, false, 0, 2});
}

TEST(Sm90Functional, ClusterRowsWithPingpongReuseStageAndBatch) {
  check(n2 + " consumers=pingpong epilogue=tma", {330, 264, 264, true, 0, 2});
  check(std::string(kReuseForClusters) + " cluster_n=2", {264, 520, 200, false, 0, 2});
  check(n4k64, {72, 136, 136, false, 3, 4});   // batched: every batch's cluster tiles walked in step
}

// The simulator can fail: each edit below breaks the cluster protocol.
TEST(Sm90Functional, ClusterProtocolErrorsAreCaught) {
  auto each = [](ir::Operation& k, const char* name, const std::function<void(ir::Operation&)>& f) {
    std::vector<ir::Operation*> ops;
    k.walk([&](ir::Operation& op) {
      if (op.is(name)) ops.push_back(&op);
    });
    for (ir::Operation* op : ops) f(*op);
  };
  // empty[s] counting only this block's consumer warps (1 x warps instead of 2 x): each release
  // round completes two phases, so the producers' parity waits lose step.
  check(c2k64, {130, 72, 320, false, 0, 2}, [&](ir::Operation& k) {
    each(k, "kern.mbarrier_init", [](ir::Operation& op) {
      if (op.intAttr("count", 1) == 8) op.setAttr("count", ir::Attribute(int64_t{4}));
    });
  }, "deadlock");
  // No release to the peer: its producer never sees the stage free.
  check(c2k64, {130, 72, 320, false, 0, 2}, [&](ir::Operation& k) {
    each(k, "kern.mbarrier_arrive_remote", [](ir::Operation& op) { op.erase(); });
  }, "deadlock");
  // No cluster barrier before the first remote access, or before exit.
  auto dropClusterBarrier = [](bool first) {
    return [first](ir::Operation& k) {
      std::vector<ir::Operation*> bars;
      k.walk([&](ir::Operation& op) {
        if (op.is("kern.cluster_barrier")) bars.push_back(&op);
      });
      (first ? bars.front() : bars.back())->erase();
    };
  };
  check(c2k64, {64, 64, 64, false, 0, 2}, dropClusterBarrier(true), "before a cluster barrier");
  check(c2k64, {64, 64, 64, false, 0, 2}, dropClusterBarrier(false), "exits while its peer");
  // cluster_n=4: the releases to one of the three peers missing (rank ^ 2): the peers it does not
  // reach never see their stages free.
  check(n4k64, {72, 328, 320, false, 0, 4}, [&](ir::Operation& k) {
    each(k, "kern.mbarrier_arrive_remote", [](ir::Operation& op) {
      int64_t j = -1;
      if (kern::constantInt(op.operand(2)->definingOp()->operand(1), j) && j == 2) op.erase();
    });
  }, "deadlock");
  // The A pieces multicast to rank 0 only: the other blocks' full barriers never get their bytes.
  check(n4k64, {72, 328, 320, false, 0, 4}, [&](ir::Operation& k) {
    each(k, "kern.tma_load", [](ir::Operation& op) {
      if (op.attr("multicast")) op.setAttr("multicast", ir::Attribute(int64_t{1}));
    });
  }, "deadlock");
}

// reuse_stage=true: each warpgroup's boxes past its two slots are staged in the B part of the ring
// stage the tile's K loop read last (a view of it); both consumer warpgroups meet at a 256-thread
// barrier first (the other's wgmmas may still read that stage), and the stage goes back to the
// producer only in the next tile's first K step, after the stores have read it.
const char* kReuse = "strategy=sm90_ws_persistent bm=128 bn=256 bk=64 stages=3 warps_m=2 warps_n=1 epilogue=tma reuse_stage=true";

TEST(Sm90Functional, ReuseStageStagesBoxesInTheRing) {
  check(kReuse, {264, 520, 200, false, 0, 2});  // 3 x 3 tiles on 2 blocks, 4 K steps on 3 stages: the last stage moves
  check(kReuse, {136, 264, 64, true, 0, 1});    // one K step per tile: every stage a tile's last, K-major B
  check(kReuse, {72, 256, 96, false, 2, 3});    // batched
  check(std::string(kReuse) + " stage_store=stmatrix", {200, 296, 192, false, 0, 2});
  // bn = 192: one box past the slots; one consumer warpgroup of 64 rows, two boxes past them.
  check("strategy=sm90_ws_persistent bm=128 bn=192 bk=64 stages=3 warps_m=2 warps_n=1 epilogue=tma reuse_stage=true",
        {200, 400, 192, false, 0, 2});
  check("strategy=sm90_ws_persistent bm=64 bn=256 bk=64 stages=2 warps_m=1 warps_n=1 epilogue=tma reuse_stage=true",
        {130, 264, 320, false, 0, 2});
  // cluster_m=2: the peer's multicast writes B into this block's stages, so both blocks' warps
  // give the stage back (locally and remotely), the deferred ones included.
  check(std::string(kReuse) + " cluster_m=2", {520, 264, 200, false, 0, 2});  // 5 M tiles: the pair walks 3 x 2 tiles
  check(std::string(kReuse) + " cluster_m=2", {264, 520, 64, true, 0, 2});    // one K step per tile
}

// Each of reuse_stage's three synchronizations, removed, is caught.
TEST(Sm90Functional, ReuseStageProtocolErrorsAreCaught) {
  const Problem p = {264, 520, 200, false, 0, 2};
  // The wait for the stores' reads before the stage goes back: the producer refills the stage
  // under a store still reading it.
  int dropped = 0;
  auto dropRingWait = [&](ir::Operation& k) {
    std::vector<ir::Operation*> waits;
    k.walk([&](ir::Operation& op) {
      if (op.is("kern.bulk_wait") && op.intAttr("pending", 1) == 0 && op.parentOp() &&
          op.parentOp()->parentOp() && op.parentOp()->parentOp()->parentOp() &&
          op.parentOp()->parentOp()->parentOp()->is("scf.for"))
        waits.push_back(&op);
    });
    for (ir::Operation* op : waits) op->erase();
    dropped = int(waits.size());
  };
  check(kReuse, p, dropRingWait, "a TMA store's source in shared memory (byte offset");
  EXPECT_EQ(dropped, 1) << "expected one ring wait inside the K loop";
  // The barrier of both consumer warpgroups: one stages boxes where the other's wgmmas still read.
  auto dropConsumersBarrier = [](ir::Operation& k) {
    std::vector<ir::Operation*> bars;
    k.walk([&](ir::Operation& op) {
      if (op.is("kern.named_barrier") && op.intAttr("threads", 0) == 256) bars.push_back(&op);
    });
    ASSERT_EQ(bars.size(), 1u);
    for (ir::Operation* op : bars) op->erase();
  };
  check(kReuse, p, dropConsumersBarrier, "hazard");
  // The deferred release itself: the producer never gets the stage back.
  auto dropDeferredRelease = [](ir::Operation& k) {
    std::vector<ir::Operation*> arrives;
    k.walk([&](ir::Operation& op) {
      const ir::Operation* in = op.parentOp();
      int depth = 0;
      for (; in && !in->is("scf.for"); in = in->parentOp()) ++depth;
      // The arrive two scf.if levels deep in the K loop (kt == 0 && iter > 0, then lane 0).
      if (op.is("kern.mbarrier_arrive") && in && depth == 2) arrives.push_back(&op);
    });
    ASSERT_EQ(arrives.size(), 1u);
    for (ir::Operation* op : arrives) op->erase();
  };
  check(kReuse, p, dropDeferredRelease, "deadlock");
}

}  // namespace
}  // namespace kiln
