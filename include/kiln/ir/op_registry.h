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

  bool has(OpTrait t) const { return (traits & t) != 0; }
};

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

 private:
  std::vector<OpInfo> ops_;
};

}  // namespace kiln::ir
