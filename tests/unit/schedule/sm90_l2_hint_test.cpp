// l2_hint=reuse in sm90_ws_persistent, run in the warp-specialized simulator:
// which TMA copies load L2 evict_first (counted per tensor map), for which launches, and that the
// host's rule (sm90Streams, the heuristic's) agrees with the kernel's.
#include <gtest/gtest.h>

#include "schedule/config.h"
#include "tests/unit/schedule/sm90_sim_check.h"

namespace kiln {
namespace {
using namespace sm90sim;

// The host's statement of the streaming rule (the heuristic's, sm90Streams) agrees with what the
// kernel did: `streamed` holds the evict_first bytes the simulator counted per map (A, B).
void expectHostRuleAgrees(const std::string& cfg, const Problem& p, const std::vector<int64_t>& streamed) {
  Sm90Streams s = sm90Streams(Config::parse(cfg), p.m, p.n, p.k, p.kMajor, 2, 2);
  EXPECT_EQ(s.a, streamed.at(0) > 0) << cfg << " " << p.m << "x" << p.n << "x" << p.k;
  EXPECT_EQ(s.b, streamed.at(1) > 0) << cfg << " " << p.m << "x" << p.n << "x" << p.k;
}

// l2_hint=reuse: the loads of an operand no other block reads are evict_first when each K step's
// copies cover whole 128-byte L2 fills (the kernel decides from M, N and K); others are plain.
// Results are unchanged either way.
TEST(Sm90Functional, L2HintStreamsTheOperandNoOtherBlockReads) {
  const std::string k64x128 = "strategy=sm90_ws_persistent bm=64 bn=128 bk=64 stages=2 warps_m=1 warps_n=1";
  const std::string hinted = k64x128 + " l2_hint=reuse";
  const int64_t box = 64 * 64 * 2;  // bytes of one 64 x 64 box: bk rows of 64 columns of B, or of A
  std::vector<int64_t> streamed;
  auto agrees = [&](const std::string& cfg, const Problem& p) { expectHostRuleAgrees(cfg, p, streamed); };
  check(hinted, {64, 256, 128}, {}, "", &streamed);  // one tile row: each B tile has one reader
  EXPECT_EQ(streamed, (std::vector<int64_t>{0, 2 * 2 * 2 * box}));  // 2 N tiles x 2 K steps x 2 boxes
  agrees(hinted, {64, 256, 128});
  check(hinted, {72, 256, 128}, {}, "", &streamed);  // two tile rows read each B tile
  EXPECT_EQ(streamed, (std::vector<int64_t>{0, 0}));
  agrees(hinted, {72, 256, 128});
  check(hinted, {136, 64, 128}, {}, "", &streamed);  // one tile column: each A tile has one reader
  EXPECT_EQ(streamed, (std::vector<int64_t>{3 * 2 * box, 0}));  // 3 M tiles x 2 K steps
  agrees(hinted, {136, 64, 128});
  check(k64x128, {64, 256, 128}, {}, "", &streamed);  // l2_hint=none
  EXPECT_EQ(streamed, (std::vector<int64_t>{0, 0}));
  agrees(k64x128, {64, 256, 128});
  // A cluster pair reads each B tile once and multicasts it: M = 2 bm still streams B (each block
  // loads half of every box), M = 2 bm + 1 does not.
  const std::string pair = hinted + " cluster_m=2";
  check(pair, {128, 256, 128, false, 0, 2}, {}, "", &streamed);
  EXPECT_EQ(streamed, (std::vector<int64_t>{0, 2 * 2 * 2 * box}));
  agrees(pair, {128, 256, 128, false, 0, 2});
  check(pair, {129, 256, 128, false, 0, 2}, {}, "", &streamed);
  EXPECT_EQ(streamed, (std::vector<int64_t>{0, 0}));
  agrees(pair, {129, 256, 128, false, 0, 2});
  // A cluster_n=2 row of bn = 64 tiles: B streams at one tile row, A at one cluster column.
  const std::string row2 = std::string(k64) + " l2_hint=reuse cluster_n=2";
  check(row2, {64, 256, 128, false, 0, 2}, {}, "", &streamed);
  EXPECT_EQ(streamed, (std::vector<int64_t>{0, 4 * 2 * box}));  // 4 N tiles x 2 K steps x 1 box
  agrees(row2, {64, 256, 128, false, 0, 2});
  check(row2, {72, 256, 128, false, 0, 2}, {}, "", &streamed);
  EXPECT_EQ(streamed, (std::vector<int64_t>{0, 0}));
  agrees(row2, {72, 256, 128, false, 0, 2});
}

// A streamed operand's map fills 128-byte lines, so copies that cover whole lines stream: a lone
// bn = 64 tile's B, A at one tile column, K-major B; rows that do not start on lines (N = 200 or
// K = 200: 400 bytes) do not.
TEST(Sm90Functional, RowsOnLinesDecideWhichCopiesStream) {
  const int64_t box = 64 * 64 * 2;  // bytes of one 64 x 64 box, A's or B's
  std::vector<int64_t> streamed;
  const std::string line = std::string(k64) + " l2_hint=reuse";
  struct Case {
    Problem p;
    std::vector<int64_t> bytes;  // streamed A, B
  };
  const std::vector<Case> cases = {
      {{64, 256, 128}, {0, 4 * 2 * box}},          // 4 N tiles x 2 K steps
      {{136, 64, 128}, {3 * 2 * box, 0}},          // A: one tile column, 3 M tiles
      {{64, 256, 128, true}, {0, 4 * 2 * box}},    // K-major B: 128-byte rows of K
      {{64, 200, 128}, {0, 0}},                    // rows of 400 bytes
      {{136, 64, 200}, {0, 0}},                    // rows of 400 bytes
      {{72, 256, 128}, {0, 0}},                    // two tile rows read each B tile
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(line + " at " + std::to_string(c.p.m) + "x" + std::to_string(c.p.n) + "x" + std::to_string(c.p.k));
    check(line, c.p, {}, "", &streamed);
    EXPECT_EQ(streamed, c.bytes);
    expectHostRuleAgrees(line, c.p, streamed);
  }
}

}  // namespace
}  // namespace kiln
