// The generic printer (format documented in printer.h).
#include "kiln/ir/printer.h"

#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "kiln/ir/op_registry.h"

namespace kiln::ir {
namespace {

// Assigns printed names: the value's hint when it is free, else hint_N; unnamed values by number.
class Namer {
 public:
  const std::string& name(const Value* v) {
    auto it = names_.find(v);
    if (it != names_.end()) return it->second;
    std::string n = sanitize(v->nameHint());
    if (n.empty()) {
      n = std::to_string(next_++);
    } else if (used_.count(n)) {
      std::string base = n + "_";
      for (int i = 1;; ++i)
        if (!used_.count(base + std::to_string(i))) {
          n = base + std::to_string(i);
          break;
        }
    }
    used_.insert(n);
    return names_.emplace(v, "%" + n).first->second;
  }
  // An isolated op's regions see no outer value, so they may reuse names: save and restart.
  void pushIsolated() { saved_.push_back({std::move(used_), next_}); used_.clear(); next_ = 0; }
  void popIsolated() {
    used_ = std::move(saved_.back().first);
    next_ = saved_.back().second;
    saved_.pop_back();
  }
  const std::string& lookup(const Value* v) {
    auto it = names_.find(v);
    if (it != names_.end()) return it->second;
    static const std::string kUndefined = "%<undefined>";
    return v ? name(v) : kUndefined;  // a value from outside the printed op
  }

 private:
  static std::string sanitize(const std::string& h) {
    std::string r;
    for (char c : h)
      r += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.') ? c : '_';
    if (!r.empty() && !std::isalpha(static_cast<unsigned char>(r[0])) && r[0] != '_') r = "v" + r;
    return r;
  }
  std::unordered_map<const Value*, std::string> names_;
  std::unordered_set<std::string> used_;
  int next_ = 0;
  std::vector<std::pair<std::unordered_set<std::string>, int>> saved_;
};

class Printer {
 public:
  Printer(std::ostream& os, const PrintOptions& opts) : os_(os), opts_(opts) {}

  void printOp(const Operation& op, int indent) {
    os_ << std::string(indent, ' ');
    if (op.numResults()) {
      for (unsigned i = 0; i < op.numResults(); ++i) os_ << (i ? ", " : "") << namer_.name(op.result(i));
      os_ << " = ";
    }
    os_ << op.name() << "(";
    for (unsigned i = 0; i < op.numOperands(); ++i) os_ << (i ? ", " : "") << namer_.lookup(op.operand(i));
    os_ << ")";
    if (!op.attrs().empty()) {
      os_ << " {";
      for (size_t i = 0; i < op.attrs().size(); ++i)
        os_ << (i ? ", " : "") << op.attrs()[i].name << " = " << op.attrs()[i].value.str();
      os_ << "}";
    }
    if (op.numResults()) {
      os_ << " : ";
      for (unsigned i = 0; i < op.numResults(); ++i) os_ << (i ? ", " : "") << op.result(i)->type().str();
    }
    if (opts_.locations && op.loc().known())
      os_ << " loc(" << quoteString(op.loc().file) << ":" << op.loc().line << ":" << op.loc().col << ")";
    bool isolated = op.info() && op.info()->has(kIsolated);
    if (isolated) namer_.pushIsolated();
    for (unsigned r = 0; r < op.numRegions(); ++r) printRegion(op.region(r), indent);
    if (isolated) namer_.popIsolated();
    os_ << "\n";
  }

 private:
  void printRegion(const Region& region, int indent) {
    os_ << " {\n";
    for (const auto& block : region.blocks()) {
      if (block->numArguments()) {
        os_ << std::string(indent, ' ') << "^bb0(";
        for (unsigned i = 0; i < block->numArguments(); ++i) {
          const Value* a = block->argument(i);
          os_ << (i ? ", " : "") << namer_.name(a) << ": " << a->type().str();
        }
        os_ << "):\n";
      }
      for (const auto& op : block->operations()) printOp(*op, indent + 2);
    }
    os_ << std::string(indent, ' ') << "}";
  }

  std::ostream& os_;
  const PrintOptions& opts_;
  Namer namer_;
};

}  // namespace

void print(const Operation& op, std::ostream& os, const PrintOptions& opts) {
  Printer(os, opts).printOp(op, 0);
}

std::string toString(const Operation& op, const PrintOptions& opts) {
  std::ostringstream os;
  print(op, os, opts);
  return os.str();
}

std::string toString(const Module& m, const PrintOptions& opts) {
  // A module prints as its top-level ops, separated by blank lines.
  std::ostringstream os;
  Printer p(os, opts);
  bool first = true;
  for (const auto& op : m.body().operations()) {
    if (!first && op->numRegions()) os << "\n";
    first = false;
    p.printOp(*op, 0);
  }
  return os.str();
}

}  // namespace kiln::ir
