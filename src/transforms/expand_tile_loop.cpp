// expand-tile-loop: the persistent tile scheduler as kern IR. Each kern.tile_loop becomes an
// scf.for over the block's units whose body first computes the unit (which tile, which K slice or
// run of K steps) from the launch's grid and then runs the loop's body.
//
//   Before (in a role, after partition-roles):
//     kern.tile_loop(%M, %N, %batches) {tile = [128, 256], raster = "row", splits = 2} {
//     ^bb0(%iter, %m0, %n0, %batch, %tile, %split):  BODY
//     }
//   After:
//     %walker = kern.block_id {dim = "x"}     %walkers = kern.grid_dim {dim = "x"}
//     %tm = (M + 127) /u 128   %tn = (N + 255) /u 256   %per = tm * tn   %tiles = per * batches
//     %units = tiles * 2
//     scf.for(%walker, %units, %walkers, %c0) {
//     ^bb0(%unit, %i):
//       %iter = kern.assume_range(%i) {lo = 0, hi = 2^31 - 1}
//       %t = unit /u 2   %batch = t /u per   %r = t %u per   %pm = r /u tn   %pn = r %u tn
//       %m0 = kern.assume_range(pm * 128)  %n0 = ...(pn * 256)  %tile = ...(t)  %split = ...(unit %u 2)
//       BODY                                       (moved; its uses of the arguments now use these)
//       scf.yield(i + 1)
//     }
//   {raster = "grouped"}: groups of group_m tile rows walked column by column (tile_walk.cpp);
//   {cluster = [cm, cn]}: the walkers are the clusters (kern.cluster_id, kern.cluster_count) and
//   the block takes its sub-tile by kern.cluster_rank; {stream_k}: expand_stream_k.cpp; {ragged}:
//   the groups' tiles counted and found from their bounds in memory (ragged_tile_walk.cpp), with
//   {stream_k} the stream-K walk over those tiles (the count on the device, no host sync);
//   {ragged = "k_offsets"}: the dense walk, each unit given its group's tokens from the offsets in
//   memory and the K steps of the block's earlier units (ragged_tile_walk.cpp).
//
// Why it is the same program: kern_ops.h specifies the walk of kern.tile_loop; this writes that
// specification out as arithmetic, unit by unit in the same order, and the body runs once per unit
// with the same arguments. The arguments were non-negative by the op's contract (tile counts and
// dims are below 2^31); kern.assume_range carries that contract to the range analysis, so
// strength-reduce rewrites the body's index math as it did.
//
// Legal for a loop only when its attributes and body are those kern.tile_loop's verifier accepts
// ({tile}, {raster}, {group_m}, {cluster}, {splits}, {stream_k} or {ragged}, and the body arguments they
// call for); any other loop is kept as it is, and the PTX emitter, which has no emitter for
// kern.tile_loop, then reports it. Everything outside tile loops is left untouched.
#include "transforms/pass_registry.h"
#include "transforms/tile_walk.h"

namespace kiln::transforms {
namespace {

using ir::Operation;

void expand(Operation& loop, const tilewalk::Shape& s) {
  KernBuilder b(loop.parentBlock());
  b.setInsertionPoint(&loop);
  b.setLoc(loop.loc());
  tilewalk::UnitLoop u;
  if (s.ragged) {  // the tile count is read from memory: no grid of tiles up front
    tilewalk::Walkers w = tilewalk::walkers(b, s);
    tilewalk::Grid g = tilewalk::raggedGrid(b, loop, s);
    u = s.streamK ? tilewalk::streamKLoop(b, loop, s, g, w) : tilewalk::raggedLoop(b, loop, s, g, w);
  } else {
    tilewalk::Grid g = tilewalk::grid(b, loop, s);
    tilewalk::Walkers w = tilewalk::walkers(b, s);
    u = s.streamK ? tilewalk::streamKLoop(b, loop, s, g, w) : tilewalk::persistentLoop(b, loop, s, g, w);
    if (s.kGroups) tilewalk::kGroupArgs(b, loop, s, g, w, u);
  }
  ir::Block& old = loop.body();
  for (unsigned i = 0; i < old.numArguments(); ++i) old.argument(i)->replaceAllUsesWith(u.args[i]);
  ir::Block& body = u.loop->body();
  while (!old.empty()) body.push_back(old.take(old.front()));
  b.setInsertionPointToEnd(&body);
  b.create("scf.yield", {u.counter ? b.addConst(u.counter, 1) : u.next}, {});
  loop.erase();
}

}  // namespace

bool expandTileLoopPass(ir::Module& m, ir::DiagnosticEngine&) {
  std::vector<Operation*> loops;
  m.op().walk([&](Operation& op) {
    if (op.is("kern.tile_loop")) loops.push_back(&op);
  });
  for (Operation* loop : loops)
    if (auto s = tilewalk::shapeOf(*loop)) expand(*loop, *s);
  return true;
}

}  // namespace kiln::transforms
