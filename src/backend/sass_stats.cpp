#include "kiln/sass_stats.h"

#include <cctype>

#include "backend/disassembler.h"

namespace kiln::backend {
namespace {

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// An instruction line starts with its address comment: "/*0a30*/   @!P0 HMMA.16816.F32 R4, ...;".
// cuobjdump's encoding lines ("/* 0x000fc4... */") have a blank after "/*" and do not match.
std::optional<std::string_view> instructionAfterAddress(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && isSpace(line[i])) ++i;
  if (line.substr(i, 2) != "/*") return std::nullopt;
  i += 2;
  size_t digits = i;
  while (i < line.size() && std::isxdigit(static_cast<unsigned char>(line[i]))) ++i;
  if (i == digits || line.substr(i, 2) != "*/") return std::nullopt;
  return line.substr(i + 2);
}

}  // namespace

int SassStats::count(std::string_view prefix) const {
  int n = 0;
  for (auto it = opcodes.lower_bound(std::string(prefix)); it != opcodes.end(); ++it) {
    std::string_view op = it->first;
    if (!op.starts_with(prefix)) break;  // the map is sorted: matches are contiguous
    if (op.size() == prefix.size() || op[prefix.size()] == '.') n += it->second;
  }
  return n;
}

int SassStats::total() const {
  int n = 0;
  for (const auto& [_, c] : opcodes) n += c;
  return n;
}

SassStats parseSass(std::string_view text) {
  SassStats s;
  s.text = std::string(text);
  bool inBatch = false;  // between a WARPGROUP.ARRIVE and the wgmma that closes its batch
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    auto insn = instructionAfterAddress(line);
    if (!insn) continue;
    std::string_view rest = *insn;
    size_t i = 0;
    while (i < rest.size() && isSpace(rest[i])) ++i;
    if (i < rest.size() && rest[i] == '@') {  // guard predicate: @P0, @!PT, @!UP1
      while (i < rest.size() && !isSpace(rest[i])) ++i;
      while (i < rest.size() && isSpace(rest[i])) ++i;
    }
    size_t start = i;
    while (i < rest.size() && !isSpace(rest[i]) && rest[i] != ';') ++i;
    if (i == start) continue;
    std::string_view op = rest.substr(start, i - start);
    ++s.opcodes[std::string(op)];
    if (op == "WARPGROUP.ARRIVE") inBatch = true;
    if (inBatch && op == "R2UR") ++s.wgmmaBatchR2ur;
    bool wgmma = op.starts_with("HGMMA") || op.starts_with("QGMMA");
    if (wgmma && rest.substr(i).find("gsb0") != std::string_view::npos) inBatch = false;
  }
  return s;
}

std::optional<SassStats> sassStats(const std::vector<char>& cubin, ir::DiagnosticEngine& diag) {
  auto tool = findDisassembler(diag);
  if (!tool) return std::nullopt;
  auto text = disassemble(*tool, cubin, diag);
  if (!text) return std::nullopt;
  return parseSass(*text);
}

}  // namespace kiln::backend
