// Strength reduction of i32 division and remainder by powers of two.
//
//   %q = arith.divsi(%x, %c8)    ->  %q = arith.shrui(%x, %c3)        when %x >= 0 is provable
//   %r = arith.remsi(%x, %c8)    ->  %r = arith.andi(%x, %c7)         (int_range.h)
//   %q = arith.divui(%x, %c8)    ->  %q = arith.shrui(%x, %c3)        always (unsigned: exact)
//   %r = arith.remui(%x, %c8)    ->  %r = arith.andi(%x, %c7)
//
// Why: PTX div.s32 / rem.s32 must round toward zero for negative x, and ptxas expands them into
// the generic division sequence (I2F.RP, MUFU.RCP, IMAD.HI, fix-ups: ~15 SASS instructions)
// even for a constant 128 (seen in the sm90 consumer's per-tile index math). For x >= 0 the
// quotient is a shift and the remainder a mask, one instruction each. Fail-closed: an x the range
// analysis cannot bound below by 0, a divisor that is not a positive power-of-two constant, or a
// type other than i32 keeps the op as it is.
#include "dialects/kern/int_range.h"
#include "kiln/ir/builder.h"
#include "kiln/ir/types.h"
#include "transforms/pass_registry.h"

namespace kiln::transforms {

namespace {

int log2Exact(int64_t c) {
  if (c <= 0 || (c & (c - 1)) != 0) return -1;
  int k = 0;
  while ((int64_t(1) << k) < c) ++k;
  return k;
}

struct Rewriter {
  kern::IntRangeAnalysis ranges;
  int rewritten = 0;

  void walk(ir::Block& block) {
    for (auto it = block.operations().begin(); it != block.operations().end(); ++it) {
      ir::Operation* op = it->get();
      for (unsigned r = 0; r < op->numRegions(); ++r)
        for (auto& b : op->region(r).blocks()) walk(*b);
      rewrite(block, *op);
    }
  }

  void rewrite(ir::Block& block, ir::Operation& op) {
    bool unsignedOp = op.is("arith.divui") || op.is("arith.remui");
    bool div = op.is("arith.divsi") || op.is("arith.divui"), rem = op.is("arith.remsi") || op.is("arith.remui");
    if (!(div || rem) || !op.result()->type().isScalar(ir::ScalarType::I32)) return;
    int64_t c = 0;
    if (!kern::constantInt(op.operand(1), c)) return;
    int k = log2Exact(c);
    if (k < 0 || (!unsignedOp && !ranges.of(op.operand(0)).nonNegative())) return;
    ir::OpBuilder b(&block);
    b.setInsertionPoint(&op);
    b.setLoc(op.loc());
    ir::Value* amount = b.create("arith.constant", {}, {ir::types::i32()}, {{"value", int64_t(div ? k : c - 1)}})->result();
    // The new op computes the same value for every thread, so the range memo stays valid.
    ir::Operation* n = b.create(div ? "arith.shrui" : "arith.andi", {op.operand(0), amount}, {ir::types::i32()});
    op.result()->replaceAllUsesWith(n->result());
    n->result()->setNameHint(op.result()->nameHint());  // the printed IR keeps the schedule's names
    op.result()->setNameHint({});
    ++rewritten;
  }
};

}  // namespace

bool strengthReducePass(ir::Module& m, ir::DiagnosticEngine&) {
  Rewriter r;
  r.walk(m.body());
  return true;  // the replaced ops are now unused; dce removes them
}

}  // namespace kiln::transforms
