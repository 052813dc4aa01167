#pragma once
// Turning ptxas's complaints into Kiln diagnostics that point at what the user wrote.
//
// ptxas reports errors by PTX line ("ptxas application ptx input, line 15; error   : ...").
// A PTX line means little to a Kiln user, so the PTX emitter writes a provenance comment before
// the instructions of every kern op:
//
//     // kiln: <op-name> at <file:line:col>
//
// and a message on PTX line N is attributed to the nearest such comment at or before N within the
// same function. The diagnostic then carries the op's location, its name, the PTX line number and
// the offending PTX text.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/diagnostics.h"

namespace kiln::backend {

struct PtxasMessage {
  enum class Kind { Error, Fatal, Warning, Advisory };  // Advisory: "info : (C7504) ..." lines
  Kind kind = Kind::Error;
  int ptxLine = 0;   // 1-based; 0 when the message names no line
  std::string text;  // the message after "error   : ", including any "(Cnnnn)" code
};

// Every error, fatal, warning and coded advisory in an nvJitLink log (ptxas's lines and the
// linker's own). Resource lines and plain info are not messages.
std::vector<PtxasMessage> parsePtxasMessages(std::string_view log);

struct PtxProvenance {
  std::string opName;
  ir::Location loc;
  int commentLine = 0;  // the PTX line of the "// kiln:" comment
};

// Line-indexed view of a PTX text with the provenance of each line.
class PtxSourceMap {
 public:
  explicit PtxSourceMap(std::string_view ptx);
  // The kern op that emitted `line`, if a provenance comment precedes it in its function.
  std::optional<PtxProvenance> provenanceOf(int line) const;
  // The text of a 1-based line without surrounding blanks; empty when out of range.
  std::string_view lineText(int line) const;

 private:
  std::vector<std::string_view> lines_;
  std::vector<int> provenanceIndex_;  // per line: index into provenance_, or -1
  std::vector<PtxProvenance> provenance_;
};

// Parses "file:line:col", "file:line", "line:col" or "<unknown>" as Location::str() writes it.
ir::Location parseLocation(std::string_view s);

// Reports each message to `diag` (errors as errors, warnings and advisories as warnings),
// attributed through `source`. `ptxName` names the PTX in locations when no comment applies; a
// message that names no PTX line says which `arch` it came from instead (ptxas often does not).
// Returns the warnings as reported, to be kept with the result.
std::vector<ir::Diagnostic> reportPtxasMessages(const std::vector<PtxasMessage>& messages,
                                             const PtxSourceMap& source, std::string_view ptxName,
                                             std::string_view arch, ir::DiagnosticEngine& diag);

}  // namespace kiln::backend
