// The warp-specialized simulator's tile schedulers (contract in ws_sim.h): the persistent tile
// loop, and the stream-K walk it takes its units from.
#include <algorithm>
#include <stdexcept>

#include "tests/unit/testing/ws_sim.h"
#include "tests/unit/testing/ws_sim_internal.h"

namespace kiln::testing {
using namespace ir;

// {stream_k = W} (kern_ops.h), written out from the op's contract: data-parallel waves, then the
// block's run of K steps cut at tile boundaries, a first unit that ends a tile lower blocks began
// walked last.
std::vector<StreamKUnit> streamKWalk(int64_t tiles, int64_t ktiles, int64_t blocks, int64_t bx, int64_t w) {
  int64_t waves = tiles % blocks == 0 ? tiles / blocks : std::max<int64_t>(tiles / blocks - (w - 1), 0);
  int64_t dpTiles = waves * blocks, work = (tiles - dpTiles) * ktiles;
  int64_t runs = std::max<int64_t>(std::min(blocks, work), 1);  // blocks with a run
  std::vector<StreamKUnit> units;
  int64_t done = 0;
  for (int64_t i = 0; i < waves; ++i, done += ktiles) units.push_back({bx + i * blocks, 0, ktiles, done, 0});
  auto runStart = [&](int64_t b) { return std::min(b, runs) * work / runs; };
  int64_t s = runStart(bx), e = runStart(bx + 1);
  std::vector<StreamKUnit> run;
  for (int64_t pos = s; pos < e;) {
    int64_t t = pos / ktiles, kb = pos % ktiles, stop = std::min(ktiles, kb + (e - pos));
    int64_t peers = 0;
    if (kb > 0 && stop == ktiles) {  // ends a tile lower blocks began: count them
      for (int64_t b = bx - 1; b >= 0 && runStart(b + 1) > t * ktiles; --b) ++peers;
    }
    run.push_back({dpTiles + t, kb, stop - kb, 0, peers});
    pos += stop - kb;
  }
  if (!run.empty() && run.front().peers > 0) std::rotate(run.begin(), run.begin() + 1, run.end());
  for (auto& u : run) {
    u.done = done;
    done += u.ksteps;
    units.push_back(u);
  }
  return units;
}

namespace wssim {

// The persistent tile scheduler (kern_ops.h): tiles, or with {cluster = [cm, cn]} cluster tiles
// walked by cluster id, each block taking its sub-tile by rank.
void Agent::tileLoop(const Operation& op, const Mask& m) {
  int T = b_.T_;
  if (op.attr("ragged")) throw std::runtime_error("unsupported: a ragged kern.tile_loop (run expand-tile-loop first)");
  auto tile = op.intsAttr("tile");
  auto cl = op.intsAttr("cluster");
  int64_t cm = cl.size() == 2 ? cl[0] : 1, cn = cl.size() == 2 ? cl[1] : 1, cs = cm * cn;
  int64_t splits = op.intAttr("splits", 1);
  // Without {cluster} the loop walks blocks; a cluster kernel may do so when its clusters are the
  // split-K slices of a tile.
  if (cs != b_.cluster_.clusterSize() && !(cs == 1 && splits == b_.cluster_.clusterSize()))
    throw std::runtime_error("the tile loop's cluster is not the kernel's");
  int64_t tm = (uniform(op.operand(0), m) + tile[0] * cm - 1) / (tile[0] * cm);
  int64_t tn = (uniform(op.operand(1), m) + tile[1] * cn - 1) / (tile[1] * cn);
  int64_t per = tm * tn, total = per * uniform(op.operand(2), m) * splits, g = op.intAttr("group_m", 1);
  const ir::Block& body = op.body();
  int64_t first = int64_t(b_.bx_) / cs, step = int64_t(b_.l_.blocks) / cs, rank = cs > 1 ? b_.rank_ : 0;
  std::vector<StreamKUnit> streamK;
  if (op.attr("stream_k")) {
    // In clusters the walkers are the clusters (kern_ops.h).
    streamK = streamKWalk(total, uniform(op.operand(3), m), int64_t(b_.l_.blocks) / cs, int64_t(b_.bx_) / cs,
                          op.intAttr("stream_k", 1));
    first = 0;
    step = 1;
    total = int64_t(streamK.size());
  }
  for (int64_t iter = 0, unit = first; unit < total; ++iter, unit += step) {
    // {splits = S}: unit u is K slice u % S of tile u / S.
    int64_t tIdx = unit / splits, split = unit % splits;
    if (!streamK.empty()) tIdx = streamK[size_t(unit)].tile;
    int64_t batch = tIdx / per, r = tIdx % per, pm, pn;
    if (op.stringAttr("raster") == "grouped") {
      int64_t width = g * tn, firstRow = (r / width) * g, size = std::min(tm - firstRow, g), within = r % width;
      pm = firstRow + within % size;
      pn = within / size;
    } else {
      pm = r / tn;
      pn = r % tn;
    }
    pm = pm * cm + rank % cm;
    pn = pn * cn + rank / cm;
    std::vector<int64_t> args = {iter, pm * tile[0], pn * tile[1], batch, tIdx, split};
    if (!streamK.empty()) {
      const auto& u = streamK[size_t(unit)];
      args = {iter, pm * tile[0], pn * tile[1], batch, u.kbase, u.ksteps, u.done, u.peers};
    }
    for (unsigned i = 0; i < body.numArguments() && i < args.size(); ++i)
      vals_[body.argument(i)] = Lanes(size_t(T), fromI(args[i], types::i32()));
    runBlock(body, m);
  }
}

}  // namespace wssim
}  // namespace kiln::testing
