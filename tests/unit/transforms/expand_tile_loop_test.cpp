// expand-tile-loop writes kern.tile_loop's walk out as kern IR: for every combination of problem
// size, tile, batches, raster, grid, split-K slices, clusters and stream-K waves below, the
// expanded kernel, run by the warp-specialized simulator, gives every block the same units with
// the same body arguments, in the same order, as the simulator's own reading of kern.tile_loop
// (ws_sim_tiles.cpp, written from kern_ops.h independently of the pass). The simulator also checks
// each kern.assume_range promise the expansion makes.
#include <gtest/gtest.h>

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

constexpr int64_t kMaxUnits = 256;  // per block: the record's slots

struct Walk {
  int64_t m, n, batches, blocks;
  int64_t bm = 128, bn = 128;
  std::string raster = "row";
  int64_t groupM = 8;
  int64_t splits = 0;       // 0: no {splits}
  int64_t cm = 1, cn = 1;   // {cluster}
  int64_t streamK = 0, k = 0;
  bool constBatch() const { return batches == 1; }
  unsigned args() const { return 4 + (splits ? 2 : 0) + (streamK ? 4 : 0); }
  std::string str() const {
    return "M " + std::to_string(m) + " N " + std::to_string(n) + " batches " + std::to_string(batches) + " blocks " +
           std::to_string(blocks) + " tile " + std::to_string(bm) + "x" + std::to_string(bn) + " " + raster +
           " group_m " + std::to_string(groupM) + " splits " + std::to_string(splits) + " cluster " +
           std::to_string(cm) + "x" + std::to_string(cn) + " stream_k " + std::to_string(streamK) + " K " +
           std::to_string(k);
  }
};

// A kernel whose tile loop's body has thread 0 record the body's arguments, and how many units
// the block ran, in the block's slots of C.
std::string kernelText(const Walk& w) {
  int64_t cs = w.cm * w.cn;
  std::string attrs = "tile = [" + std::to_string(w.bm) + ", " + std::to_string(w.bn) + "], raster = \"" + w.raster +
                      "\", group_m = " + std::to_string(w.groupM);
  if (cs > 1) attrs += ", cluster = [" + std::to_string(w.cm) + ", " + std::to_string(w.cn) + "]";
  if (w.splits) attrs += ", splits = " + std::to_string(w.splits);
  if (w.streamK) attrs += ", stream_k = " + std::to_string(w.streamK);
  std::string args = "%iter: i32, %m0: i32, %n0: i32, %batch: i32";
  std::vector<std::string> names = {"iter", "m0", "n0", "batch"};
  if (w.splits) {
    args += ", %tile: i32, %split: i32";
    names.insert(names.end(), {"tile", "split"});
  }
  if (w.streamK) {
    args += ", %kbase: i32, %ksteps: i32, %done: i32, %peers: i32";
    names.insert(names.end(), {"kbase", "ksteps", "done", "peers"});
  }
  std::string t = "kern.kernel() {sym_name = \"walk\", params = [\"C\", \"M\", \"N\", \"B\", \"KT\"], threads = 128, "
                  "smem_bytes = 0, grid = [1]" +
                  (cs > 1 ? ", cluster = [" + std::to_string(cs) + ", 1, 1]" : std::string()) +
                  "} {\n^bb0(%C: ptr<i32>, %M: i32, %N: i32, %B: i32, %KT: i32):\n"
                  "  %one = arith.constant() {value = 1} : i32\n"
                  "  %slots = arith.constant() {value = " + std::to_string(kMaxUnits * (w.args() + 1)) + "} : i64\n"
                  "  %width = arith.constant() {value = " + std::to_string(w.args() + 1) + "} : i64\n"
                  "  %bid = kern.block_id() {dim = \"x\"} : i32\n"
                  "  %bid64 = arith.cast(%bid) : i64\n"
                  "  %base = arith.muli(%bid64, %slots) : i64\n"
                  "  %tid = kern.thread_id() : i32\n"
                  "  %zero = arith.constant() {value = 0} : i32\n"
                  "  %first = arith.cmpi(%tid, %zero) {pred = \"eq\"} : i1\n"
                  "  kern.tile_loop(%M, %N, " + std::string(w.constBatch() ? "%one" : "%B") +
                  (w.streamK ? ", %KT" : "") + ") {" + attrs + "} {\n  ^bb0(" + args + "):\n"
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

// The record of every block's units: C after the launch (poisoned first).
std::vector<uint8_t> run(const ir::Operation& kernel, const Walk& w, std::string& error) {
  testing::GlobalMemory mem;
  size_t bytes = size_t(w.blocks * kMaxUnits * (w.args() + 1) * 4);
  uint64_t c = mem.add(std::vector<uint8_t>(bytes, 0xA5));
  testing::WsLaunch l;
  l.kernel = &kernel;
  int64_t ktiles = w.streamK ? (w.k + 63) / 64 : 1;
  l.args = {c, uint64_t(uint32_t(w.m)), uint64_t(uint32_t(w.n)), uint64_t(uint32_t(w.batches)), uint64_t(ktiles)};
  l.blocks = uint32_t(w.blocks);
  error = testing::simulateWarpSpecialized(l, mem);
  return mem.at(c);
}

void checkWalk(const Walk& w) {
  SCOPED_TRACE(w.str());
  ir::DiagnosticEngine diag;
  auto module = ir::parseModule(kernelText(w), diag);
  ASSERT_TRUE(module && ir::verify(*module, diag)) << diag.str() << kernelText(w);
  std::string error;
  std::vector<uint8_t> want = run(*module->body().front(), w, error);
  ASSERT_EQ(error, "");
  ASSERT_TRUE(pipeline::runPass("expand-tile-loop", *module, diag)) << diag.str();
  ASSERT_TRUE(ir::verify(*module, diag)) << diag.str() << ir::toString(*module);
  bool loopLeft = false;
  module->op().walk([&](const ir::Operation& op) { loopLeft |= op.is("kern.tile_loop"); });
  ASSERT_FALSE(loopLeft) << ir::toString(*module);
  std::vector<uint8_t> got = run(*module->body().front(), w, error);
  ASSERT_EQ(error, "") << ir::toString(*module);
  ASSERT_TRUE(want != std::vector<uint8_t>(want.size(), 0xA5)) << "no block ran a unit";
  for (size_t i = 0; i < want.size(); i += 4) {
    int32_t a, b;
    std::memcpy(&a, &want[i], 4);
    std::memcpy(&b, &got[i], 4);
    size_t word = i / 4, per = w.args() + 1;
    ASSERT_EQ(a, b) << "block " << word / (kMaxUnits * per) << ", unit " << word / per % kMaxUnits << ", field "
                    << word % per << " (0: units so far, then the body's arguments in order)";
  }
}

TEST(ExpandTileLoop, PersistentWalksMatchTheLoopsContract) {
  int checked = 0;
  for (int64_t m : {1, 300, 1024})
    for (int64_t n : {1, 500})
      for (int64_t batches : {1, 3})
        for (int64_t blocks : {1, 3, 8})
          for (const char* raster : {"row", "grouped"})
            for (int64_t gm : {1, 3, 4}) {
              if (std::string(raster) == "row" && gm != 1) continue;
              Walk w{m, n, batches, blocks};
              w.bm = 64;
              w.bn = 128;
              w.raster = raster;
              w.groupM = gm;
              checkWalk(w);
              ++checked;
            }
  EXPECT_EQ(checked, 144);
}

TEST(ExpandTileLoop, SplitKUnitsMatchTheLoopsContract) {
  for (int64_t splits : {1, 2, 3})
    for (int64_t blocks : {2, 5})
      for (const char* raster : {"row", "grouped"}) {
        Walk w{700, 300, 2, blocks};
        w.raster = raster;
        w.splits = splits;
        checkWalk(w);
      }
}

TEST(ExpandTileLoop, ClusterTilesMatchTheLoopsContract) {
  for (auto [cm, cn] : {std::pair<int64_t, int64_t>{2, 1}, {1, 2}, {2, 2}, {1, 4}})
    for (int64_t clusters : {1, 3})
      for (const char* raster : {"row", "grouped"}) {
        Walk w{900, 1100, 1, clusters * cm * cn};
        w.raster = raster;
        w.groupM = 2;
        w.cm = cm;
        w.cn = cn;
        checkWalk(w);
        // split_handover=cluster: the loop walks blocks, a tile's slices being a cluster's blocks.
        if (cm * cn == 2 && cm == 2) {
          Walk s{900, 1100, 1, clusters * 2};
          s.splits = 2;
          checkWalk(s);
        }
      }
}

TEST(ExpandTileLoop, StreamKUnitsMatchTheLoopsContract) {
  int checked = 0;
  for (int64_t w : {1, 2})
    for (int64_t k : {64, 200, 512})
      for (int64_t blocks : {1, 3, 7, 13})
        for (auto [m, n] : {std::pair<int64_t, int64_t>{1000, 520}, {128, 128}, {2000, 300}}) {
          Walk walk{m, n, 1, blocks};
          walk.streamK = w;
          walk.k = k;
          checkWalk(walk);
          ++checked;
          if (blocks % 2 == 0 || blocks == 1) continue;
          // In clusters of two along M: the walkers are the clusters.
          Walk pair{m, n, 1, blocks * 2};
          pair.streamK = w;
          pair.k = k;
          pair.cm = 2;
          checkWalk(pair);
        }
  EXPECT_EQ(checked, 72);
}

// A loop the pass does not know (here, one whose body lacks the split's arguments) is kept.
TEST(ExpandTileLoop, KeepsALoopItDoesNotKnow) {
  Walk w{100, 100, 1, 1};
  std::string text = kernelText(w);
  text.replace(text.find("group_m = 8"), 11, "group_m = 8, splits = 2");
  ir::DiagnosticEngine diag;
  auto module = ir::parseModule(text, diag);
  ASSERT_TRUE(module) << diag.str();
  ASSERT_TRUE(pipeline::runPass("expand-tile-loop", *module, diag));
  EXPECT_NE(ir::toString(*module).find("kern.tile_loop"), std::string::npos);
}

}  // namespace
}  // namespace kiln::transforms
