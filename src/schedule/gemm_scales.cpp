// The block scales of a tile.dot_scaled K loop (the shape gemm_analysis.h draws): what a GEMM
// strategy needs to know to apply them per K slice, and the forms no strategy lowers.
//
//   %a  = tile.load(%A, %m, %k)     %sa = tile.load(%SA, %m, %k)      SA: tensor<f32, [M, K], block = [bm', bk']>
//   %b  = tile.load(%B, %k, %n)     %sb = tile.load(%SB, %k, %n)      SB: tensor<f32, [K, N], block = [bk'', bn']>
//   %d  = tile.dot_scaled(%a, %sa, %b, %sb, %c) {block_k = g}
//
// Each scale is loaded straight from a block-tensor input at exactly its operand's indices, so a
// scale's stored element for an output element's row (or column) and K slice is its block's.
#include "schedule/gemm_analysis.h"

namespace kiln {
using namespace ir;

namespace {

// The block-tensor input `load` reads, indexed as `operand` is; null after a diagnostic.
const Operation* scaleLoad(const Operation& dot, unsigned idx, const Operation* operand, const char* what,
                           const std::string& strategy, DiagnosticEngine& diag) {
  const Operation* load = dot.operand(idx)->definingOp();
  const Operation* arg = load && load->is("tile.load") ? load->operand(0)->definingOp() : nullptr;
  if (!arg || !arg->is("tile.input") || !arg->result()->type().param("block")) {
    diag.error(dot.loc()) << strategy << " reads the scales of " << what
                          << " straight from a block-tensor input (p.scales), with tile.load";
    return nullptr;
  }
  bool same = load->numOperands() == operand->numOperands();
  for (unsigned i = 1; same && i < load->numOperands(); ++i) same = load->operand(i) == operand->operand(i);
  if (!same) {
    diag.error(load->loc()) << strategy << " loads the scales of " << what << ", '" << arg->stringAttr("name")
                            << "', at " << what << "'s own indices (the scale of each element it multiplies)";
    return nullptr;
  }
  return load;
}

}  // namespace

bool analyzeScaledDot(GemmProgram& g, const std::string& strategy, DiagnosticEngine& diag) {
  const Operation& dot = *g.dot;
  if (strategy != "sm90_ws_persistent")
    return diag.error(dot.loc()) << strategy << " does not apply block scales (tile.dot_scaled); compile with "
                                                "strategy=sm90_ws_persistent";
  if (!g.fp8)
    return diag.error(dot.loc()) << strategy << " applies block scales to FP8 operands (f8e4m3 / f8e5m2) only";
  if (g.groupIndex)
    return diag.error(dot.loc()) << strategy << " does not apply block scales in a grouped GEMM (tile.group_index)";
  g.loadScaleA = scaleLoad(dot, 1, g.loadA, "A", strategy, diag);
  g.loadScaleB = g.loadScaleA ? scaleLoad(dot, 3, g.loadB, "B", strategy, diag) : nullptr;
  g.blockK = dot.intAttr("block_k", 0);
  return g.loadScaleA && g.loadScaleB;
}

}  // namespace kiln
