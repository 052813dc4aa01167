#pragma once
// The instruction mix of a cubin, read from its SASS disassembly.
//
// Assembly gates (DESIGN.md, "Testing") assert what ptxas actually produced: that the ldmatrix
// pairing pass really gave LDSM.16.M88.4, that the mainloop is HMMA and not a scalar fallback.
// Opcodes are kept whole, with every modifier ("HMMA.16816.F32.BF16"), and counted over
// instructions only: labels, directives and section headers are not instructions; a predicated
// instruction ("@!P0 BRA ...") counts under its opcode, without the guard. The padding a function
// ends with (a self-branch and NOPs to the section's alignment) is counted like anything else.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/diagnostics.h"

namespace kiln::backend {

struct SassStats {
  std::map<std::string, int> opcodes;  // full opcode with modifiers -> occurrences
  std::string text;                    // the disassembly as the tool printed it
  // R2UR instructions on the issue path of a warpgroup's wgmma batches: between a WARPGROUP.ARRIVE
  // and the HGMMA/QGMMA that closes its batch (the one with gsb0). wgmma takes its descriptors from
  // uniform registers; each R2UR there is a descriptor built on the vector pipe and moved over, as
  // ptxas does when it cannot prove the values warp-uniform (docs/sm90-strategy.md). 0 is the goal.
  int wgmmaBatchR2ur = 0;

  // Instructions whose opcode is `prefix` or extends it by whole modifiers: count("HMMA") counts
  // "HMMA.16816.F32.BF16", count("LDSM.16.M88") counts "LDSM.16.M88.4", but count("ST") does not
  // count "STG" and count("LDSM.16.M88") does not count "LDSM.16.MT88.4".
  int count(std::string_view prefix) const;
  int total() const;
};

// Parses nvdisasm or cuobjdump -sass output.
SassStats parseSass(std::string_view disassembly);

// Disassembles `cubin` with the disassembler found as disassembler.h describes. nullopt, with a
// diagnostic that says what to install, when there is none.
std::optional<SassStats> sassStats(const std::vector<char>& cubin, ir::DiagnosticEngine& diag);

}  // namespace kiln::backend
