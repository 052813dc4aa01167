// Ragged groups in the sm90 persistent walk (tile.for_tiles {ragged = M}; docs/grouped-gemm.md).
// The tile loop is a kern.tile_loop {ragged = "offsets" | "counts"} (kern_ops.h): the tile
// scheduler itself reads the groups' bounds on the device, counts their tile rows (each group's
// rows in ceil(rows / bm) tiles from its first row, so a tile never mixes two groups) and hands
// every unit its group, first row and the end of its group's rows:
//
//   kern.tile_loop(%M, %N, %G, %offsets) {tile = [bm, bn], raster = "grouped", group_m = 8,
//                                          ragged = "offsets"} {
//   ^bb0(%iter, %m0, %n0, %group, %mend):  the unit's one role (consumer.cpp, k_loop.cpp) }
//
// raster=grouped walks each group's tile rows group_m at a time, column by column, as the dense
// walk does a grid's, groups in order, so the blocks of a wave share one B matrix's tile columns
// in L2 (a band never spans two groups; raster=row walks the tile rows row by row).
//
// With offsets A and C hold the groups' rows back to back and %group picks B's matrix (the third
// coordinate of B's copies, Unit::group); with counts (DeepGEMM's masked layout) %group is every
// operand's batch and %m0 a row inside it. Stores stop at %mend (epilogue.cpp: with epilogue=tma a
// tile whose rows all lie in its group goes out by TMA, whose box clips only at the tensor's
// edges, and a group's last, partial tile from registers, masked at %mend); A's box rows past it
// belong to the next group or lie past M (zero-filled) and only feed rows that are not stored.
// No host sync: the units are exactly the groups' tiles, so the ring positions (iter x ksteps
// stages before a unit) and the producer sm90-warp-specialize makes are those of a dense walk.
//
// The tile loop clamps each group's rows to [previous end, M] (or [0, M]), which keeps bad bounds
// (decreasing, negative, past the rows) from making the kernel read or write outside its tensors;
// good bounds are not changed by it, and the host paths refuse the bad ones by name
// (docs/grouped-gemm.md, "Bad offsets").
//
// Legal only with what raggedWalkConflict (gemm_ragged.cpp) accepts: no cluster, no split-K, no
// swap_ab. stream_k=W walks the same tiles with the dense stream-K walk's units
// (kern.tile_loop {ragged, stream_k}): the data-parallel waves and the runs of the last W waves'
// K steps are closed forms of the tile count every walker sums from the bounds, so the split
// needs no host sync; the hand-over is the dense one (split_handover.cpp: partials per block in
// the workspace, added by the tile's finisher in a fixed order), and the finisher's epilogue
// stores at %mend as any unit's does. The walk is the one thing that changes; a tile still lies
// in one group.
//
// Groups along K (tile.for_tiles {ragged = K}, the weight gradient; docs/grouped-gemm.md, "Groups
// along K"): every group has the same M x N tiles, so the walk is the dense batched one with the
// group as the batch (C's, not A's or B's), and each unit gets its tokens from the tile loop,
// kern.tile_loop {ragged = "k_offsets", kstep = bk} (kern_ops.h; expand-tile-loop writes the walk
// in each role, ragged_tile_walk.cpp):
//
//   kern.tile_loop(%M, %N, %G, %offsets, %K) {tile = [bm, bn], raster, ragged = "k_offsets", kstep = bk} {
//   ^bb0(%iter, %m0, %n0, %group, %ktok, %kend, %ksteps, %done):  the unit's role }
//
//   ktok = clamp(offsets[g-1], 0, K) (0 for g = 0)   kend = clamp(offsets[g], ktok, K)
//   ksteps = ceil((kend - ktok) / bk)                 copies at K = ktok + kt bk
//   done = the K steps of the block's earlier units
//
// The ring position is the running count `done` (as stream-K's), the units' K steps differing.
// A group's last step reads past kEnd (the next group's tokens, or TMA's zeros past K): the
// consumers zero those lines of the stage before its wgmmas (zeroTokenTail). An empty group runs
// no step and stores zeros (consumer.cpp starts its accumulators at 0). The clamps keep bad
// offsets inside [0, K] (a decreasing one overlaps the previous group's range rather than running
// outside the tensors); the host paths refuse them by name.
//
// Either epilogue: C is [G, M, N] batched by the group and every tile lies inside its group (all
// of them have the same M x N tiles), so a TMA store (epilogue=tma, f32 boxes of 32 columns:
// epilogue.cpp) takes the group as its batch coordinate with no partial-tile path.
//
// FP8 groups along K (the blockwise weight gradient, 1x128 scales along K for both operands):
// every group holds whole 128-token scale blocks (kiln.ops.grouped_mm refuses other host offsets
// by name), and bk = 128, so no step spans two groups and nothing is zeroed; step kt scales by
// block ktok / bk + kt (lower.cpp's kbase), and its copies start at that block's first token
// (producer.cpp: a box start 16-byte aligned). Offsets off the blocks on the device give the
// documented wrong result inside the tensors, no fault (docs/grouped-gemm.md).
#include "schedule/sm90/lowering.h"

namespace kiln::sm90 {
using namespace ir;

// Groups along K: what zeroTokenTail and the walk assume, else the option or layout to change.
std::string raggedKConflict(const GemmProgram& g, const Config& c) {
  if (g.fp8) {
    // FP8 (the blockwise weight gradient): every group holds whole scale blocks of bk = 128 tokens
    // (the launch contract; docs/grouped-gemm.md), so no K step spans two groups and nothing is
    // zeroed; step kt's scales are block ktok / bk + kt (lower.cpp). Both operands K-major: the
    // FP8 analysis refuses any other layout before this.
    if (!g.blockK)
      return "block scales along K (tile.dot_scaled {block_k = 128}: each group's tokens are whole scale blocks)";
    return "";
  }
  if (!g.aColMajor || g.bKMajor)
    return "A stored [K][M] (M contiguous) and B [K][N] row-major (a group's token tail is zeroed as whole lines "
           "of stages whose rows are tokens)";
  if (c.warpsN != 1) return "warps_n=1";
  return "";
}

bool checkRagged(const GemmProgram& g, const Config& c, DiagnosticEngine& diag) {
  std::string need = g.raggedBounds ? raggedWalkConflict(c, g.raggedK) : "";
  if (need.empty() && g.raggedK) need = raggedKConflict(g, c);
  if (need.empty()) return true;
  if (g.raggedK)
    return diag.error(g.forTiles->loc()) << c.strategy << " walks groups along K (tile.for_tiles {ragged = \""
                                         << g.dimK << "\"}) only with " << need;
  return diag.error(g.forTiles->loc()) << c.strategy << " walks ragged groups (tile.for_tiles {ragged = \"" << g.dimM
                                       << "\"}) only with " << need;
}

Operation* createRaggedTileLoop(KernBuilder& b, const Request& r, const Kernel& k) {
  const GemmProgram& g = r.g;
  Value* bounds = k.params.args.at(g.raggedBounds->definingOp()->stringAttr("name"));
  std::vector<NamedAttr> attrs = {{"tile", Attribute::ints({r.c.bm, r.c.bn})},
                                  {"raster", r.c.raster == Raster::Grouped ? "grouped" : "row"}};
  if (r.c.raster == Raster::Grouped) attrs.push_back({"group_m", int64_t(r.c.groupM)});
  attrs.push_back({"ragged", g.raggedK ? "k_offsets" : g.raggedOffsets ? "offsets" : "counts"});
  if (g.raggedK) attrs.push_back({"kstep", int64_t(r.c.bk)});
  std::vector<Value*> operands = {k.params.dimM, k.params.dimN, k.params.dims.at(g.dimGroups), bounds};
  if (g.raggedK) operands.push_back(k.params.dimK);
  // stream_k over groups of rows: the walk shares out the last waves of the tile count it reads
  // from the bounds (kern_ops.h); the unit's (kbase, ksteps, done, peers) follow mend.
  if (r.c.streamK && !g.raggedK) {
    attrs.push_back({"stream_k", int64_t(r.c.streamK)});
    operands.push_back(k.ktiles);
  }
  return b.create("kern.tile_loop", operands, {}, attrs, 1);
}

// The stage's lines of tokens kEnd.. (rows left..bk-1 of every 64-column box: with both operands
// MN-major, one token is one 128-byte line of a box, which the 128-byte swizzle keeps whole) are
// zeroed before the step's wgmmas: by the warpgroup whose tile it is with ping-pong (A and B),
// else A's boxes by the warpgroup that reads them and B's by all consumer threads together; then
// the generic-proxy writes are fenced for wgmma's async-proxy reads and the readers meet.
void zeroTokenTail(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, const Warpgroup& w, Value* kt,
                   Value* s) {
  const Config& c = r.c;
  Value* left = b.named(b.sub(u.kEnd, b.add(u.kTok, b.mulConst(kt, c.bk))), "left");
  b.ifThen(b.cmp("slt", left, b.i32(c.bk)), [&] {
    Value* tid = b.op1("kern.thread_id", {}, types::i32());
    Value* zero = b.cast(b.f32(0.0), Type::scalar(r.g.abType));
    const bool own = r.geo.pingpong;  // the warpgroup reads the whole stage alone
    Value* wgThread = b.rem(tid, b.i32(128));
    Value* allThread = b.addConst(tid, -128);
    const int64_t allThreads = 128 * r.geo.groups;
    // Elements (left + e / 64, e % 64) of `boxes` boxes from stage row `row0` (box i at row0 + i bk),
    // e = from + i step for a trip count the threads share (a loop bound is uniform).
    auto zeroBoxes = [&](Value* buf, Value* row0, int boxes, Value* from, int64_t step) {
      Value* per = b.mulConst(b.sub(b.i32(c.bk), left), 64);
      Value* total = b.mulConst(per, boxes);
      Value* trips = b.div(b.addConst(total, step - 1), b.i32(step));
      Operation* loop = b.create("scf.for", {b.i32(0), trips, b.i32(1)}, {}, {}, 1);
      Block* body = loop->region(0).addBlock();
      Value* i = body->addArgument(types::i32(), "zi");
      InsertionGuard guard(b);
      b.setInsertionPointToEnd(body);
      Value* e = b.add(b.mulConst(i, step), from);
      b.ifThen(b.cmp("slt", e, total), [&] {
        Value* box = b.div(e, per);
        Value* in = b.rem(e, per);
        Value* row = b.add(b.add(row0, b.mulConst(box, c.bk)), b.add(left, b.div(in, b.i32(64))));
        Value* off = b.op1("kern.smem_offset", {buf, row, b.rem(in, b.i32(64))}, types::i32());
        b.create("kern.st_shared", {buf, s, off, zero}, {}, {{"row", int64_t{0}}, {"col", int64_t{0}}});
      });
      b.create("scf.yield", {}, {});
    };
    zeroBoxes(k.smem.sA, w.rowA, r.geo.rowsPerConsumer / 64, wgThread, 128);
    zeroBoxes(k.smem.sB, b.i32(0), (c.bn + 63) / 64, own ? wgThread : allThread, own ? 128 : allThreads);
    b.create("kern.fence", {}, {}, {{"kind", "proxy_async"}});
    if (own) b.create("kern.named_barrier", {groupBarrier(b, w.wg)}, {}, {{"threads", int64_t{128}}});
    else b.create("kern.named_barrier", {b.i32(1 + r.geo.groups)}, {}, {{"threads", allThreads}});
  });
}

}  // namespace kiln::sm90
