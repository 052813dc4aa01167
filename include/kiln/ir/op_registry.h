#pragma once
// The op registry: one OpInfo per operation name, declared by each dialect in one table
// (src/dialects/<dialect>/<dialect>_ops.def).
//
// The IR core knows no dialect: the dialects layer installs its ops once per process
// (kiln::registerAllDialects(), kiln/dialects.h), as an MLIR tool registers its dialects. Every
// entry point above that layer (ProgramBuilder, kiln::compile, the tools) does so before it builds
// or parses IR; a program that calls the IR core directly calls it first, and one that forgets is
// stopped at its first op with a message saying so.
//
// An OpInfo gives the generic verifier the op's shape (operand, result and region counts; -1 means
// variadic, checked by the op's own hook), its traits, and an optional verify hook for the rules
// that are the op's own. Printing and parsing are generic, so every registered op round-trips.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/diagnostics.h"

namespace kiln::ir {

class Operation;

enum OpTrait : uint32_t {
  kNoTraits = 0,
  kPure = 1u << 0,          // no side effects: may be removed when its results are unused
  kTerminator = 1u << 1,    // must be the last op of its block
  kNeedsTerminator = 1u << 2,  // each region's block must end in a terminator
  kIsolated = 1u << 3,      // regions may not use values defined outside (programs, kernels)
  kTopLevel = 1u << 4,      // may only appear directly in a module
};

using VerifyHook = bool (*)(const Operation&, DiagnosticEngine&);

struct OpInfo {
  std::string name;
  int numOperands;  // -1: variadic
  int numResults;   // -1: variadic
  int numRegions;
  uint32_t traits;
  VerifyHook verify;  // may be null
  std::string summary;  // one line, shown by `kiln opt --list-ops`
  // Every attribute the op may carry, whether a user writes it or a pass adds it. The verifier
  // refuses any other name, so a misspelled setting is an error instead of a silently ignored one.
  std::vector<std::string> attrs;

  bool has(OpTrait t) const { return (traits & t) != 0; }
  bool knowsAttr(std::string_view a) const;
};

// "a b c" -> {"a", "b", "c"}: the attribute column of the op tables.
std::vector<std::string> words(std::string_view spaced);

// Of `candidates`, the one nearest `word` when it is a likely typo (edit distance at most 2, and
// not the whole word), else "". Used for "did you mean" suggestions.
std::string nearestName(std::string_view word, const std::vector<std::string>& candidates);

class OpRegistry {
 public:
  // The process-wide registry; an internal error (abort) before install().
  static const OpRegistry& get();
  // Builds the process-wide registry with `fill` (which adds every dialect's ops). The first call
  // installs it; later calls do nothing. Thread-safe.
  static void install(void (*fill)(OpRegistry&));
  const OpInfo* lookup(std::string_view name) const;
  const std::vector<OpInfo>& all() const { return ops_; }
  void add(OpInfo info);
  // A parametric type kind a dialect defines and the parameters it may carry
  // (`tensor<bf16, [M, K], order = [1, 0]>`); the verifier refuses other parameters of a kind
  // declared here. nullptr for a kind no dialect declares.
  void addTypeKind(std::string kind, std::vector<std::string> params);
  const std::vector<std::string>* typeParams(std::string_view kind) const;

 private:
  std::vector<OpInfo> ops_;
  std::vector<std::pair<std::string, std::vector<std::string>>> typeKinds_;
};

}  // namespace kiln::ir
