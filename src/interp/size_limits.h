#pragma once
// The interpreter's size checks: run before anything is allocated, so that a huge or overflowing
// dim is a sentence naming the dim and the limit, never a wrapped size (a write past a buffer) or an
// uncaught std::bad_alloc.
//
// Two checks, at the two points where the sizes become known:
//  * checkArgumentSizes, once the dims are known: every tensor argument's element count and byte
//    count fits in int64, and all of them together (with the doubles a run keeps per element) fit
//    under the memory limit;
//  * checkTileSizes, once the block sizes are chosen: every tile a program computes fits under the
//    limit, and the number of tile-loop instances fits in int64.
#include <cstdint>
#include <map>
#include <string>

#include "interp/runtime_values.h"
#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"

namespace kiln::interp {

// Bytes the interpreter keeps per tensor element beyond its storage: one double while inputs are
// generated, and one per output element for the fp64 reference.
inline constexpr int64_t kDoublesPerElementBytes = 8;

// "16.0 GiB" / "512 bytes": a byte count as a user reads it (exact below 1 MiB).
std::string formatBytes(int64_t bytes);

// Parses a memory size as a user writes it: "8G", "512M", "64K", "1T" (binary units, an optional
// trailing "iB" or "B"), or a plain byte count. nullopt when malformed, zero or over 2^62.
std::optional<int64_t> parseMemorySize(const std::string& text);

// Reports every tensor argument whose size overflows int64 (naming the dim that makes it overflow)
// and, when they all fit, whether their total exceeds `maxBytes`. Tensors whose dims are missing or
// not positive are skipped: binding reports those.
bool checkArgumentSizes(const ir::Operation& program, const std::map<std::string, int64_t>& dims, int64_t maxBytes,
                        ir::DiagnosticEngine& diag);

// Reports the first tile whose elements (as doubles) exceed `maxBytes` and any tile loop whose
// instance count overflows, given the run's extents and block sizes.
bool checkTileSizes(const ir::Operation& program, const RunContext& ctx, int64_t maxBytes, ir::DiagnosticEngine& diag);

}  // namespace kiln::interp
