// The sm80_multistage strategy entry (contract in sm80_multistage.h). It checks the program and the
// config, creates the kernel and its indices, and hands over to the main loop
// (sm80_mainloop.cpp) and the epilogue (sm80_epilogue.cpp).
#include "schedule/sm80_multistage.h"

#include "schedule/sm80_context.h"
#include "transforms/pass_registry.h"

namespace kiln {
using namespace ir;

namespace {

Attribute pairList(const std::vector<std::pair<std::string, int64_t>>& v) {
  Attribute::Array a;
  for (const auto& [name, n] : v) a.push_back(Attribute::Array{Attribute(name), Attribute(n)});
  return Attribute(a);
}

// Block coordinates: which (M, N) tile this block computes.
void blockCoordinates(sm80::Context& cx) {
  KernBuilder& b = cx.b;
  const Config& c = cx.cfg;
  Value *pidM, *pidN;
  if (c.raster == Raster::Grouped) {
    // Walk groups of group_m tile rows column by column, so consecutive blocks share B tiles.
    Value* pid = b.op1("kern.block_id", {}, types::i32(), {{"dim", "x"}});
    Value* npm = b.div(b.addConst(cx.dimM, c.bm - 1), b.i32(c.bm));
    Value* npn = b.div(b.addConst(cx.dimN, c.bn - 1), b.i32(c.bn));
    Value* width = b.mulConst(npn, c.groupM);
    Value* first = b.mulConst(b.div(pid, width), c.groupM);
    Value* size = b.min(b.sub(npm, first), b.i32(c.groupM));
    Value* within = b.rem(pid, width);
    pidM = b.add(first, b.rem(within, size));
    pidN = b.div(within, size);
  } else {
    pidN = b.op1("kern.block_id", {}, types::i32(), {{"dim", "x"}});
    pidM = b.op1("kern.block_id", {}, types::i32(), {{"dim", "y"}});
  }
  cx.m0 = b.named(b.mulConst(pidM, c.bm), "m0");
  cx.n0 = b.named(b.mulConst(pidN, c.bn), "n0");
}

}  // namespace

std::unique_ptr<Operation> lowerSm80Multistage(const Operation& program, const Target& target, const Config& config,
                                               DiagnosticEngine& diag) {
  auto g = analyzeGemm(program, config.strategy, diag);
  if (!g) return nullptr;
  int eb = bitWidth(g->abType) / 8;
  if (!validate(config, target, OperandInfo{eb, eb}, diag, program.loc())) return nullptr;

  // The kernel and its signature.
  std::vector<std::string> names;
  for (const auto& p : g->params) names.push_back(p.name);
  std::vector<std::pair<std::string, int64_t>> requires_ = {{g->dimK, 16 / eb}};
  if (!g->bKMajor) requires_.push_back({g->dimN, 16 / eb});
  std::vector<std::pair<std::string, int64_t>> align = {{g->loadA->operand(0)->definingOp()->stringAttr("name"), 16},
                                                         {g->loadB->operand(0)->definingOp()->stringAttr("name"), 16}};
  for (const Operation* op : g->epilogue)
    if (op->is("tile.store")) {
      int64_t pairBytes = 2 * bitWidth(op->operand(0)->type().elem()) / 8;
      align.push_back({op->operand(0)->definingOp()->stringAttr("name"), pairBytes});
      if (g->bKMajor && requires_.size() == 1) requires_.push_back({g->dimN, 2});
    }
  Attribute grid = config.raster == Raster::Grouped
                       ? Attribute(Attribute::Array{Attribute(Attribute::Array{Attribute(g->dimM), Attribute(int64_t(config.bm)),
                                                                               Attribute(g->dimN), Attribute(int64_t(config.bn))})})
                       : pairList({{g->dimN, config.bn}, {g->dimM, config.bm}});
  int64_t smem = config.pipelineSmemBytes(eb, eb);
  auto kernel = Operation::create(program.loc(), "kern.kernel", {}, {},
                                  {{"sym_name", program.stringAttr("sym_name")},
                                   {"params", Attribute::strings(names)},
                                   {"threads", int64_t(config.threads())},
                                   {"smem_bytes", smem},
                                   {"grid", grid},
                                   {"requires", pairList(requires_)},
                                   {"align", pairList(align)},
                                   {"target", target.name},
                                   {"config", config.str()}},
                                  1);
  Block* body = kernel->region(0).addBlock();
  KernBuilder b(body);
  b.setLoc(program.loc());
  sm80::Context cx{*g, config, target, b, diag};
  for (const auto& p : g->params) cx.params[p.name] = body->addArgument(p.type, p.name);
  cx.dimM = cx.params.at(g->dimM);
  cx.dimN = cx.params.at(g->dimN);
  cx.dimK = cx.params.at(g->dimK);

  b.setLoc(g->forTiles->loc());
  cx.tid = b.named(b.op1("kern.thread_id", {}, types::i32()), "tid");
  cx.lane = b.named(b.op1("kern.lane_id", {}, types::i32()), "lane");
  cx.warp = b.named(b.op1("kern.warp_id", {}, types::i32()), "warp");
  cx.warpM = b.named(b.div(cx.warp, b.i32(config.warpsN)), "wm");
  cx.warpN = b.named(b.rem(cx.warp, b.i32(config.warpsN)), "wn");
  blockCoordinates(cx);

  std::vector<Value*> acc = sm80::buildMainloop(cx);
  if (!sm80::buildEpilogue(cx, acc)) return nullptr;
  return kernel;
}

namespace transforms {

// The pass: every tile.program becomes a kern.kernel. The program's optional {target = "sm_80",
// config = "bm=..."} attributes choose the target and the schedule (defaults: sm_80, Config{}).
bool lowerSm80MultistagePass(Module& m, DiagnosticEngine& diag) {
  bool ok = true;
  for (auto it = m.body().operations().begin(); it != m.body().operations().end(); ++it) {
    Operation& op = **it;
    if (!op.is("tile.program")) continue;
    std::string tname = op.stringAttr("target", "sm_80");
    auto target = Target::byName(tname);
    if (!target) {
      diag.error(op.loc()) << "unknown target '" << tname << "'; known targets: " << Target::knownNames();
      ok = false;
      continue;
    }
    auto config = Config::parse(op.stringAttr("config"), diag, op.loc());
    if (!config) {
      ok = false;
      continue;
    }
    if (config->strategy != "sm80_multistage") {
      diag.error(op.loc()) << "lower-sm80-multistage got a config for strategy '" << config->strategy << "'";
      ok = false;
      continue;
    }
    auto kernel = lowerSm80Multistage(op, *target, *config, diag);
    if (!kernel) {
      ok = false;
      continue;
    }
    Operation* k = m.body().insert(it, std::move(kernel));
    it = m.body().find(k);
    std::next(it)->get()->walk([](Operation& inner) { inner.dropAllOperands(); });
    m.body().operations().erase(std::next(it));
  }
  return ok;
}

}  // namespace transforms
}  // namespace kiln
