// expand-tile-loop's {ragged, stream_k} walk (kern_ops.h): the tile count T is summed from the
// bounds on the device, and the T tiles are walked as {stream_k} walks a dense loop's. Here the
// expanded kernel, run by the warp-specialized simulator, must give every block exactly the units
// a host model gives: the groups' tile rows counted from the clamped bounds, the simulator's own
// stream-K walk over T tiles (streamKWalk, written from kern_ops.h independently of the pass),
// and each unit's tile placed in its group's own grid of tile rows x columns (row or grouped raster:
// a band of group_m tile rows never spans two groups). Bounds with
// empty groups, groups shorter than a tile, tile counts that fill whole waves, a partial last wave
// and less than one wave, and bad bounds (decreasing, past M).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"
#include "schedule/pipeline.h"
#include "tests/unit/testing/ws_sim.h"

namespace kiln::transforms {
namespace {

constexpr int64_t kMaxUnits = 64;  // per block: the record's slots
constexpr int64_t kFields = 10;    // units so far, then the nine body arguments

struct Case {
  std::vector<int32_t> bounds;
  bool counts = false;
  int64_t m, n, ktiles, blocks, w = 1;  // w 0: the data-parallel walk (no stream_k)
  int64_t bm = 64, bn = 64, groupM = 0;  // groupM 0: raster "row"
  std::string str() const {
    std::string b;
    for (int32_t v : bounds) b += std::to_string(v) + " ";
    return std::string(counts ? "counts " : "offsets ") + b + "M " + std::to_string(m) + " N " + std::to_string(n) +
           " ktiles " + std::to_string(ktiles) + " blocks " + std::to_string(blocks) + " W " + std::to_string(w) +
           " group_m " + std::to_string(groupM);
  }
};

std::string kernelText(const Case& c) {
  std::string attrs = "tile = [" + std::to_string(c.bm) + ", " + std::to_string(c.bn) + "], raster = \"" +
                      (c.groupM ? "grouped\", group_m = " + std::to_string(c.groupM) : std::string("row\"")) +
                      ", ragged = \"" + (c.counts ? "counts" : "offsets") + "\"" +
                      (c.w ? ", stream_k = " + std::to_string(c.w) : std::string());
  std::vector<std::string> names = {"iter", "m0", "n0", "g", "mend", "kbase", "ksteps", "done", "peers"};
  if (!c.w) names.resize(5);  // the data-parallel walk's body
  std::string t = "kern.kernel() {sym_name = \"walk\", params = [\"C\", \"O\", \"M\", \"N\", \"G\", \"KT\"], threads = "
                  "128, smem_bytes = 0, grid = [1]} {\n"
                  "^bb0(%C: ptr<i32>, %O: ptr<i32>, %M: i32, %N: i32, %G: i32, %KT: i32):\n"
                  "  %one = arith.constant() {value = 1} : i32\n"
                  "  %slots = arith.constant() {value = " + std::to_string(kMaxUnits * kFields) + "} : i64\n"
                  "  %width = arith.constant() {value = " + std::to_string(kFields) + "} : i64\n"
                  "  %bid = kern.block_id() {dim = \"x\"} : i32\n"
                  "  %bid64 = arith.cast(%bid) : i64\n"
                  "  %base = arith.muli(%bid64, %slots) : i64\n"
                  "  %tid = kern.thread_id() : i32\n"
                  "  %zero = arith.constant() {value = 0} : i32\n"
                  "  %first = arith.cmpi(%tid, %zero) {pred = \"eq\"} : i1\n"
                  "  kern.tile_loop(%M, %N, %G, %O" + std::string(c.w ? ", %KT" : "") + ") {" + attrs + "} {\n"
                  "  ^bb0(%iter: i32, %m0: i32, %n0: i32, %g: i32, %mend: i32" +
                  (c.w ? ", %kbase: i32, %ksteps: i32, %done: i32, %peers: i32" : "") + "):\n"
                  "    %it = arith.cast(%iter) : i64\n"
                  "    %row = arith.muli(%it, %width) : i64\n"
                  "    %at = arith.addi(%base, %row) : i64\n"
                  "    %p = kern.ptr_add(%C, %at) : ptr<i32>\n"
                  "    %units = arith.addi(%iter, %one) : i32\n"
                  "    kern.st_global(%p, %first, %units)\n";
  for (size_t i = 0; i < names.size(); ++i) {
    std::string j = std::to_string(i + 1);
    t += "    %o" + j + " = arith.constant() {value = " + j + "} : i64\n"
         "    %p" + j + " = kern.ptr_add(%p, %o" + j + ") : ptr<i32>\n"
         "    kern.st_global(%p" + j + ", %first, %" + names[i] + ")\n";
  }
  return t + "  }\n}\n";
}

// The host model: every block's record, as the expanded kernel should write it.
std::vector<int32_t> model(const Case& c) {
  struct Group {
    int64_t group, lo, end, tm, base;  // its rows [lo, end), tile rows, tiles before it
  };
  std::vector<Group> groups;  // each group's tiles, the groups in order
  int64_t end = 0, tn = (c.n + c.bn - 1) / c.bn, tiles = 0;
  for (size_t g = 0; g < c.bounds.size(); ++g) {
    int64_t lo = c.counts ? 0 : end;
    int64_t hi = std::min<int64_t>(std::max<int64_t>(c.bounds[g], lo), c.m);
    groups.push_back({int64_t(g), lo, hi, (hi - lo + c.bm - 1) / c.bm, tiles});
    tiles += groups.back().tm * tn;
    end = hi;
  }
  std::vector<int32_t> rec(size_t(c.blocks * kMaxUnits * kFields), int32_t(0xA5A5A5A5));
  for (int64_t bx = 0; bx < c.blocks; ++bx) {
    std::vector<testing::StreamKUnit> units;
    if (c.w) {
      units = testing::streamKWalk(tiles, c.ktiles, c.blocks, bx, c.w);
    } else {  // data-parallel: tiles bx, bx + P, ...
      for (int64_t t = bx; t < tiles; t += c.blocks) units.push_back({t, 0, 0, 0, 0});
    }
    EXPECT_LE(int64_t(units.size()), kMaxUnits);
    for (size_t i = 0; i < units.size() && int64_t(i) < kMaxUnits; ++i) {
      const testing::StreamKUnit& u = units[i];
      const Group& r = *std::find_if(groups.begin(), groups.end(),
                                     [&](const Group& g) { return u.tile < g.base + g.tm * tn; });
      const int64_t t = u.tile - r.base, tm = r.tm;
      int64_t pm = t / tn, pn = t % tn;
      if (c.groupM) {  // the dense grouped raster over the group's own tm x tn grid
        int64_t width = c.groupM * tn, first = t / width * c.groupM, size = std::min(tm - first, c.groupM);
        pm = first + t % width % size;
        pn = t % width / size;
      }
      const int64_t f[kFields] = {int64_t(i) + 1, int64_t(i), r.lo + pm * c.bm, pn * c.bn, r.group, r.end,
                                  u.kbase,        u.ksteps,   u.done,  u.peers};
      for (int64_t j = 0; j < (c.w ? kFields : 6); ++j) rec[size_t((bx * kMaxUnits + int64_t(i)) * kFields + j)] = int32_t(f[j]);
    }
  }
  return rec;
}

void checkWalk(const Case& c) {
  SCOPED_TRACE(c.str());
  ir::DiagnosticEngine diag;
  auto module = ir::parseModule(kernelText(c), diag);
  ASSERT_TRUE(module && ir::verify(*module, diag)) << diag.str() << kernelText(c);
  ASSERT_TRUE(pipeline::runPass("expand-tile-loop", *module, diag)) << diag.str();
  ASSERT_TRUE(ir::verify(*module, diag)) << diag.str() << ir::toString(*module);
  bool loopLeft = false;
  module->op().walk([&](const ir::Operation& op) { loopLeft |= op.is("kern.tile_loop"); });
  ASSERT_FALSE(loopLeft) << ir::toString(*module);

  testing::GlobalMemory mem;
  uint64_t out = mem.add(std::vector<uint8_t>(size_t(c.blocks * kMaxUnits * kFields * 4), 0xA5));
  std::vector<uint8_t> bounds(c.bounds.size() * 4);
  std::memcpy(bounds.data(), c.bounds.data(), bounds.size());
  uint64_t o = mem.add(bounds);
  testing::WsLaunch l;
  l.kernel = module->body().front();
  l.args = {out, o, uint64_t(uint32_t(c.m)), uint64_t(uint32_t(c.n)), uint64_t(c.bounds.size()), uint64_t(c.ktiles)};
  l.blocks = uint32_t(c.blocks);
  ASSERT_EQ(testing::simulateWarpSpecialized(l, mem), "");
  std::vector<int32_t> want = model(c), got(want.size());
  std::memcpy(got.data(), mem.at(out).data(), got.size() * 4);
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_EQ(got[i], want[i]) << "block " << i / (kMaxUnits * kFields) << ", unit " << i / kFields % kMaxUnits
                               << ", field " << i % kFields
                               << " (0: units so far, then iter, m0, n0, group, mend, kbase, ksteps, done, peers)";
}

TEST(ExpandRaggedStreamK, UnitsMatchTheStreamKWalkOverTheGroupsTiles) {
  const std::vector<int32_t> ends = {70, 70, 201, 202, 252};  // 2 + 0 + 3 + 1 + 1 tile rows of 64
  int checked = 0;
  for (int64_t w : {0, 1, 2})
    for (int64_t blocks : {1, 3, 4, 7, 16})
      for (int64_t ktiles : {1, 5})
        for (int64_t groupM : {0, 2}) {
          Case c{ends, false, 300, 72, ktiles, blocks, w};  // 14 tiles
          c.groupM = groupM;
          checkWalk(c);
          ++checked;
        }
  EXPECT_EQ(checked, 60);
  // Masked counts; a group past M and a negative one (clamped); bad offsets (decreasing, past M).
  checkWalk({{0, 70, 128}, true, 128, 200, 3, 3});
  checkWalk({{300, -7, 100}, true, 100, 72, 4, 4});
  checkWalk({{150, 40, 1000, -5}, false, 200, 72, 3, 5, 2});
  // Every group empty: no tile, no unit.
  checkWalk({{0, 0, 0}, false, 300, 72, 5, 4});
  // The MoE shape's tile counts, scaled down: 101 tile rows of 128 x 2 columns on 16 blocks.
  Case moe{{1168, 2816, 4480, 6000, 7600, 9344, 10880, 12416}, false, 12416, 256, 7, 16};
  moe.bm = 128;
  moe.bn = 128;
  moe.groupM = 16;
  checkWalk(moe);
  // Bands of 4 tile rows: every group (9 to 16 tile rows) ends in a shorter band, and no band
  // spans two groups; data-parallel and stream-K.
  moe.groupM = 4;
  checkWalk(moe);
  moe.w = 0;
  checkWalk(moe);
  // Groups of one row, empty groups and groups shorter than a tile among longer ones, group_m 3
  // (not a power of two), data-parallel.
  Case small{{1, 1, 1, 66, 300, 300, 301, 640}, false, 700, 200, 2, 5, 0};
  small.groupM = 3;
  checkWalk(small);
  small.w = 1;
  checkWalk(small);
}

}  // namespace
}  // namespace kiln::transforms
