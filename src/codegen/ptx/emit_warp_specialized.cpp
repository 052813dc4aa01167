// Emitters for warp specialization and persistence: kern.role, kern.tile_loop, kern.setmaxnreg
// (semantics in dialects/kern/kern_ops.h).
//
//   kern.role {warpgroups = [f, c]}     ->  t = lane 0's tid.x (shfl.sync.idx);
//                                            setp.lt.u32 p, t - 128 f, 128 c;  @!p bra.uni skip;
//                                            bar.warp.sync -1; body;  skip:
//                                            (whole warpgroups: warp-uniform, converged)
//   kern.tile_loop(M, N, batches)       ->  t = ctaid.x; iter = 0; while t < T: (m0, n0, batch) of t;
//                                            body; t += nctaid.x; ++iter      (every thread that
//                                            reaches it walks the same tiles: bra.uni)
//     {cluster = [cm, cn]}              ->  t = %clusterid.x, step %nclusterid.x over cluster tiles,
//                                            sub-tile by %cluster_ctarank (PTX ISA, "Special
//                                            Registers"; the grid is 1-D, so clusters are
//                                            consecutive blocks along x)
//     {splits = S}                      ->  over T * S units: tile = unit / S, split = unit % S
//     {stream_k}                        ->  D data-parallel waves, then the block's run [s, e) of
//                                            K steps unit by unit (emitStreamKLoop); s, e and the
//                                            run's owner of a step in 64-bit products
//   kern.setmaxnreg {action, regs}      ->  setmaxnreg.{inc|dec}.sync.aligned.u32 regs
//                                            (PTX ISA, "setmaxnreg"; sm_90a)
#include <fmt/format.h>

#include "codegen/ptx/emitter.h"
#include "dialects/kern/int_range.h"

namespace kiln::ptx {
using namespace ir;

namespace {

Reg special(PtxBuilder& b, const char* name) {
  Reg r = b.reg(RegClass::B32);
  b.inst(fmt::format("mov.u32 {}, {}", r.str(), name));
  return r;
}

Reg binary(PtxBuilder& b, const char* op, const Reg& x, const std::string& y) {
  Reg r = b.reg(RegClass::B32);
  b.inst(fmt::format("{} {}, {}, {}", op, r.str(), x.str(), y));
  return r;
}

Reg setp(PtxBuilder& b, const char* cmp, const Reg& x, const std::string& y) {
  Reg p = b.reg(RegClass::Pred);
  b.inst(fmt::format("setp.{}.s32 {}, {}, {}", cmp, p.str(), x.str(), y));
  return p;
}

// ceil(x / k) for a compile-time k > 0 and 0 <= x < 2^31 (dims are 1 .. 2^31 - 1 at launch,
// LaunchInfo::validate), in unsigned arithmetic: ptxas expands div.s32 even by a constant power of
// two into its generic division sequence, while a shift is one instruction.
Reg ceilDiv(PtxBuilder& b, const Reg& x, int64_t k) {
  Reg t = binary(b, "add.u32", x, std::to_string(k - 1));
  if ((k & (k - 1)) == 0) {
    int shift = 0;
    while ((int64_t(1) << shift) < k) ++shift;
    return binary(b, "shr.u32", t, std::to_string(shift));
  }
  return binary(b, "div.u32", t, std::to_string(k));
}

}  // namespace

// The role's threads are whole warpgroups, so the branch is warp-uniform; the condition is computed
// from lane 0's tid.x (broadcast by shfl.sync.idx) so that ptxas can prove it. From a raw %tid.x its
// uniformity analysis takes the branch as divergent, and then nothing inside the role (a loop's
// stage index, the wgmma descriptors built from it, a tensor map's address) is given uniform
// registers: every wgmma's descriptors reached it through R2UR. No scf.if encloses a role
// (verifyRole), so every lane of every warp reaches the shuffle.
bool emitRole(KernelEmitter& e, const Operation& op) {
  PtxBuilder& b = e.b();
  auto wg = op.intsAttr("warpgroups");
  Reg tid = special(b, "%tid.x");
  b.inst(fmt::format("shfl.sync.idx.b32 {}, {}, 0, 31, -1", tid.str(), tid.str()));
  Reg rel = wg[0] ? binary(b, "sub.s32", tid, std::to_string(wg[0] * 128)) : tid;
  Reg p = b.reg(RegClass::Pred);
  b.inst(fmt::format("setp.lt.u32 {}, {}, {}", p.str(), rel.str(), wg[1] * 128));
  std::string skip = b.label();
  b.instIf(p, "bra.uni " + skip, /*negate=*/true);
  // A role without setmaxnreg (one consumer warpgroup) needs the warp's convergence said outright:
  // without it ptxas kept the region's descriptors on the vector pipe even with the broadcast
  // condition. setmaxnreg, being .sync.aligned, says it too.
  b.inst("bar.warp.sync -1");
  if (!e.emitBlock(op.body())) return false;
  b.placeLabel(skip);
  return true;
}

namespace {

// The tile loop's walk over tiles (kern_ops.h): tm x tn tiles per batch, T in all.
struct TileGrid {
  Reg tm, tn, per, total;
};

TileGrid tileGrid(KernelEmitter& e, const Operation& op, int64_t cm, int64_t cn) {
  PtxBuilder& b = e.b();
  auto tile = op.intsAttr("tile");
  TileGrid g;
  g.tm = ceilDiv(b, e.use(op.operand(0)), tile[0] * cm);
  g.tn = ceilDiv(b, e.use(op.operand(1)), tile[1] * cn);
  g.per = binary(b, "mul.lo.s32", g.tm, g.tn.str());
  g.total = binary(b, "mul.lo.s32", g.per, e.use(op.operand(2)).str());
  return g;
}

// (batch, m0, n0) of tile `tileIdx`: batch = t / per, r = t % per; then (pm, pn) from r by the
// raster order; in a cluster, the block's sub-tile by its rank.
void placeTile(KernelEmitter& e, const Operation& op, const TileGrid& g, const Reg& tileIdx, int64_t cm, int64_t cn,
               const Reg& rank) {
  PtxBuilder& b = e.b();
  auto tile = op.intsAttr("tile");
  const Block& body = op.body();
  Reg m0 = e.def(body.argument(1)), n0 = e.def(body.argument(2)), batch = e.def(body.argument(3));
  // Tile indices and counts are non-negative, so unsigned division (shorter than signed in SASS).
  // One batch (the operand is the constant 1): batch 0, and no division at all.
  int64_t batches = 0;
  Reg r = tileIdx;
  if (kern::constantInt(op.operand(2), batches) && batches == 1) {
    b.inst(fmt::format("mov.u32 {}, 0", batch.str()));
  } else {
    b.inst(fmt::format("div.u32 {}, {}, {}", batch.str(), tileIdx.str(), g.per.str()));
    r = binary(b, "rem.u32", tileIdx, g.per.str());
  }
  Reg pm, pn;
  if (op.stringAttr("raster") == "grouped") {
    int64_t gm = op.intAttr("group_m", 8);
    Reg width = binary(b, "mul.lo.s32", g.tn, std::to_string(gm));
    Reg gid = binary(b, "div.u32", r, width.str());
    Reg first = binary(b, "mul.lo.s32", gid, std::to_string(gm));
    Reg left = binary(b, "sub.s32", g.tm, first.str());
    Reg size = binary(b, "min.s32", left, std::to_string(gm));
    Reg within = binary(b, "rem.u32", r, width.str());
    pm = b.reg(RegClass::B32);
    pn = b.reg(RegClass::B32);
    std::string done = b.label();
    if ((gm & (gm - 1)) == 0) {
      // Every group but the last holds gm rows of tiles: a power of two, so a mask and a shift
      // (the branch is the same for the whole block).
      int shift = 0;
      while ((int64_t(1) << shift) < gm) ++shift;
      std::string partial = b.label();
      b.instIf(setp(b, "ne", size, std::to_string(gm)), "bra.uni " + partial);
      b.inst(fmt::format("and.b32 {}, {}, {}", pm.str(), within.str(), gm - 1));
      b.inst(fmt::format("add.s32 {}, {}, {}", pm.str(), pm.str(), first.str()));
      b.inst(fmt::format("shr.u32 {}, {}, {}", pn.str(), within.str(), shift));
      b.inst("bra.uni " + done);
      b.placeLabel(partial);
    }
    b.inst(fmt::format("rem.u32 {}, {}, {}", pm.str(), within.str(), size.str()));
    b.inst(fmt::format("add.s32 {}, {}, {}", pm.str(), pm.str(), first.str()));
    b.inst(fmt::format("div.u32 {}, {}, {}", pn.str(), within.str(), size.str()));
    b.placeLabel(done);
  } else {
    pm = binary(b, "div.u32", r, g.tn.str());
    pn = binary(b, "rem.u32", r, g.tn.str());
  }
  if (rank.valid()) {
    // pm = pm * cm + rank % cm; pn = pn * cn + rank / cm.
    pm = binary(b, "mad.lo.s32", pm, fmt::format("{}, {}", cm, binary(b, "rem.u32", rank, std::to_string(cm)).str()));
    pn = binary(b, "mad.lo.s32", pn, fmt::format("{}, {}", cn, binary(b, "div.u32", rank, std::to_string(cm)).str()));
  }
  b.inst(fmt::format("mul.lo.s32 {}, {}, {}", m0.str(), pm.str(), tile[0]));
  b.inst(fmt::format("mul.lo.s32 {}, {}, {}", n0.str(), pn.str(), tile[1]));
}

// (x * y + add) / z in 64 bits (x * y may pass 2^32; the quotient fits 32 bits). add: a register,
// or none.
Reg mulDivWide(PtxBuilder& b, const Reg& x, const Reg& y, const Reg& z, const Reg& add = Reg{}) {
  Reg prod = b.reg(RegClass::B64), z64 = b.reg(RegClass::B64), q = b.reg(RegClass::B64);
  b.inst(fmt::format("mul.wide.u32 {}, {}, {}", prod.str(), x.str(), y.str()));
  if (add.valid()) {
    Reg a64 = b.reg(RegClass::B64);
    b.inst(fmt::format("cvt.u64.u32 {}, {}", a64.str(), add.str()));
    b.inst(fmt::format("add.u64 {}, {}, {}", prod.str(), prod.str(), a64.str()));
  }
  b.inst(fmt::format("cvt.u64.u32 {}, {}", z64.str(), z.str()));
  b.inst(fmt::format("div.u64 {}, {}, {}", q.str(), prod.str(), z64.str()));
  Reg r = b.reg(RegClass::B32);
  b.inst(fmt::format("cvt.u32.u64 {}, {}", r.str(), q.str()));
  return r;
}

// {stream_k}: data-parallel waves, then each block's run of K steps (kern_ops.h, where the walk is
// specified). Units come from one of three places, chosen per iteration: the block's next
// data-parallel tile (iter < D), the next unit of its run (pos < e), or the run's first unit when
// it ends a tile begun by lower blocks (walked last, `rot`). With {cluster} the walkers are the
// clusters, over cluster tiles, and each block takes its sub-tile by rank.
bool emitStreamKLoop(KernelEmitter& e, const Operation& op) {
  PtxBuilder& b = e.b();
  const Block& body = op.body();
  Reg iter = e.def(body.argument(0)), kbase = e.def(body.argument(4)), ksteps = e.def(body.argument(5)),
      done = e.def(body.argument(6)), peers = e.def(body.argument(7));
  auto cl = op.intsAttr("cluster");
  int64_t cm = cl.size() == 2 ? cl[0] : 1, cn = cl.size() == 2 ? cl[1] : 1;
  bool clustered = cm * cn > 1;
  if (clustered) e.requirePtxIsa(7, 8);
  TileGrid g = tileGrid(e, op, cm, cn);
  Reg ks = e.use(op.operand(3));
  Reg bid = special(b, clustered ? "%clusterid.x" : "%ctaid.x");
  Reg nb = special(b, clustered ? "%nclusterid.x" : "%nctaid.x");
  Reg rank = clustered ? special(b, "%cluster_ctarank") : Reg{};
  // D data-parallel waves: all of them when the tiles fill whole waves, else all but the last
  // {stream_k} = W (the partial one, and with W = 2 the whole one before it).
  int64_t w = op.intAttr("stream_k", 1);
  Reg full = binary(b, "div.u32", g.total, nb.str());
  Reg dm1 = binary(b, "max.s32", binary(b, "sub.s32", full, std::to_string(w - 1)), "0");
  Reg whole = setp(b, "eq", binary(b, "rem.u32", g.total, nb.str()), "0");
  Reg waves = b.reg(RegClass::B32);
  b.inst(fmt::format("selp.b32 {}, {}, {}, {}", waves.str(), full.str(), dm1.str(), whole.str()));
  Reg tdp = binary(b, "mul.lo.s32", waves, nb.str());
  // S = work: the shared-out tiles' K steps.
  Reg work = binary(b, "mul.lo.s32", binary(b, "sub.s32", g.total, tdp.str()), ks.str());
  // The run [s, e) in K steps from the first stream-K tile's first step, over the first
  // R = max(min(P, S), 1) blocks (no run is empty; the others have none).
  Reg runs = binary(b, "max.s32", binary(b, "min.s32", nb, work.str()), "1");
  Reg s = mulDivWide(b, binary(b, "min.s32", bid, runs.str()), work, runs);
  Reg end = mulDivWide(b, binary(b, "min.s32", binary(b, "add.s32", bid, "1"), runs.str()), work, runs);
  Reg kb1 = binary(b, "rem.u32", s, ks.str());
  Reg end1 = binary(b, "min.u32", binary(b, "add.s32", kb1, binary(b, "sub.s32", end, s.str()).str()), ks.str());
  Reg rot = b.reg(RegClass::Pred);
  b.inst(fmt::format("setp.ne.and.s32 {}, {}, 0, {}", rot.str(), kb1.str(),
                     setp(b, "eq", end1, ks.str()).str()));
  Reg len1 = b.reg(RegClass::B32);
  b.inst(fmt::format("selp.b32 {}, {}, 0, {}", len1.str(), binary(b, "sub.s32", end1, kb1.str()).str(), rot.str()));
  Reg rotLeft = b.reg(RegClass::B32);
  b.inst(fmt::format("selp.b32 {}, 1, 0, {}", rotLeft.str(), rot.str()));
  Reg pos = binary(b, "add.s32", s, len1.str());
  Reg dpDone = binary(b, "mul.lo.s32", waves, ks.str());
  Reg runBase = binary(b, "sub.s32", binary(b, "sub.s32", dpDone, s.str()), len1.str());  // done = runBase + pos
  Reg tileIdx = b.reg(RegClass::B32);
  b.inst(fmt::format("mov.u32 {}, 0", iter.str()));
  auto more = [&] {
    // iter < D || pos < e || rotLeft
    Reg p = setp(b, "lt", iter, waves.str());
    b.inst(fmt::format("setp.lt.or.s32 {}, {}, {}, {}", p.str(), pos.str(), end.str(), p.str()));
    b.inst(fmt::format("setp.ne.or.s32 {}, {}, 0, {}", p.str(), rotLeft.str(), p.str()));
    return p;
  };
  std::string head = b.label(), skip = b.label(), run = b.label(), last = b.label(), join = b.label();
  b.instIf(more(), "bra.uni " + skip, /*negate=*/true);
  b.placeLabel(head);
  b.pragmaNounroll();
  b.inst(fmt::format("mov.u32 {}, 0", peers.str()));
  b.instIf(setp(b, "lt", iter, waves.str()), "bra.uni " + run, /*negate=*/true);
  // A data-parallel tile: bid + iter * P, whole.
  b.inst(fmt::format("mad.lo.s32 {}, {}, {}, {}", tileIdx.str(), iter.str(), nb.str(), bid.str()));
  b.inst(fmt::format("mov.u32 {}, 0", kbase.str()));
  b.inst(fmt::format("mov.u32 {}, {}", ksteps.str(), ks.str()));
  b.inst(fmt::format("mul.lo.s32 {}, {}, {}", done.str(), iter.str(), ks.str()));
  b.inst("bra.uni " + join);
  b.placeLabel(run);
  b.instIf(setp(b, "lt", pos, end.str()), "bra.uni " + last, /*negate=*/true);
  // The run's next unit: from pos to the end of its tile or of the run.
  b.inst(fmt::format("div.u32 {}, {}, {}", tileIdx.str(), pos.str(), ks.str()));
  b.inst(fmt::format("rem.u32 {}, {}, {}", kbase.str(), pos.str(), ks.str()));
  Reg stop = binary(b, "min.u32", binary(b, "add.s32", kbase, binary(b, "sub.s32", end, pos.str()).str()), ks.str());
  b.inst(fmt::format("sub.s32 {}, {}, {}", ksteps.str(), stop.str(), kbase.str()));
  b.inst(fmt::format("add.s32 {}, {}, {}", done.str(), runBase.str(), pos.str()));
  b.inst(fmt::format("add.s32 {}, {}, {}", pos.str(), pos.str(), ksteps.str()));
  b.inst(fmt::format("add.s32 {}, {}, {}", tileIdx.str(), tileIdx.str(), tdp.str()));
  b.inst("bra.uni " + join);
  b.placeLabel(last);
  // The run's first unit, which ends a tile lower blocks began: peers = bid - owner(tile start),
  // owner(x) = ceil((x + 1) * R / S) - 1, the block whose run holds step x.
  Reg trel = binary(b, "div.u32", s, ks.str());
  b.inst(fmt::format("add.s32 {}, {}, {}", tileIdx.str(), trel.str(), tdp.str()));
  b.inst(fmt::format("mov.u32 {}, {}", kbase.str(), kb1.str()));
  b.inst(fmt::format("mov.u32 {}, {}", ksteps.str(), len1.str()));
  b.inst(fmt::format("sub.s32 {}, {}, {}", done.str(), binary(b, "add.s32", dpDone, end.str()).str(), s.str()));
  b.inst(fmt::format("sub.s32 {}, {}, {}", done.str(), done.str(), len1.str()));
  Reg start1 = binary(b, "mad.lo.s32", trel, fmt::format("{}, 1", ks.str()));  // tile start + 1
  Reg owner1 = mulDivWide(b, start1, runs, work, binary(b, "sub.s32", work, "1"));  // owner + 1
  b.inst(fmt::format("sub.s32 {}, {}, {}", peers.str(), binary(b, "add.s32", bid, "1").str(), owner1.str()));
  b.inst(fmt::format("mov.u32 {}, 0", rotLeft.str()));
  b.placeLabel(join);
  placeTile(e, op, g, tileIdx, cm, cn, rank);
  if (!e.emitBlock(body)) return false;
  b.inst(fmt::format("add.s32 {}, {}, 1", iter.str(), iter.str()));
  b.instIf(more(), "bra.uni " + head);
  b.placeLabel(skip);
  return true;
}

}  // namespace

bool emitTileLoop(KernelEmitter& e, const Operation& op) {
  if (op.attr("stream_k")) return emitStreamKLoop(e, op);
  PtxBuilder& b = e.b();
  const Block& body = op.body();
  Reg iter = e.def(body.argument(0));
  for (unsigned i = 1; i < 4; ++i) e.def(body.argument(i));  // m0, n0, batch (set by placeTile)
  // {cluster = [cm, cn]}: the loop walks cluster tiles (cm*bm x cn*bn) by cluster id, and the block
  // takes its sub-tile by rank (kern_ops.h).
  auto cl = op.intsAttr("cluster");
  int64_t cm = cl.size() == 2 ? cl[0] : 1, cn = cl.size() == 2 ? cl[1] : 1;
  bool clustered = cm * cn > 1;
  TileGrid g = tileGrid(e, op, cm, cn);
  Reg total = g.total;
  // {splits = S}: S units (K slices) per tile, consecutive (kern_ops.h).
  int64_t splits = op.intAttr("splits", 1);
  bool split = op.attr("splits") != nullptr;
  if (split) total = binary(b, "mul.lo.s32", total, std::to_string(splits));
  Reg t = special(b, clustered ? "%clusterid.x" : "%ctaid.x");
  Reg step = special(b, clustered ? "%nclusterid.x" : "%nctaid.x");
  Reg rank = clustered ? special(b, "%cluster_ctarank") : Reg{};
  if (clustered) e.requirePtxIsa(7, 8);
  b.inst(fmt::format("mov.u32 {}, 0", iter.str()));
  std::string head = b.label(), skip = b.label();
  b.instIf(setp(b, "ge", t, total.str()), "bra.uni " + skip);
  b.placeLabel(head);
  b.pragmaNounroll();
  // With splits the tile is unit / S, and the slice unit % S.
  Reg tileIdx = t;
  if (split) {
    tileIdx = e.def(body.argument(4));
    b.inst(fmt::format("div.u32 {}, {}, {}", tileIdx.str(), t.str(), splits));
    b.inst(fmt::format("rem.u32 {}, {}, {}", e.def(body.argument(5)).str(), t.str(), splits));
  }
  placeTile(e, op, g, tileIdx, cm, cn, rank);
  if (!e.emitBlock(body)) return false;
  b.inst(fmt::format("add.s32 {}, {}, 1", iter.str(), iter.str()));
  b.inst(fmt::format("add.s32 {}, {}, {}", t.str(), t.str(), step.str()));
  b.instIf(setp(b, "lt", t, total.str()), "bra.uni " + head);
  b.placeLabel(skip);
  return true;
}

bool emitSetMaxNReg(KernelEmitter& e, const Operation& op) {
  e.b().inst(fmt::format("setmaxnreg.{}.sync.aligned.u32 {}", op.stringAttr("action"), op.intAttr("regs", 0)));
  return true;
}

}  // namespace kiln::ptx
