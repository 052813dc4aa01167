// The generic verifier. Structure first (every op registered, operand/result/region counts, every
// attribute and type parameter one its table declares, single-block regions, terminators, SSA
// visibility, isolation, top-level placement), then each op's own verify hook — hooks may assume
// the structure is sound.
#include "kiln/ir/verifier.h"

#include <algorithm>
#include <unordered_set>

#include "kiln/ir/op_registry.h"

namespace kiln::ir {
namespace {

std::string countWord(int n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// Every attribute must be one the op's table declares: an unknown one is most likely a typo of a
// known one, which would otherwise be ignored and give a kernel other than the one asked for.
bool verifyAttrNames(const Operation& op, const OpInfo& info, DiagnosticEngine& diag) {
  for (const auto& a : op.attrs()) {
    if (info.knowsAttr(a.name)) continue;
    InFlightDiagnostic e = diag.error(op.loc());
    e << "unknown attribute '" << a.name << "' on " << op.name();
    if (std::string near = nearestName(a.name, info.attrs); !near.empty()) e << "; did you mean '" << near << "'?";
    else if (info.attrs.empty()) e << "; " << op.name() << " takes no attributes";
    else e << "; " << op.name() << " takes: " << joined(info.attrs);
    return false;
  }
  return true;
}

// The same for the parameters of a type whose kind a dialect declares (tensor<..., order = ...>).
bool verifyTypeParams(const Operation& op, const Type& t, DiagnosticEngine& diag) {
  const std::vector<std::string>* known = OpRegistry::get().typeParams(t.kind());
  if (!known) return true;
  for (const auto& p : t.params()) {
    if (std::find(known->begin(), known->end(), p.name) != known->end()) continue;
    InFlightDiagnostic e = diag.error(op.loc());
    e << "unknown parameter '" << p.name << "' of type " << t.str() << " on " << op.name();
    if (std::string near = nearestName(p.name, *known); !near.empty()) e << "; did you mean '" << near << "'?";
    else if (known->empty()) e << "; a " << t.kind() << " type takes no parameters";
    else e << "; a " << t.kind() << " type takes: " << joined(*known);
    return false;
  }
  return true;
}

// Every value is a result or a block argument, so checking those checks every type in the IR.
bool verifyTypes(const Operation& op, DiagnosticEngine& diag) {
  for (const auto& r : op.results())
    if (!verifyTypeParams(op, r->type(), diag)) return false;
  for (unsigned i = 0; i < op.numRegions(); ++i)
    for (const auto& block : op.region(i).blocks())
      for (const auto& a : block->arguments())
        if (!verifyTypeParams(op, a->type(), diag)) return false;
  return true;
}

class Verifier {
 public:
  explicit Verifier(DiagnosticEngine& diag) : diag_(diag) {}

  bool verifyOp(const Operation& op, std::vector<std::unordered_set<const Value*>>& visible) {
    const OpInfo* info = op.info();
    if (!info) return diag_.error(op.loc()) << "unknown operation '" << op.name() << "'";
    bool ok = true;
    auto checkCount = [&](int expected, size_t actual, const char* what) {
      if (expected >= 0 && static_cast<size_t>(expected) != actual) {
        diag_.error(op.loc()) << "'" << op.name() << "' expects " << countWord(expected, what)
                              << ", got " << actual;
        ok = false;
      }
    };
    checkCount(info->numOperands, op.numOperands(), "operand");
    checkCount(info->numResults, op.numResults(), "result");
    checkCount(info->numRegions, op.numRegions(), "region");
    if (!ok) return false;
    if (!verifyAttrNames(op, *info, diag_) || !verifyTypes(op, diag_)) return false;

    for (unsigned i = 0; i < op.numOperands(); ++i) {
      const Value* v = op.operand(i);
      if (!v) return diag_.error(op.loc()) << "'" << op.name() << "' operand #" << i << " is null";
      bool seen = false;
      for (const auto& scope : visible) seen = seen || scope.count(v);
      if (!seen) {
        return diag_.error(op.loc()) << "'" << op.name() << "' operand #" << i
                                     << " is not visible here: it must be defined before its use, "
                                        "in this region or one around it"
                                     << (info->has(kIsolated) ? "" : "");
      }
    }
    if (info->has(kTopLevel)) {
      const Operation* parent = op.parentOp();
      if (parent && !parent->is("builtin.module"))
        return diag_.error(op.loc()) << "'" << op.name() << "' may only appear at the top level, not inside '"
                                     << parent->name() << "'";
    }
    const Operation* parent = op.parentOp();
    if (info->has(kTerminator)) {
      if (op.parentBlock() && op.parentBlock()->back() != &op)
        return diag_.error(op.loc()) << "'" << op.name() << "' must be the last operation of its block";
      if (!parent || !parent->info() || !parent->info()->has(kNeedsTerminator))
        return diag_.error(op.loc()) << "'" << op.name() << "' may only end the body of a structured op";
    }

    for (unsigned r = 0; r < op.numRegions(); ++r) {
      const Region& region = op.region(r);
      if (region.blocks().size() != 1)
        return diag_.error(op.loc()) << "region #" << r << " of '" << op.name() << "' must have exactly one block";
      const Block& block = region.front();
      if (info->has(kNeedsTerminator)) {
        const Operation* last = block.back();
        if (!last || !last->info() || !last->info()->has(kTerminator))
          return diag_.error(op.loc()) << "region #" << r << " of '" << op.name()
                                       << "' must end with a terminator (for example tile.yield)";
      }
      // Isolated ops start from an empty scope: their regions see nothing from outside.
      std::vector<std::unordered_set<const Value*>> inner;
      auto& scopes = info->has(kIsolated) ? inner : visible;
      scopes.emplace_back();
      for (const auto& a : block.arguments()) scopes.back().insert(a.get());
      for (const auto& child : block.operations()) {
        if (!verifyOp(*child, scopes)) ok = false;
        for (const auto& res : child->results()) scopes.back().insert(res.get());
      }
      scopes.pop_back();
      if (!ok) return false;
    }
    if (info->verify && !info->verify(op, diag_)) return false;
    (void)parent;
    return ok;
  }

 private:
  DiagnosticEngine& diag_;
};

}  // namespace

bool verify(const Operation& op, DiagnosticEngine& diag) {
  size_t before = diag.errorCount();
  std::vector<std::unordered_set<const Value*>> visible;
  bool ok = Verifier(diag).verifyOp(op, visible);
  return ok && diag.errorCount() == before;
}

}  // namespace kiln::ir
