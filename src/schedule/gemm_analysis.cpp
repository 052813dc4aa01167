// GEMM recognition (the accepted shape is drawn in gemm_analysis.h). analyzeGemm runs the checks
// below in order; each reports the first thing about the program that differs from the shape and
// returns false.
#include "schedule/gemm_analysis.h"

#include "dialects/kern/kern_ops.h"
#include "dialects/tile/tensor_layout.h"
#include "dialects/tile/tile_ops.h"

namespace kiln {
using namespace ir;

bool isRowMajor2d(const Type& t) {
  if (t.rank() != 2 || t.param("strides")) return false;
  const Attribute* o = t.param("order");
  if (!o) return true;
  auto v = o->asInts();
  return v && *v == std::vector<int64_t>{1, 0};
}

bool isRowMajorMatrix(const Type& t) {
  if (t.rank() == 2) return isRowMajor2d(t);
  if (t.rank() != 3 || t.param("strides")) return false;
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

std::optional<int> contiguousMatrixAxis(const Type& t) {
  if (t.rank() != 2 && t.rank() != 3) return std::nullopt;
  if (t.param("strides")) {
    int64_t u = tile::tensorLayout(t).contiguousAxis() - int64_t(t.rank() - 2);
    return u >= 0 ? std::optional<int>(int(u)) : std::nullopt;
  }
  if (isRowMajorMatrix(t)) return 1;
  if (isColMajorMatrix(t)) return 0;
  return std::nullopt;
}

GemmProgram::Access matrixAccess(const Type& t) {
  GemmProgram::Access a;
  const size_t r = t.rank();
  const int c = *contiguousMatrixAxis(t);
  tile::TensorLayout l = tile::tensorLayout(t);
  if (!l.strided()) {
    a.ld = t.shape()[r - 2 + size_t(c)];
    return a;
  }
  a.strided = true;
  a.ld = l.strides[r - 2 + size_t(1 - c)];
  if (r == 3) a.matrixStride = l.strides[0];
  return a;
}

namespace {

// The tensor argument a value comes from (its tile.input/output), or null.
const Operation* argDecl(const Value* v) {
  const Operation* d = v->definingOp();
  return d && (d->is("tile.input") || d->is("tile.output")) ? d : nullptr;
}

// What no GEMM strategy lowers: a program without a matrix product, and a GEMM that reduces along
// its output's rows (each tile holds bn columns of a row, never the whole row).
bool checkGemmShaped(const Operation& program, const std::string& strategy, DiagnosticEngine& diag) {
  const Operation *anyDot = nullptr, *rowReduce = nullptr, *span = nullptr;
  program.walk([&](const Operation& op) {
    if ((op.is("tile.dot") || op.is("tile.dot_scaled")) && !anyDot) anyDot = &op;
    if (op.is("tile.reduce_axis") && !rowReduce) rowReduce = &op;
    if (op.is("tile.span") && !span) span = &op;
  });
  if (!anyDot)
    return diag.error(program.loc()) << strategy << " lowers programs with a matrix product (tile.dot), and this one has "
                                                    "none: compile it with strategy=rowwise, the strategy for memory-bound "
                                                    "programs";
  if (rowReduce)
    return diag.error(rowReduce->loc())
           << strategy << " does not fuse a reduction along the output's rows ('tile.reduce_axis' "
           << rowReduce->stringAttr("kind") << " along '" << rowReduce->stringAttr("dim")
           << "') into a GEMM: its tiles hold a block of each row, never the whole row; store the GEMM's output and "
              "reduce it with a second program (strategy=rowwise)";
  if (span)
    return diag.error(span->loc()) << strategy << " tiles a GEMM's output in blocks of rows and columns (tile.for_tiles over [M, "
                                                  "N]); 'tile.span' of '"
                                   << span->stringAttr("dim")
                                   << "' makes a tile hold whole rows, which it does not support: tile that dim instead";
  return true;
}

// The one tile.for_tiles over [M, N] (and its batch dim).
bool findTileLoop(const Operation& program, GemmProgram& g, const std::string& who, const std::string& strategy,
                  DiagnosticEngine& diag) {
  for (const auto& op : program.body().operations()) {
    if (!op->is("tile.for_tiles")) continue;
    if (g.forTiles) return diag.error(op->loc()) << who << " with one tile.for_tiles; this program has two";
    g.forTiles = op.get();
  }
  if (!g.forTiles) return diag.error(program.loc()) << who << ": this program has no tile.for_tiles";
  const Operation& ft = *g.forTiles;
  g.dimBatch = ft.stringAttr("batch");
  if (!g.dimBatch.empty()) g.batchArg = ft.body().argument(0);
  auto dims = ft.stringsAttr("dims");
  if (dims.size() != 2) return diag.error(ft.loc()) << who << ": tile.for_tiles must tile two dims (M, N), not " << dims.size();
  g.dimM = dims[0];
  g.dimN = dims[1];
  return ft.stringAttr("ragged").empty() || analyzeRagged(g, strategy, diag);
}

// A tile.group_index before the reduce: by the M coordinate, from a tensor argument, unbatched.
bool takeGroupIndex(const Operation& op, GemmProgram& g, const std::string& who, const std::string& strategy,
                    DiagnosticEngine& diag) {
  if (g.groupIndex) return diag.error(op.loc()) << who << " with one tile.group_index; this tile loop has two";
  if (g.batchArg)
    return diag.error(op.loc()) << strategy << " does not lower a batched grouped GEMM (tile.group_index inside a "
                                               "batched tile.for_tiles)";
  if (op.operand(1) != coordArgM(g))
    return diag.error(op.loc()) << strategy << " reads one group id per block of rows: tile.group_index must be indexed "
                                               "by the "
                                << g.dimM << " coordinate";
  if (!argDecl(op.operand(0)) || !op.operand(0)->definingOp()->is("tile.input"))
    return diag.error(op.loc()) << strategy << " reads group ids from a tensor argument (tile.input)";
  g.groupIndex = &op;
  g.groupValue = op.result();
  g.groupIds = op.operand(0);
  g.groupAlign = op.intAttr("align", 0);
  return true;
}

// The tile loop's body: a constant init (and a group index), one reduce, the epilogue, the yield.
bool scanTileBody(GemmProgram& g, const std::string& who, const std::string& strategy, DiagnosticEngine& diag) {
  for (const auto& op : g.forTiles->body().operations()) {
    if (op->is("tile.reduce")) {
      if (g.reduce) return diag.error(op->loc()) << who << " with one tile.reduce; this tile loop has two";
      g.reduce = op.get();
    } else if (!g.reduce && op->is("tile.group_index")) {
      if (!takeGroupIndex(*op, g, who, strategy, diag)) return false;
    } else if (!g.reduce) {
      if (!op->is("tile.constant"))
        return diag.error(op->loc()) << who << ": before the tile.reduce only the accumulator's tile.constant may appear, "
                                               "not '"
                                     << op->name() << "'";
    } else if (!op->is("tile.yield")) {
      g.epilogue.push_back(op.get());
    }
  }
  if (!g.reduce) return diag.error(g.forTiles->loc()) << who << ": the tile loop has no tile.reduce";
  const Operation& red = *g.reduce;
  g.dimK = red.stringAttr("dim");
  if (red.numOperands() != 1)
    return diag.error(red.loc()) << who << ": the tile.reduce must carry exactly one accumulator, not " << red.numOperands();
  const Operation* init = red.operand(0)->definingOp();
  if (!init || !init->is("tile.constant") || !init->attr("value"))
    return diag.error(red.loc()) << who << ": the accumulator must start from a tile.constant";
  g.accInit = init->attr("value")->asNumber();
  return true;
}

// The reduce body: exactly load A, load B, dot (or dot_scaled and the loads of its scales), yield.
bool scanReduceBody(GemmProgram& g, const std::string& who, const std::string& strategy, DiagnosticEngine& diag) {
  const Block& rb = g.reduce->body();
  for (const auto& op : rb.operations()) {
    if (op->is("tile.load") || op->is("tile.yield")) continue;
    if (op->is("tile.dot") || op->is("tile.dot_scaled")) {
      if (g.dot) return diag.error(op->loc()) << who << " with one tile.dot per K step; found two";
      g.dot = op.get();
      continue;
    }
    return diag.error(op->loc()) << strategy << " cannot lower '" << op->name()
                                 << "' inside the K loop: only tile.load and tile.dot may appear there";
  }
  if (!g.dot) return diag.error(g.reduce->loc()) << who << ": the tile.reduce has no tile.dot";
  const Operation& dot = *g.dot;
  const bool scaled = dot.is("tile.dot_scaled");  // (a, a_scale, b, b_scale, acc)
  if (dot.operand(scaled ? 4 : 2) != rb.argument(1) || rb.back()->operand(0) != dot.result())
    return diag.error(dot.loc()) << who << ": the tile.dot must accumulate into the carried value and be yielded";
  g.loadA = dot.operand(0)->definingOp();
  g.loadB = dot.operand(scaled ? 2 : 1)->definingOp();
  if (!g.loadA || !g.loadA->is("tile.load") || !g.loadB || !g.loadB->is("tile.load"))
    return diag.error(dot.loc()) << who << ": both tile.dot operands must come straight from tile.load";
  return true;
}

// Each operand load: zero-filled, indexed by (the batch or, for B, the group index, then) the tile
// and K coordinates, from a tensor argument.
bool checkOperandLoads(GemmProgram& g, const std::string& who, const std::string& strategy, DiagnosticEngine& diag) {
  for (const Operation* ld : {g.loadA, g.loadB}) {
    const Attribute* other = ld->attr("other");
    if (other && other->asNumber() != 0.0)
      return diag.error(ld->loc()) << strategy << " fills out-of-bounds operand elements with zeros (cp.async zero-fill); "
                                                  "{other = "
                                   << other->str() << "} is not supported";
    // B of a grouped GEMM may lead with the group index; A never does.
    const Value* lead = g.raggedK ? nullptr : g.batchArg;  // groups along K: the operands are not batched
    if (!lead && ld == g.loadB && g.groupValue && ld->numOperands() == 4 && ld->operand(1) == g.groupValue) {
      lead = g.groupValue;
      g.bGrouped = true;
    }
    unsigned first = lead ? 2 : 1;
    bool ok = ld->numOperands() == first + 2 && (!lead || ld->operand(1) == lead);
    for (unsigned i = first; ok && i < ld->numOperands(); ++i) ok = !ld->operand(i)->definingOp();
    if (!ok)
      return diag.error(ld->loc()) << who << ": operand loads must be indexed by "
                                   << (g.batchArg && !g.raggedK ? "the batch index, then "
                                       : g.groupValue ? "(for B) the group index, then "
                                                      : "")
                                   << "the tile and K coordinates only";
  }
  g.tensorA = g.loadA->operand(0);
  g.tensorB = g.loadB->operand(0);
  if (!argDecl(g.tensorA) || !argDecl(g.tensorB))
    return diag.error(g.dot->loc()) << who << ": the tile.dot operands must be loaded from tensor arguments";
  return true;
}

// Element types, then A's and B's layouts: which axis is contiguous, and whether the strategy
// addresses it (FP8: A row-major, B K-major; sm90_ws_persistent: no stride 0).
bool checkOperandTypes(const Operation& program, GemmProgram& g, const std::string& strategy, DiagnosticEngine& diag) {
  const bool sm90 = strategy == "sm90_ws_persistent";
  ScalarType ta = g.tensorA->type().elem(), tb = g.tensorB->type().elem();
  g.fp8 = isFp8(ta) && isFp8(tb);
  if (!g.fp8 && (ta != tb || (ta != ScalarType::BF16 && ta != ScalarType::F16)))
    return diag.error(g.dot->loc()) << strategy << " multiplies bf16 x bf16, f16 x f16 or FP8 x FP8 (f8e4m3/f8e5m2), not "
                                    << scalarName(ta) << " x " << scalarName(tb);
  g.abType = ta;
  g.bType = tb;
  // A tensor map's strides are positive: one matrix repeated for every batch (a stride 0) has none.
  if (sm90)
    for (const auto& op : program.body().operations()) {
      const Attribute* st = op->is("tile.input") || op->is("tile.output") ? op->result()->type().param("strides") : nullptr;
      for (const Attribute& e : st ? st->asArray() : Attribute::Array{})
        if (e.isInt() && e.asInt() == 0)
          return diag.error(op->loc()) << strategy << " reads '" << op->stringAttr("name")
                                       << "' through a tensor map, whose strides are positive; its stride 0 (one "
                                          "matrix for every batch) has none: compile it with strategy=sm80_multistage";
    }
  const Type& tA = g.tensorA->type();
  const Type& tB = g.tensorB->type();
  std::optional<int> axA = contiguousMatrixAxis(tA), axB = contiguousMatrixAxis(tB);
  if (!axA || (*axA == 0 && g.fp8))
    return diag.error(g.loadA->loc())
           << strategy << " needs A row-major [" << g.dimM << ", " << g.dimK << "] (K contiguous)"
           << (!axA  ? " or column-major (M contiguous), with any batch axis outermost"
               : sm90 ? " for FP8 operands: wgmma reads 8-bit operands K-major only"
                      : " for FP8 operands: ldmatrix .trans has no 8-bit form")
           << "; got " << tA.str();
  g.aColMajor = *axA == 0;
  if (g.fp8 && axB && *axB == 1)
    return diag.error(g.loadB->loc()) << strategy << " needs an FP8 B stored K-major (order = ["
                                      << (tB.rank() == 3 ? "1, 2, 0" : "0, 1")
                                      << (sm90 ? "]): wgmma reads 8-bit operands K-major only; got "
                                               : "]): ldmatrix .trans has no 8-bit form, so a row-major FP8 B cannot "
                                                 "feed mma.sync; got ")
                                      << tB.str();
  if (!axB) return diag.error(g.loadB->loc()) << strategy << " needs B row-major or K-major, got " << tB.str();
  g.bKMajor = *axB == 0;
  g.accessA = matrixAccess(tA);
  g.accessB = matrixAccess(tB);
  return true;
}

// The kernel's parameters: tensors, then scalars, then dims.
bool collectParams(const Operation& program, GemmProgram& g, const std::string& strategy, DiagnosticEngine& diag) {
  for (const auto& op : program.body().operations())
    if (op->is("tile.input") || op->is("tile.output"))
      g.params.push_back({op->stringAttr("name"), op.get(), kern::ptrType(op->result()->type().elem())});
  for (const auto& op : program.body().operations())
    if (op->is("tile.scalar")) {
      const Type& t = op->result()->type();
      if (!t.isScalar(ScalarType::F32) && !t.isScalar(ScalarType::I32))
        return diag.error(op->loc()) << strategy << " passes f32 and i32 scalar arguments, not " << t.str();
      g.params.push_back({op->stringAttr("name"), op.get(), t});
    }
  for (const auto& d : program.stringsAttr("dims")) g.params.push_back({d, nullptr, types::i32()});
  return true;
}

}  // namespace

std::optional<GemmProgram> analyzeGemm(const Operation& program, const std::string& strategy, DiagnosticEngine& diag) {
  GemmProgram g;
  g.program = &program;
  const std::string who = strategy + " lowers GEMM-shaped programs";
  bool ok = checkGemmShaped(program, strategy, diag) && findTileLoop(program, g, who, strategy, diag) &&
            scanTileBody(g, who, strategy, diag) && scanReduceBody(g, who, strategy, diag) &&
            checkOperandLoads(g, who, strategy, diag) && checkOperandTypes(program, g, strategy, diag) &&
            (!g.dot->is("tile.dot_scaled") || analyzeScaledDot(g, strategy, diag)) &&
            collectParams(program, g, strategy, diag);
  if (!ok) return std::nullopt;
  return g;
}

}  // namespace kiln
