// Verify hooks of the markers of a staged TMA-store box, kern.stage_begin and kern.stage_end
// (table in kern_ops.def, semantics in kern_ops.h, "The TMA-store epilogue"): a pair in one block,
// naming the same stage rows, elected thread and barrier, with no other box between them.
// sm90-stage-epilogue relies on exactly this to write the box's protocol.
#include "dialects/kern/kern_ops.h"
#include "dialects/kern/kern_verify.h"

namespace kiln::kern {
using namespace kiln::ir;

namespace {

// The operands (buf, slot, elected, bar) of a marker: all of a kern.stage_begin's, a
// kern.stage_end's second and third and its last two.
struct Marker {
  const Value *buf, *slot, *elected, *bar;
  int64_t row;
  bool operator==(const Marker&) const = default;
};

Marker markerOf(const Operation& op) {
  const unsigned n = op.numOperands();
  if (op.is("kern.stage_begin"))
    return {op.operand(0), op.operand(1), op.operand(2), op.operand(3), op.intAttr("row", -1)};
  return {op.operand(1), op.operand(2), op.operand(n - 2), op.operand(n - 1), op.intAttr("row", -1)};
}

// The marker that pairs with op: the next kern.stage_end after a begin, the last kern.stage_begin
// before an end (nullptr when another marker of the other kind, or none, comes first).
const Operation* partnerOf(const Operation& op) {
  const auto& ops = op.parentBlock()->operations();
  const bool begin = op.is("kern.stage_begin");
  auto at = op.parentBlock()->find(&op);
  if (begin) {
    for (auto it = std::next(at); it != ops.end(); ++it) {
      if ((*it)->is("kern.stage_end")) return it->get();
      if ((*it)->is("kern.stage_begin")) return nullptr;
    }
    return nullptr;
  }
  for (auto it = at; it != ops.begin();) {
    --it;
    if ((*it)->is("kern.stage_begin")) return it->get();
    if ((*it)->is("kern.stage_end")) return nullptr;
  }
  return nullptr;
}

bool markerOperands(const Operation& op, const Marker& m, DiagnosticEngine& d) {
  if (!smemLayout(m.buf->type()) || !m.slot->type().isScalar(ScalarType::I32) ||
      !m.elected->type().isScalar(ScalarType::I1) || !m.bar->type().isScalar(ScalarType::I32))
    return d.error(op.loc()) << "'" << op.name()
                             << "' needs a shared-memory buffer, an i32 slot, the i1 of the thread that stores and "
                                "the i32 id of the stagers' named barrier";
  if (m.row < 0 || m.row % 8 != 0)
    return d.error(op.loc()) << "'" << op.name()
                             << "' needs {row = R}: the box's first row in the stage, a multiple of 8";
  return true;
}

}  // namespace

bool verifyStageBegin(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  Marker m = markerOf(op);
  if (!markerOperands(op, m, d)) return false;
  if (const Attribute* f = op.attr("fresh"); f && !f->isBool())
    return d.error(op.loc()) << "'kern.stage_begin' {fresh} is true or false";
  const Operation* end = partnerOf(op);
  if (!end)
    return d.error(op.loc()) << "'kern.stage_begin' needs a kern.stage_end after it in its block, before the next "
                                "kern.stage_begin: the box's staging ends there";
  if (markerOf(*end) != m)
    return d.error(op.loc()) << "'kern.stage_begin' and the kern.stage_end after it name different stage rows, "
                                "elected threads or barriers";
  return true;
}

bool verifyStageEnd(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  const unsigned n = op.numOperands();
  if (n < 7 || n > 8)
    return d.error(op.loc()) << "'kern.stage_end' takes (map, buf, slot), 2 or 3 coordinates, the i1 of the thread "
                                "that stores and the i32 id of the stagers' named barrier";
  if (!markerOperands(op, markerOf(op), d) || !verifyTmaStoreOperands(op, n - 5, d)) return false;
  auto offset = op.intsAttr("offset");
  if (offset.size() != 2 || offset[0] < 0 || offset[1] < 0)
    return d.error(op.loc()) << "'kern.stage_end' needs {offset = [d0, d1]}: the box's non-negative displacement "
                                "from coordinates (c0, c1)";
  if (!partnerOf(op))
    return d.error(op.loc()) << "'kern.stage_end' needs a kern.stage_begin before it in its block, after the "
                                "previous kern.stage_end: the box's staging begins there";
  return true;
}

}  // namespace kiln::kern
