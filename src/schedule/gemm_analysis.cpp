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

bool isRowMajorMatrix(const Type& t) {
  if (t.rank() == 2) return isRowMajor2d(t);
  if (t.rank() != 3) return false;
  const Attribute* o = t.param("order");
  auto v = o ? o->asInts() : std::nullopt;
  return !o || (v && *v == std::vector<int64_t>{2, 1, 0});
}

bool isColMajorMatrix(const Type& t) {
  const Attribute* o = t.param("order");
  auto v = o ? o->asInts() : std::nullopt;
  if (!v) return false;
  if (t.rank() == 2) return *v == std::vector<int64_t>{0, 1};
  return t.rank() == 3 && *v == std::vector<int64_t>{1, 2, 0};
}

namespace {

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

  // What no GEMM strategy lowers: a program without a matrix product, and a GEMM that reduces
  // along its output's rows (each tile holds bn columns of a row, never the whole row).
  const Operation *anyDot = nullptr, *rowReduce = nullptr, *span = nullptr;
  program.walk([&](const Operation& op) {
    if ((op.is("tile.dot") || op.is("tile.dot_scaled")) && !anyDot) anyDot = &op;
    if (op.is("tile.reduce_axis") && !rowReduce) rowReduce = &op;
    if (op.is("tile.span") && !span) span = &op;
  });
  if (!anyDot)
    return fail(program.loc()) << strategy << " lowers programs with a matrix product (tile.dot), and this one has "
                                              "none: compile it with strategy=rowwise, the strategy for memory-bound "
                                              "programs",
           std::nullopt;
  if (rowReduce)
    return fail(rowReduce->loc()) << strategy << " does not fuse a reduction along the output's rows ('tile.reduce_axis' "
                                  << rowReduce->stringAttr("kind") << " along '" << rowReduce->stringAttr("dim")
                                  << "') into a GEMM: its tiles hold a block of each row, never the whole row; store "
                                     "the GEMM's output and reduce it with a second program (strategy=rowwise)",
           std::nullopt;
  if (span)
    return fail(span->loc()) << strategy << " tiles a GEMM's output in blocks of rows and columns (tile.for_tiles over [M, "
                                            "N]); 'tile.span' of '"
                             << span->stringAttr("dim")
                             << "' makes a tile hold whole rows, which it does not support: tile that dim instead",
           std::nullopt;

  for (const auto& op : program.body().operations()) {
    if (op->is("tile.for_tiles")) {
      if (g.forTiles) return fail(op->loc()) << who << " with one tile.for_tiles; this program has two", std::nullopt;
      g.forTiles = op.get();
    }
  }
  if (!g.forTiles) return fail(program.loc()) << who << ": this program has no tile.for_tiles", std::nullopt;
  const Operation& ft = *g.forTiles;
  g.dimBatch = ft.stringAttr("batch");
  if (!g.dimBatch.empty()) g.batchArg = ft.body().argument(0);
  auto dims = ft.stringsAttr("dims");
  if (dims.size() != 2)
    return fail(ft.loc()) << who << ": tile.for_tiles must tile two dims (M, N), not " << dims.size(), std::nullopt;
  g.dimM = dims[0];
  g.dimN = dims[1];
  if (!ft.stringAttr("ragged").empty() && !analyzeRagged(g, strategy, diag)) return std::nullopt;

  // The body: constant init (and a group index), one reduce, the epilogue, the yield.
  const Block& body = ft.body();
  const Operation* init = nullptr;
  for (const auto& op : body.operations()) {
    if (op->is("tile.reduce")) {
      if (g.reduce) return fail(op->loc()) << who << " with one tile.reduce; this tile loop has two", std::nullopt;
      g.reduce = op.get();
    } else if (!g.reduce && op->is("tile.group_index")) {
      if (g.groupIndex) return fail(op->loc()) << who << " with one tile.group_index; this tile loop has two", std::nullopt;
      if (g.batchArg)
        return fail(op->loc()) << strategy << " does not lower a batched grouped GEMM (tile.group_index inside a "
                                              "batched tile.for_tiles)",
               std::nullopt;
      if (op->operand(1) != coordArgM(g))
        return fail(op->loc()) << strategy << " reads one group id per block of rows: tile.group_index must be indexed "
                                              "by the "
                               << g.dimM << " coordinate",
               std::nullopt;
      if (!argDecl(op->operand(0)) || !op->operand(0)->definingOp()->is("tile.input"))
        return fail(op->loc()) << strategy << " reads group ids from a tensor argument (tile.input)", std::nullopt;
      g.groupIndex = op.get();
      g.groupValue = op->result();
      g.groupIds = op->operand(0);
      g.groupAlign = op->intAttr("align", 0);
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

  // The reduce body: exactly load A, load B, dot (or dot_scaled and the loads of its scales), yield.
  const Block& rb = red.body();
  for (const auto& op : rb.operations()) {
    if (op->is("tile.load")) continue;
    if (op->is("tile.dot") || op->is("tile.dot_scaled")) {
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
  const bool scaled = dot.is("tile.dot_scaled");  // (a, a_scale, b, b_scale, acc)
  if (dot.operand(scaled ? 4 : 2) != rb.argument(1) || rb.back()->operand(0) != dot.result())
    return fail(dot.loc()) << who << ": the tile.dot must accumulate into the carried value and be yielded",
           std::nullopt;
  g.loadA = dot.operand(0)->definingOp();
  g.loadB = dot.operand(scaled ? 2 : 1)->definingOp();
  if (!g.loadA || !g.loadA->is("tile.load") || !g.loadB || !g.loadB->is("tile.load"))
    return fail(dot.loc()) << who << ": both tile.dot operands must come straight from tile.load", std::nullopt;
  for (const Operation* ld : {g.loadA, g.loadB}) {
    const Attribute* other = ld->attr("other");
    if (other && other->asNumber() != 0.0)
      return fail(ld->loc()) << strategy << " fills out-of-bounds operand elements with zeros (cp.async zero-fill); "
                                            "{other = "
                             << other->str() << "} is not supported",
             std::nullopt;
    // B of a grouped GEMM may lead with the group index; A never does.
    const Value* lead = g.batchArg;
    if (!lead && ld == g.loadB && g.groupValue && ld->numOperands() == 4 && ld->operand(1) == g.groupValue) {
      lead = g.groupValue;
      g.bGrouped = true;
    }
    unsigned first = lead ? 2 : 1;
    bool ok = ld->numOperands() == first + 2 && (!lead || ld->operand(1) == lead);
    for (unsigned i = first; ok && i < ld->numOperands(); ++i) ok = !ld->operand(i)->definingOp();
    if (!ok)
      return fail(ld->loc()) << who << ": operand loads must be indexed by "
                             << (g.batchArg ? "the batch index, then " : g.groupValue ? "(for B) the group index, then " : "")
                             << "the tile and K coordinates only",
             std::nullopt;
  }
  g.tensorA = g.loadA->operand(0);
  g.tensorB = g.loadB->operand(0);
  if (!argDecl(g.tensorA) || !argDecl(g.tensorB))
    return fail(dot.loc()) << who << ": the tile.dot operands must be loaded from tensor arguments", std::nullopt;

  // Element types and layouts.
  ScalarType ta = g.tensorA->type().elem(), tb = g.tensorB->type().elem();
  g.fp8 = isFp8(ta) && isFp8(tb);
  if (!g.fp8 && (ta != tb || (ta != ScalarType::BF16 && ta != ScalarType::F16)))
    return fail(dot.loc()) << strategy << " multiplies bf16 x bf16, f16 x f16 or FP8 x FP8 (f8e4m3/f8e5m2), not "
                           << scalarName(ta) << " x " << scalarName(tb),
           std::nullopt;
  g.abType = ta;
  g.bType = tb;
  const Type& tA = g.tensorA->type();
  const Type& tB = g.tensorB->type();
  if (!isRowMajorMatrix(tA))
    return fail(g.loadA->loc()) << strategy << " needs A row-major [" << g.dimM << ", " << g.dimK
                                << "] (K contiguous); got " << tA.str(),
           std::nullopt;
  if (g.fp8 && isRowMajorMatrix(tB)) {
    return fail(g.loadB->loc()) << strategy << " needs an FP8 B stored K-major (order = ["
                                << (tB.rank() == 3 ? "1, 2, 0" : "0, 1")
                                << (strategy == "sm90_ws_persistent"
                                        ? "]): wgmma reads 8-bit operands K-major only; got "
                                        : "]): ldmatrix .trans has no 8-bit form, so a row-major FP8 B cannot feed "
                                          "mma.sync; got ")
                                << tB.str(),
           std::nullopt;
  } else if (isRowMajorMatrix(tB)) {
    g.bKMajor = false;
  } else if (isColMajorMatrix(tB)) {
    g.bKMajor = true;
  } else {
    return fail(g.loadB->loc()) << strategy << " needs B row-major or K-major, got " << tB.str(), std::nullopt;
  }

  if (scaled && !analyzeScaledDot(g, strategy, diag)) return std::nullopt;

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
