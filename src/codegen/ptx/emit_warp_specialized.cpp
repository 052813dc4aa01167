// Emitters for warp specialization and persistence: kern.role, kern.tile_loop, kern.setmaxnreg
// (semantics in dialects/kern/kern_ops.h).
//
//   kern.role {warpgroups = [f, c]}     ->  setp.lt.u32 p, tid.x - 128 f, 128 c;  @!p bra.uni skip;
//                                            body;  skip:      (whole warpgroups: warp-uniform)
//   kern.tile_loop(M, N, batches)       ->  t = ctaid.x; iter = 0; while t < T: (m0, n0, batch) of t;
//                                            body; t += nctaid.x; ++iter      (every thread that
//                                            reaches it walks the same tiles: bra.uni)
//     {cluster = [cm, cn]}              ->  t = %clusterid.x, step %nclusterid.x over cluster tiles,
//                                            sub-tile by %cluster_ctarank (PTX ISA, "Special
//                                            Registers"; the grid is 1-D, so clusters are
//                                            consecutive blocks along x)
//     {splits = S}                      ->  over T * S units: tile = unit / S, split = unit % S
//   kern.setmaxnreg {action, regs}      ->  setmaxnreg.{inc|dec}.sync.aligned.u32 regs
//                                            (PTX ISA, "setmaxnreg"; sm_90a)
#include <fmt/format.h>

#include "codegen/ptx/emitter.h"

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

// ceil(x / k) for a compile-time k > 0 and x >= 0.
Reg ceilDiv(PtxBuilder& b, const Reg& x, int64_t k) {
  Reg t = binary(b, "add.s32", x, std::to_string(k - 1));
  return binary(b, "div.s32", t, std::to_string(k));
}

}  // namespace

bool emitRole(KernelEmitter& e, const Operation& op) {
  PtxBuilder& b = e.b();
  auto wg = op.intsAttr("warpgroups");
  Reg tid = special(b, "%tid.x");
  Reg rel = wg[0] ? binary(b, "sub.s32", tid, std::to_string(wg[0] * 128)) : tid;
  Reg p = b.reg(RegClass::Pred);
  b.inst(fmt::format("setp.lt.u32 {}, {}, {}", p.str(), rel.str(), wg[1] * 128));
  std::string skip = b.label();
  b.instIf(p, "bra.uni " + skip, /*negate=*/true);
  if (!e.emitBlock(op.body())) return false;
  b.placeLabel(skip);
  return true;
}

bool emitTileLoop(KernelEmitter& e, const Operation& op) {
  PtxBuilder& b = e.b();
  auto tile = op.intsAttr("tile");
  const Block& body = op.body();
  Reg iter = e.def(body.argument(0)), m0 = e.def(body.argument(1)), n0 = e.def(body.argument(2)),
      batch = e.def(body.argument(3));
  // {cluster = [cm, cn]}: the loop walks cluster tiles (cm*bm x cn*bn) by cluster id, and the block
  // takes its sub-tile by rank (kern_ops.h).
  auto cl = op.intsAttr("cluster");
  int64_t cm = cl.size() == 2 ? cl[0] : 1, cn = cl.size() == 2 ? cl[1] : 1;
  bool clustered = cm * cn > 1;
  Reg tm = ceilDiv(b, e.use(op.operand(0)), tile[0] * cm);
  Reg tn = ceilDiv(b, e.use(op.operand(1)), tile[1] * cn);
  Reg per = binary(b, "mul.lo.s32", tm, tn.str());
  Reg total = binary(b, "mul.lo.s32", per, e.use(op.operand(2)).str());
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
  Reg done = b.reg(RegClass::Pred);
  b.inst(fmt::format("setp.ge.s32 {}, {}, {}", done.str(), t.str(), total.str()));
  b.instIf(done, "bra.uni " + skip);
  b.placeLabel(head);
  b.pragmaNounroll();
  // batch = t / per, r = t % per; then (pm, pn) from r by the raster order. With splits the tile is
  // unit / S, and the slice unit % S.
  Reg tileIdx = t;
  if (split) {
    tileIdx = e.def(body.argument(4));
    b.inst(fmt::format("div.s32 {}, {}, {}", tileIdx.str(), t.str(), splits));
    b.inst(fmt::format("rem.s32 {}, {}, {}", e.def(body.argument(5)).str(), t.str(), splits));
  }
  b.inst(fmt::format("div.s32 {}, {}, {}", batch.str(), tileIdx.str(), per.str()));
  Reg r = binary(b, "rem.s32", tileIdx, per.str());
  Reg pm, pn;
  if (op.stringAttr("raster") == "grouped") {
    int64_t g = op.intAttr("group_m", 8);
    Reg width = binary(b, "mul.lo.s32", tn, std::to_string(g));
    Reg gid = binary(b, "div.s32", r, width.str());
    Reg first = binary(b, "mul.lo.s32", gid, std::to_string(g));
    Reg left = binary(b, "sub.s32", tm, first.str());
    Reg size = binary(b, "min.s32", left, std::to_string(g));
    Reg within = binary(b, "rem.s32", r, width.str());
    pm = binary(b, "add.s32", first, binary(b, "rem.s32", within, size.str()).str());
    pn = binary(b, "div.s32", within, size.str());
  } else {
    pm = binary(b, "div.s32", r, tn.str());
    pn = binary(b, "rem.s32", r, tn.str());
  }
  if (clustered) {
    // pm = pm * cm + rank % cm; pn = pn * cn + rank / cm.
    pm = binary(b, "mad.lo.s32", pm, fmt::format("{}, {}", cm, binary(b, "rem.u32", rank, std::to_string(cm)).str()));
    pn = binary(b, "mad.lo.s32", pn, fmt::format("{}, {}", cn, binary(b, "div.u32", rank, std::to_string(cm)).str()));
  }
  b.inst(fmt::format("mul.lo.s32 {}, {}, {}", m0.str(), pm.str(), tile[0]));
  b.inst(fmt::format("mul.lo.s32 {}, {}, {}", n0.str(), pn.str(), tile[1]));
  if (!e.emitBlock(body)) return false;
  b.inst(fmt::format("add.s32 {}, {}, 1", iter.str(), iter.str()));
  b.inst(fmt::format("add.s32 {}, {}, {}", t.str(), t.str(), step.str()));
  Reg more = b.reg(RegClass::Pred);
  b.inst(fmt::format("setp.lt.s32 {}, {}, {}", more.str(), t.str(), total.str()));
  b.instIf(more, "bra.uni " + head);
  b.placeLabel(skip);
  return true;
}

bool emitSetMaxNReg(KernelEmitter& e, const Operation& op) {
  e.b().inst(fmt::format("setmaxnreg.{}.sync.aligned.u32 {}", op.stringAttr("action"), op.intAttr("regs", 0)));
  return true;
}

}  // namespace kiln::ptx
