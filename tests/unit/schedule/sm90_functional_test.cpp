// The sm90_ws_persistent pipeline, run on the CPU by the warp-specialized simulator
// (tests/unit/testing/ws_sim.h: mbarriers, TMA with the 128B swizzle and zero fill, wgmma from
// descriptors through the PTX ISA's canonical layouts, roles taking turns so the producer runs as
// far ahead as the barriers let it, and a hazard check on all shared memory a wgmma or a TMA store
// read). Every element of C is checked against a double-precision reference: ragged M, N and K, both
// B layouts, fewer blocks than tiles (the persistent loop wraps and the ring carries over between
// tiles), both rasters, one and two consumer warpgroups, two m64 blocks per warpgroup, batched.
// Outputs start poisoned and a guard after C must stay untouched; unwritten shared memory reads as
// NaN.
#include <gtest/gtest.h>
#include <gtest/gtest-spi.h>

#include <cmath>
#include <functional>
#include <cstring>
#include <random>

#include "examples/examples.h"
#include "kiln/compile.h"
#include "kiln/float_formats.h"
#include "kiln/ir/parser.h"
#include "kiln/kernel.h"
#include "dialects/kern/int_range.h"
#include "ops/gemm_bf16.h"
#include "tests/unit/testing/ws_sim.h"

namespace kiln {
namespace {

struct Problem {
  int64_t m, n, k;
  bool kMajor = false;
  int64_t batch = 0;  // > 0: the batched program, dim "B"
  uint32_t blocks = 0;  // 0: one per tile (capped at 4)
};

constexpr uint16_t kPoison = 0xFFC1;
constexpr int64_t kGuard = 64;

std::vector<uint8_t> bytesOf(const std::vector<uint16_t>& v) {
  std::vector<uint8_t> b(v.size() * 2);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// `mutate` edits the compiled kernel before it runs (to show the simulator catches a broken
// protocol); then the simulator must report an error containing `expectError`.
// `evictFirstBytes` (optional) receives, per tensor map (A, B(, C)), the bytes its TMA loads read
// under an L2 evict_first policy.
void check(const std::string& configText, const Problem& p,
           const std::function<void(ir::Operation& kernel)>& mutate = {}, const std::string& expectError = "",
           std::vector<int64_t>* evictFirstBytes = nullptr) {
  Config config = Config::parse(configText);
  auto program = p.batch ? examples::batchedGemm() : p.kMajor ? examples::gemmKMajorB() : examples::gemmBf16();
  ir::DiagnosticEngine diag;
  auto r = compile(*program, Target::sm90a(), config, diag);
  ASSERT_TRUE(r) << diag.str();
  auto kern = ir::parseModule(r->kernIr, diag);
  ASSERT_TRUE(kern) << diag.str();
  std::map<std::string, int64_t> dims = {{"M", p.m}, {"N", p.n}, {"K", p.k}};
  int64_t nb = std::max<int64_t>(1, p.batch);
  if (p.batch) dims["B"] = p.batch;
  ASSERT_TRUE(r->launch.validate(dims, diag)) << diag.str();

  std::mt19937 rng(uint32_t(p.m * 131 + p.n * 7 + p.k));
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  auto randomBf16 = [&](size_t n) {
    std::vector<uint16_t> v(n);
    for (auto& x : v) x = floatToBf16Bits(dist(rng) + (dist(rng) > 0 ? 0.01f : -0.01f));
    return v;
  };
  auto a = randomBf16(size_t(nb * p.m * p.k)), b = randomBf16(size_t(nb * p.k * p.n));
  testing::GlobalMemory mem;
  uint64_t da = mem.add(bytesOf(a)), db = mem.add(bytesOf(b));
  uint64_t dc = mem.add(bytesOf(std::vector<uint16_t>(size_t(nb * p.m * p.n + kGuard), kPoison)));
  std::vector<uint64_t> tensors = {da, db, dc};

  testing::WsLaunch launch;
  int64_t units = r->launch.gridFor(dims)[0];  // tiles (times split_k's slices, or stream_k's K steps)
  launch.blocks = p.blocks ? p.blocks : uint32_t(std::min<int64_t>(units, 4));
  uint64_t flags = 0;
  size_t flagCount = 0;
  launch.kernel = kern->body().front();
  if (mutate) mutate(*kern->body().front());
  auto sig = signatureOf(*program->body().front(), r->launch);
  for (const auto& prm : r->launch.params) {
    if (prm.kind == KernelParam::Kind::Pointer) {
      launch.args.push_back(prm.name == "A" ? da : prm.name == "B" ? db : dc);
    } else if (prm.kind == KernelParam::Kind::TensorMap) {  // A, B and (epilogue=tma) C
      launch.args.push_back(launch.maps.size());
      launch.maps.push_back(tensorMapDescFor(prm, sig, tensors, dims));
    } else if (prm.kind == KernelParam::Kind::Workspace) {  // split_k: flags zero, partials poisoned
      auto [flagBytes, partialBytes] = r->launch.workspaceBytes(dims, int(launch.blocks));
      if (prm.name == "ws_flags") {
        flags = mem.add(std::vector<uint8_t>(size_t(flagBytes), 0));
        launch.args.push_back(flags);
        flagCount = size_t(flagBytes / 4);
      } else {
        launch.args.push_back(mem.add(std::vector<uint8_t>(size_t(partialBytes), 0xFF)));
      }
    } else {
      launch.args.push_back(uint32_t(int32_t(dims.at(prm.name))));
    }
  }
  if (evictFirstBytes) {
    evictFirstBytes->assign(launch.maps.size(), 0);
    launch.evictFirstBytes = evictFirstBytes;
  }
  std::string err = testing::simulateWarpSpecialized(launch, mem);
  if (!expectError.empty()) {
    EXPECT_NE(err.find(expectError), std::string::npos) << configText << ": " << err;
    return;
  }
  ASSERT_EQ(err, "") << configText;

  std::vector<uint16_t> c(size_t(nb * p.m * p.n + kGuard));
  std::memcpy(c.data(), mem.at(dc).data(), c.size() * 2);
  int bad = 0;
  for (int64_t bi = 0; bi < nb; ++bi)
    for (int64_t i = 0; i < p.m && bad < 5; ++i)
      for (int64_t j = 0; j < p.n && bad < 5; ++j) {
        double acc = 0;
        const uint16_t* ab = a.data() + bi * p.m * p.k;
        const uint16_t* bb = b.data() + bi * p.k * p.n;
        for (int64_t kk = 0; kk < p.k; ++kk)
          acc += double(bf16BitsToFloat(ab[size_t(i * p.k + kk)])) *
                 double(bf16BitsToFloat(bb[size_t(p.kMajor ? j * p.k + kk : kk * p.n + j)]));
        double got = bf16BitsToFloat(c[size_t((bi * p.m + i) * p.n + j)]);
        double tol = std::fabs(acc) / 128 + 1e-3 * std::sqrt(double(p.k));
        if (!(std::fabs(got - acc) <= tol)) {
          ++bad;
          ADD_FAILURE() << "[" << configText << "] " << p.m << "x" << p.n << "x" << p.k << (p.kMajor ? " K-major" : "")
                        << ": C[" << bi << "][" << i << "][" << j << "] = " << got << ", expected " << acc;
        }
      }
  for (size_t i = size_t(nb * p.m * p.n); i < c.size(); ++i)
    if (c[i] != kPoison) {
      ADD_FAILURE() << "wrote past the end of C at element " << i;
      break;
    }
  // split_k, stream_k: every flag is back to zero, ready for the next launch.
  for (size_t i = 0; i < flagCount; ++i) {
    int32_t f;
    std::memcpy(&f, mem.at(flags).data() + 4 * i, 4);
    if (f != 0) {
      ADD_FAILURE() << "workspace flag " << i << " is " << f << " after the launch, not 0";
      break;
    }
  }
}

const char* k128 = "strategy=sm90_ws_persistent bm=128 bn=128 bk=64 stages=3 warps_m=2 warps_n=1 raster=grouped group_m=2";
const char* k64 = "strategy=sm90_ws_persistent bm=64 bn=64 bk=64 stages=2 warps_m=1 warps_n=1";

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

TEST(Sm90Functional, Batched) { check(k64, {72, 64, 96, false, 2, 3}); }

// epilogue=tma: the output staged in shared memory per consumer warpgroup and stored by TMA, which
// clips it at the tensor's edges (the guard after C must stay poisoned).
TEST(Sm90Functional, TmaStoreEpilogue) {
  check(std::string(k128) + " epilogue=tma", {200, 136, 264, false, 0, 2});
  check(std::string(k64) + " epilogue=tma", {130, 72, 320, true, 0, 2});
  check("strategy=sm90_ws_persistent bm=256 bn=128 bk=64 stages=2 warps_m=2 warps_n=1 epilogue=tma",
        {264, 136, 128, false, 0, 1});
  check(std::string(k64) + " epilogue=tma", {72, 64, 96, false, 2, 3});  // batched: 3-D output map
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

// The host's statement of the streaming rule (the heuristic's, sm90Streams) agrees with what the
// kernel did: `streamed` holds the evict_first bytes the simulator counted per map (A, B).
void expectHostRuleAgrees(const std::string& cfg, const Problem& p, const std::vector<int64_t>& streamed) {
  Sm90Streams s = sm90Streams(Config::parse(cfg), p.m, p.n, p.k, p.kMajor, 2, 2);
  EXPECT_EQ(s.a, streamed.at(0) > 0) << cfg << " " << p.m << "x" << p.n << "x" << p.k;
  EXPECT_EQ(s.b, streamed.at(1) > 0) << cfg << " " << p.m << "x" << p.n << "x" << p.k;
}

// l2_hint=reuse: the loads of an operand no other block reads are evict_first when each K step's
// copies cover whole L2 fills (the kernel decides from M, N and K); others are plain. Here with
// stream_fill=256, whose whole 256-byte segments only row-major B can cover (the default, 128,
// below). Results are unchanged either way.
TEST(Sm90Functional, L2HintStreamsTheOperandNoOtherBlockReads) {
  const std::string k64x128 = "strategy=sm90_ws_persistent bm=64 bn=128 bk=64 stages=2 warps_m=1 warps_n=1";
  const std::string hinted = k64x128 + " l2_hint=reuse stream_fill=256";
  const int64_t bBox = 64 * 64 * 2;  // bytes of one B box: bk rows of 64 columns
  std::vector<int64_t> streamed;
  auto agrees = [&](const std::string& cfg, const Problem& p) { expectHostRuleAgrees(cfg, p, streamed); };
  check(hinted, {64, 256, 128}, {}, "", &streamed);  // one tile row: each B tile has one reader
  EXPECT_EQ(streamed, (std::vector<int64_t>{0, 2 * 2 * 2 * bBox}));  // 2 N tiles x 2 K steps x 2 boxes
  agrees(hinted, {64, 256, 128});
  check(hinted, {72, 256, 128}, {}, "", &streamed);  // two tile rows read each B tile
  EXPECT_EQ(streamed, (std::vector<int64_t>{0, 0}));
  agrees(hinted, {72, 256, 128});
  check(hinted, {64, 200, 128}, {}, "", &streamed);  // rows of 400 bytes do not start on segments
  EXPECT_EQ(streamed, (std::vector<int64_t>{0, 0}));
  agrees(hinted, {64, 200, 128});
  check(hinted, {64, 256, 128, true}, {}, "", &streamed);  // K-major B: 128-byte rows per K step
  EXPECT_EQ(streamed, (std::vector<int64_t>{0, 0}));
  agrees(hinted, {64, 256, 128, true});
  check(hinted, {136, 64, 128}, {}, "", &streamed);  // one tile column, but A's rows are 128 bytes per K step
  EXPECT_EQ(streamed, (std::vector<int64_t>{0, 0}));
  agrees(hinted, {136, 64, 128});
  check(std::string(k64) + " l2_hint=reuse stream_fill=256", {64, 256, 128}, {}, "", &streamed);  // bn = 64: half a segment
  EXPECT_EQ(streamed, (std::vector<int64_t>{0, 0}));
  agrees(std::string(k64) + " l2_hint=reuse stream_fill=256", {64, 256, 128});
  check(k64x128, {64, 256, 128}, {}, "", &streamed);  // l2_hint=none
  EXPECT_EQ(streamed, (std::vector<int64_t>{0, 0}));
  agrees(k64x128, {64, 256, 128});
  // A cluster pair reads each B tile once and multicasts it: M = 2 bm still streams B (each block
  // loads half of every box), M = 2 bm + 1 does not.
  const std::string pair = hinted + " cluster_m=2";
  check(pair, {128, 256, 128, false, 0, 2}, {}, "", &streamed);
  EXPECT_EQ(streamed, (std::vector<int64_t>{0, 2 * 2 * 2 * bBox}));
  agrees(pair, {128, 256, 128, false, 0, 2});
  check(pair, {129, 256, 128, false, 0, 2}, {}, "", &streamed);
  EXPECT_EQ(streamed, (std::vector<int64_t>{0, 0}));
  agrees(pair, {129, 256, 128, false, 0, 2});
  // A cluster_n=2 row of bn = 64 tiles covers 128 columns: whole segments, so B streams at one tile
  // row; alone (no cluster) the same tile does not (above).
  const std::string row2 = std::string(k64) + " l2_hint=reuse stream_fill=256 cluster_n=2";
  check(row2, {64, 256, 128, false, 0, 2}, {}, "", &streamed);
  EXPECT_EQ(streamed, (std::vector<int64_t>{0, 4 * 2 * bBox}));  // 4 N tiles x 2 K steps x 1 box
  agrees(row2, {64, 256, 128, false, 0, 2});
  check(row2, {72, 256, 128, false, 0, 2}, {}, "", &streamed);
  EXPECT_EQ(streamed, (std::vector<int64_t>{0, 0}));
  agrees(row2, {72, 256, 128, false, 0, 2});
}

// stream_fill=128: a streamed operand's map fills 128-byte lines, so copies that cover whole lines
// stream: a lone bn = 64 tile's B, A at one tile column, K-major B; rows that do not start on lines
// (N = 200: 400 bytes) do not. stream_fill=sector (no promotion): every operand no other block reads.
TEST(Sm90Functional, StreamFillDecidesWhichCopiesStream) {
  const int64_t box = 64 * 64 * 2;  // bytes of one 64 x 64 box, A's or B's
  std::vector<int64_t> streamed;
  const std::string line = std::string(k64) + " l2_hint=reuse stream_fill=128";
  const std::string sector = std::string(k64) + " l2_hint=reuse stream_fill=sector";
  struct Case {
    const std::string& cfg;
    Problem p;
    std::vector<int64_t> bytes;  // streamed A, B
  };
  const std::vector<Case> cases = {
      {line, {64, 256, 128}, {0, 4 * 2 * box}},          // 4 N tiles x 2 K steps
      {line, {136, 64, 128}, {3 * 2 * box, 0}},          // A: one tile column, 3 M tiles
      {line, {64, 256, 128, true}, {0, 4 * 2 * box}},    // K-major B: 128-byte rows of K
      {line, {64, 200, 128}, {0, 0}},                    // rows of 400 bytes
      {line, {136, 64, 200}, {0, 0}},                    // rows of 400 bytes
      {line, {72, 256, 128}, {0, 0}},                    // two tile rows read each B tile
      {sector, {64, 200, 128}, {0, 4 * 2 * box}},
      {sector, {136, 64, 200}, {3 * 4 * box, 0}},       // 4 K steps
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.cfg + " at " + std::to_string(c.p.m) + "x" + std::to_string(c.p.n) + "x" + std::to_string(c.p.k));
    check(c.cfg, c.p, {}, "", &streamed);
    EXPECT_EQ(streamed, c.bytes);
    expectHostRuleAgrees(c.cfg, c.p, streamed);
  }
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

// Protocol breakers for the hand-over tests: every op `name` erased; the flag reset erased.
std::function<void(ir::Operation&)> dropAll(const char* name) {
  return [name](ir::Operation& k) {
    std::vector<ir::Operation*> ops;
    k.walk([&](ir::Operation& op) {
      if (op.is(name)) ops.push_back(&op);
    });
    for (ir::Operation* op : ops) op->erase();
  };
}

void dropFlagReset(ir::Operation& k) {
  std::vector<ir::Operation*> resets;
  k.walk([&](ir::Operation& op) {
    if (op.is("kern.st_global") && op.operand(0)->type().elem() == ir::ScalarType::I32) resets.push_back(&op);
  });
  ASSERT_EQ(resets.size(), 1u);
  resets.front()->erase();
}

// split_k=S: each tile's K steps in S slices on consecutive units; the slices but the last hand their
// sums over through the workspace and a flag, the last adds them and runs the epilogue (and leaves
// the flag zero: check() verifies). Blocks run together, so a slice can wait on another block's, and
// every read of another block's sums is checked against the releases and acquires before it.
TEST(Sm90Functional, SplitKSlicesSumThroughTheWorkspace) {
  check(std::string(k64) + " split_k=2", {130, 72, 320, false, 0, 2});   // 5 K steps: slices of 3 and 2 (+1 zero-filled)
  check(std::string(k64) + " split_k=3", {64, 64, 640, false, 0, 1});    // one block: the slices in turn
  check(std::string(k128) + " split_k=3", {200, 136, 264, false, 0, 3}); // two consumer groups, one flag each
  check(std::string(k128) + " split_k=2 epilogue=tma", {136, 200, 200, true, 0, 4});
  check(std::string(k128) + " split_k=2 consumers=pingpong", {264, 136, 512, false, 0, 3});
  check(std::string(k64) + " split_k=2 epilogue=tma", {72, 64, 200, false, 2, 3});  // batched
  check(std::string(k64) + " split_k=4", {64, 64, 64, false, 0, 3});  // one K step: slices 1..3 wholly past K
}

// The simulator can fail: each edit below breaks the split-K protocol.
TEST(Sm90Functional, SplitKProtocolErrorsAreCaught) {
  const std::string sk = std::string(k64) + " split_k=2";
  // No release: the finishing slice waits forever.
  check(sk, {130, 72, 320, false, 0, 2}, dropAll("kern.red_release"), "deadlock");
  // No wait: the finishing slice reads sums it has not acquired (the simulator tracks which block
  // wrote each global word and which releases each block has acquired).
  check(sk, {130, 72, 320, false, 0, 2}, dropAll("kern.spin_wait"), "without acquiring that release first");
  // No reset: the flag is left at 1, and the next launch's finishing slice would not wait.
  EXPECT_NONFATAL_FAILURE(check(sk, {64, 64, 320, false, 0, 2}, dropFlagReset), "flag 0 is 1 after the launch");
}

// split_handover=cluster: a tile's S slices are the S blocks of one cluster (the grid a whole
// number of clusters: blocks are given explicitly); the slices but the last store their sums in
// their own shared memory, the last reads them from there (DSMEM) and gives the regions back. Every
// remote read, and every store over a word a peer has read, is checked against the cluster-scope
// releases and acquires before it.
TEST(Sm90Functional, SplitKSlicesSumThroughTheCluster) {
  const std::string cs = " split_handover=cluster";
  check(std::string(k64) + " split_k=2" + cs, {130, 72, 320, false, 0, 2});   // one cluster, 6 tiles in turn
  check(std::string(k64) + " split_k=3" + cs, {64, 64, 640, false, 0, 3});    // one tile
  check(std::string(k64) + " split_k=3" + cs, {130, 72, 320, false, 0, 6});   // two clusters
  check(std::string(k128) + " split_k=2" + cs, {200, 136, 264, false, 0, 4}); // two consumer groups, a region each
  check(std::string(k128) + " split_k=2 epilogue=tma" + cs, {136, 200, 200, true, 0, 4});
  check(std::string(k64) + " split_k=2 epilogue=tma" + cs, {72, 64, 200, false, 2, 2});  // batched
  check(std::string(k64) + " split_k=4" + cs, {64, 64, 64, false, 0, 4});  // one K step: slices 1..3 wholly past K
}

// The simulator can fail: each edit below breaks the cluster hand-over.
TEST(Sm90Functional, SplitKClusterProtocolErrorsAreCaught) {
  const std::string sk = std::string(k64) + " split_k=2 split_handover=cluster";
  const Problem twoTilesPerBlock = {130, 72, 320, false, 0, 2};
  auto onBarrier = [](const char* op, const char* bars, const std::function<void(ir::Operation&)>& f) {
    return [=](ir::Operation& k) {
      std::vector<ir::Operation*> ops;
      k.walk([&](ir::Operation& o) {
        if (o.is(op) && o.operand(0)->definingOp()->result()->nameHint() == bars) ops.push_back(&o);
      });
      ASSERT_FALSE(ops.empty()) << op << " on " << bars;
      for (ir::Operation* o : ops) f(*o);
    };
  };
  auto erase = [](ir::Operation& o) { o.erase(); };
  // No wait for the sums: the last slice reads words it has not acquired.
  check(sk, twoTilesPerBlock, onBarrier("kern.mbarrier_wait", "pfull", erase),
        "a block read shared memory another block stored to");
  // No wait for the region back: a slice overwrites sums the last slice read without acquiring
  // its release (the next tile's sums over the previous one's).
  check(sk, twoTilesPerBlock, onBarrier("kern.mbarrier_wait", "pempty", erase),
        "a block stored to shared memory another block had read");
  // No arrive: the last slice waits forever.
  check(sk, twoTilesPerBlock, onBarrier("kern.mbarrier_arrive_remote", "pfull", erase), "deadlock");
  // A CTA-scope arrive does not release the sums to another block.
  check(sk, twoTilesPerBlock,
        onBarrier("kern.mbarrier_arrive_remote", "pfull", [](ir::Operation& o) { o.removeAttr("scope"); }),
        "has not released since");
  // No cluster barrier before exit: a slice may exit while the last one still reads its sums.
  check(sk, {64, 64, 640, false, 0, 2}, [](ir::Operation& k) {
    std::vector<ir::Operation*> bars;
    k.walk([&](ir::Operation& op) {
      if (op.is("kern.cluster_barrier")) bars.push_back(&op);
    });
    bars.back()->erase();
  }, "exits while its peer");
}

// stream_k=W: data-parallel waves, then each block's run of K steps over the last W waves' tiles; a
// run's last unit that ends inside a tile hands its sums over through the block's slot, and the
// unit that ends the tile (walked last when it begins the run) waits for the lower blocks that
// hold the tile's earlier steps.
TEST(Sm90Functional, StreamKRunsSumThroughTheWorkspace) {
  const std::string sk64 = std::string(k64) + " stream_k=2", sk128 = std::string(k128) + " stream_k=2";
  const std::string tail64 = std::string(k64) + " stream_k=1";
  check(sk64, {130, 72, 320, false, 0, 4});   // 6 tiles x 5 steps on 4 blocks: no waves, runs of 7-8 steps
  check(sk64, {130, 72, 320, false, 0, 2});   // 6 tiles on 2 blocks: 3 whole waves, no run
  check(sk64, {130, 136, 320, false, 0, 3});  // 9 tiles on 3 blocks: whole waves
  check(sk64, {200, 72, 320, false, 0, 3});   // 8 tiles on 3 blocks: 1 wave, then 5 tiles in runs
  check(tail64, {200, 72, 320, false, 0, 3}); // stream_k=1: 2 waves, then 2 tiles in runs of 3-4 steps
  check(tail64, {200, 136, 640, false, 0, 5});// 16 tiles on 5 blocks: 3 waves, 1 tile over 5 blocks (4 peers)
  check(sk64, {64, 64, 640, false, 0, 3});    // 1 tile of 10 steps on 3 blocks: head, middle, tail (2 peers)
  check(sk64, {64, 64, 192, false, 0, 3});    // 3 steps on 3 blocks: a step each
  check(sk64, {64, 64, 320, false, 0, 1});    // one block: the tile whole
  check(sk128, {200, 136, 264, false, 0, 3}); // two consumer groups, one flag and slot each
  check(sk128 + " epilogue=tma", {136, 200, 392, true, 0, 3});
  check(sk64 + " epilogue=tma", {72, 64, 200, false, 3, 4});  // batched: 6 tiles of 4 steps
}

// The simulator can fail: each edit below breaks the stream-K hand-over.
TEST(Sm90Functional, StreamKProtocolErrorsAreCaught) {
  const std::string sk = std::string(k64) + " stream_k=2";
  check(sk, {130, 72, 320, false, 0, 4}, dropAll("kern.red_release"), "deadlock");
  check(sk, {130, 72, 320, false, 0, 4}, dropAll("kern.spin_wait"), "without acquiring that release first");
  // No reset: a contributing block's flag is left at 1 for the next launch.
  EXPECT_NONFATAL_FAILURE(check(sk, {64, 64, 640, false, 0, 3}, dropFlagReset), "is 1 after the launch");
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

// The simulator can fail: a TMA store reads its box from shared memory asynchronously, until
// cp.async.bulk.wait_group.read retires its group. Without the wait before a staging slot is reused
// (pending = cSlots - 1 = 1 for bn = 256: four boxes through two slots), the third box overwrites the
// first while the first box's store may still be reading it.
TEST(Sm90Functional, TmaStoreSourceOverwrittenBeforeItsWaitIsCaught) {
  const std::string cfg =
      "strategy=sm90_ws_persistent bm=128 bn=256 bk=64 stages=4 warps_m=2 warps_n=1 raster=grouped group_m=8 "
      "epilogue=tma";
  const Problem p = {200, 520, 128, false, 0, 2};  // 2 x 3 tiles on 2 blocks: slots reused within and across tiles
  check(cfg, p);  // intact, it passes
  int dropped = 0;
  auto dropSlotWaits = [&](ir::Operation& k) {
    std::vector<ir::Operation*> waits;
    k.walk([&](ir::Operation& op) {
      if (op.is("kern.bulk_wait") && op.intAttr("pending", 0) == 1) waits.push_back(&op);
    });
    for (ir::Operation* op : waits) op->erase();
    dropped = int(waits.size());
  };
  check(cfg, p, dropSlotWaits, "a TMA store's source in shared memory (byte offset");
  EXPECT_GT(dropped, 0) << "no kern.bulk_wait {pending = 1} to drop: the test no longer mutates anything";
  // No wait at all, not even before exit: the groups still outstanding when the block ends are checked.
  check(cfg, p, dropAll("kern.bulk_wait"), "by the block's end");
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

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
