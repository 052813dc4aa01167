// GEMM recognition (the accepted shape is drawn in gemm_analysis.h).
#include "schedule/gemm_analysis.h"

#include "dialects/kern/kern_ops.h"
#include "dialects/tile/tile_ops.h"

namespace kiln {
using namespace ir;

bool isRowMajor2d(const Type& t) {
  if (t.rank() != 2) return false;
  const Attribute* o = t.param("order");
  if (!o) return true;
  auto v = o->asInts();
  return v && *v == std::vector<int64_t>{1, 0};
}

namespace {

bool isKMajor2d(const Type& t) {
  const Attribute* o = t.param("order");
  auto v = o ? o->asInts() : std::nullopt;
  return t.rank() == 2 && v && *v == std::vector<int64_t>{0, 1};
}

// The tensor argument a value comes from (its tile.input/output), or null.
const Operation* argDecl(const Value* v) {
  const Operation* d = v->definingOp();
  return d && (d->is("tile.input") || d->is("tile.output")) ? d : nullptr;
}

}  // namespace

std::optional<GemmProgram> analyzeGemm(const Operation& program, const std::string& strategy, DiagnosticEngine& diag) {
  GemmProgram g;
  g.program = &program;
  const std::string who = strategy + " lowers GEMM-shaped programs";
  auto fail = [&](const Location& loc) { return diag.error(loc); };

  bool grouped = false;
  program.walk([&](const Operation& op) { grouped |= op.is("tile.group_index"); });
  if (grouped)
    return fail(program.loc()) << strategy << " does not lower grouped GEMMs (tile.group_index) yet", std::nullopt;
  for (const auto& op : program.body().operations()) {
    if (op->is("tile.for_tiles")) {
      if (g.forTiles) return fail(op->loc()) << who << " with one tile.for_tiles; this program has two", std::nullopt;
      g.forTiles = op.get();
    }
  }
  if (!g.forTiles) return fail(program.loc()) << who << ": this program has no tile.for_tiles", std::nullopt;
  const Operation& ft = *g.forTiles;
  if (!ft.stringAttr("batch").empty())
    return fail(ft.loc()) << strategy << " does not lower batched tile loops (batch = \"" << ft.stringAttr("batch")
                          << "\") yet",
           std::nullopt;
  auto dims = ft.stringsAttr("dims");
  if (dims.size() != 2)
    return fail(ft.loc()) << who << ": tile.for_tiles must tile two dims (M, N), not " << dims.size(), std::nullopt;
  g.dimM = dims[0];
  g.dimN = dims[1];

  // The body: constant init, one reduce, the epilogue, the yield.
  const Block& body = ft.body();
  const Operation* init = nullptr;
  for (const auto& op : body.operations()) {
    if (op->is("tile.reduce")) {
      if (g.reduce) return fail(op->loc()) << who << " with one tile.reduce; this tile loop has two", std::nullopt;
      g.reduce = op.get();
    } else if (!g.reduce) {
      if (!op->is("tile.constant"))
        return fail(op->loc()) << who << ": before the tile.reduce only the accumulator's tile.constant may appear, "
                                          "not '"
                               << op->name() << "'",
               std::nullopt;
    } else if (!op->is("tile.yield")) {
      g.epilogue.push_back(op.get());
    }
  }
  if (!g.reduce) return fail(ft.loc()) << who << ": the tile loop has no tile.reduce", std::nullopt;
  const Operation& red = *g.reduce;
  g.dimK = red.stringAttr("dim");
  if (red.numOperands() != 1)
    return fail(red.loc()) << who << ": the tile.reduce must carry exactly one accumulator, not "
                           << red.numOperands(),
           std::nullopt;
  init = red.operand(0)->definingOp();
  if (!init || !init->is("tile.constant") || !init->attr("value"))
    return fail(red.loc()) << who << ": the accumulator must start from a tile.constant", std::nullopt;
  g.accInit = init->attr("value")->asNumber();

  // The reduce body: exactly load A, load B, dot, yield.
  const Block& rb = red.body();
  for (const auto& op : rb.operations()) {
    if (op->is("tile.load")) continue;
    if (op->is("tile.dot")) {
      if (g.dot) return fail(op->loc()) << who << " with one tile.dot per K step; found two", std::nullopt;
      g.dot = op.get();
      continue;
    }
    if (op->is("tile.yield")) continue;
    return fail(op->loc()) << strategy << " cannot lower '" << op->name()
                           << "' inside the K loop: only tile.load and tile.dot may appear there",
           std::nullopt;
  }
  if (!g.dot) return fail(red.loc()) << who << ": the tile.reduce has no tile.dot", std::nullopt;
  const Operation& dot = *g.dot;
  if (dot.operand(2) != rb.argument(1) || rb.back()->operand(0) != dot.result())
    return fail(dot.loc()) << who << ": the tile.dot must accumulate into the carried value and be yielded",
           std::nullopt;
  g.loadA = dot.operand(0)->definingOp();
  g.loadB = dot.operand(1)->definingOp();
  if (!g.loadA || !g.loadA->is("tile.load") || !g.loadB || !g.loadB->is("tile.load"))
    return fail(dot.loc()) << who << ": both tile.dot operands must come straight from tile.load", std::nullopt;
  for (const Operation* ld : {g.loadA, g.loadB}) {
    const Attribute* other = ld->attr("other");
    if (other && other->asNumber() != 0.0)
      return fail(ld->loc()) << strategy << " fills out-of-bounds operand elements with zeros (cp.async zero-fill); "
                                            "{other = "
                             << other->str() << "} is not supported",
             std::nullopt;
    if (ld->numOperands() != 3 || ld->operand(1)->definingOp() || ld->operand(2)->definingOp())
      return fail(ld->loc()) << who << ": operand loads must be indexed by the tile and K coordinates only",
             std::nullopt;
  }
  g.tensorA = g.loadA->operand(0);
  g.tensorB = g.loadB->operand(0);
  if (!argDecl(g.tensorA) || !argDecl(g.tensorB))
    return fail(dot.loc()) << who << ": the tile.dot operands must be loaded from tensor arguments", std::nullopt;

  // Element types and layouts.
  ScalarType ta = g.tensorA->type().elem(), tb = g.tensorB->type().elem();
  if (isFp8(ta) || isFp8(tb))
    return fail(dot.loc()) << strategy << " has no FP8 MMA path: tile.dot of " << scalarName(ta) << " x "
                           << scalarName(tb) << " needs an FP8 strategy (sm_89+ mma.sync e4m3/e5m2 or sm_90a wgmma)",
           std::nullopt;
  if (ta != tb || (ta != ScalarType::BF16 && ta != ScalarType::F16))
    return fail(dot.loc()) << strategy << " multiplies bf16 x bf16 or f16 x f16, not " << scalarName(ta) << " x "
                           << scalarName(tb),
           std::nullopt;
  g.abType = ta;
  const Type& tA = g.tensorA->type();
  const Type& tB = g.tensorB->type();
  if (!isRowMajor2d(tA))
    return fail(g.loadA->loc()) << strategy << " needs A row-major [" << g.dimM << ", " << g.dimK
                                << "] (K contiguous); got " << tA.str(),
           std::nullopt;
  if (isRowMajor2d(tB)) {
    g.bKMajor = false;
  } else if (isKMajor2d(tB)) {
    g.bKMajor = true;
  } else {
    return fail(g.loadB->loc()) << strategy << " needs B row-major or K-major, got " << tB.str(), std::nullopt;
  }

  // Parameters: tensors, then scalars, then dims.
  for (const auto& op : program.body().operations())
    if (op->is("tile.input") || op->is("tile.output"))
      g.params.push_back({op->stringAttr("name"), op.get(), kern::ptrType(op->result()->type().elem())});
  for (const auto& op : program.body().operations())
    if (op->is("tile.scalar")) {
      const Type& t = op->result()->type();
      if (!t.isScalar(ScalarType::F32) && !t.isScalar(ScalarType::I32))
        return fail(op->loc()) << strategy << " passes f32 and i32 scalar arguments, not " << t.str(), std::nullopt;
      g.params.push_back({op->stringAttr("name"), op.get(), t});
    }
  for (const auto& d : program.stringsAttr("dims")) g.params.push_back({d, nullptr, types::i32()});
  return g;
}

}  // namespace kiln
