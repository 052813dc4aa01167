#include "backend/ptxas_log.h"

#include <charconv>

#include <fmt/format.h>

namespace kiln::backend {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool consume(std::string_view& s, std::string_view prefix) {
  if (!s.starts_with(prefix)) return false;
  s.remove_prefix(prefix.size());
  return true;
}

std::optional<int> parseInt(std::string_view s) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::vector<std::string_view> splitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    lines.push_back(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return lines;
}

// "error   : text" -> kind and text; nullopt for anything that is not a message.
std::optional<PtxasMessage> severityAndText(std::string_view rest, bool fromPtxas) {
  PtxasMessage m;
  if (consume(rest, "error")) m.kind = PtxasMessage::Kind::Error;
  else if (consume(rest, "fatal")) m.kind = PtxasMessage::Kind::Fatal;
  else if (consume(rest, "warning")) m.kind = PtxasMessage::Kind::Warning;
  else if (consume(rest, "info")) m.kind = PtxasMessage::Kind::Advisory;
  else return std::nullopt;
  rest = trim(rest);
  if (!consume(rest, ":")) return std::nullopt;
  m.text = std::string(trim(rest));
  // Plain info lines are the resource report; only ptxas's coded advisories ("(C7504) Potential
  // Performance Loss: ...") say something is wrong with the code.
  if (m.kind == PtxasMessage::Kind::Advisory && !(fromPtxas && m.text.starts_with("(C")))
    return std::nullopt;
  return m;
}

bool startsFunction(std::string_view line) {
  for (std::string_view kw : {".entry", ".func", ".visible", ".weak", ".extern"})
    if (line.starts_with(kw)) return true;
  return false;
}

}  // namespace

std::vector<PtxasMessage> parsePtxasMessages(std::string_view log) {
  std::vector<PtxasMessage> out;
  for (std::string_view line : splitLines(log)) {
    std::string_view rest = trim(line);
    bool fromPtxas = consume(rest, "ptxas");
    rest = trim(rest);
    int ptxLine = 0;
    // "application ptx input, line 15; error   : ..."
    if (fromPtxas) {
      size_t at = rest.find(", line ");
      size_t semi = rest.find(';');
      if (at != std::string_view::npos && semi != std::string_view::npos && at < semi) {
        ptxLine = parseInt(rest.substr(at + 7, semi - at - 7)).value_or(0);
        rest = trim(rest.substr(semi + 1));
      }
    }
    if (auto m = severityAndText(rest, fromPtxas)) {
      m->ptxLine = ptxLine;
      out.push_back(std::move(*m));
    }
  }
  return out;
}

ir::Location parseLocation(std::string_view s) {
  s = trim(s);
  ir::Location loc;
  if (s.empty() || s == "<unknown>") return loc;
  size_t last = s.rfind(':');
  if (last == std::string_view::npos) {
    if (auto n = parseInt(s)) loc.line = *n;
    else loc.file = std::string(s);
    return loc;
  }
  auto tail = parseInt(s.substr(last + 1));
  if (!tail) {
    loc.file = std::string(s);
    return loc;
  }
  std::string_view head = s.substr(0, last);
  size_t prev = head.rfind(':');
  auto mid = prev == std::string_view::npos ? parseInt(head) : parseInt(head.substr(prev + 1));
  if (mid) {  // "...:line:col" or "line:col"
    loc.line = *mid;
    loc.col = *tail;
    if (prev != std::string_view::npos) loc.file = std::string(head.substr(0, prev));
  } else {  // "file:line"
    loc.file = std::string(head);
    loc.line = *tail;
  }
  return loc;
}

PtxSourceMap::PtxSourceMap(std::string_view ptx) : lines_(splitLines(ptx)) {
  static constexpr std::string_view kTag = "// kiln:";
  int current = -1;
  provenanceIndex_.reserve(lines_.size());
  for (size_t i = 0; i < lines_.size(); ++i) {
    std::string_view t = trim(lines_[i]);
    if (startsFunction(t)) current = -1;  // a comment never explains code in another function
    if (consume(t, kTag)) {
      t = trim(t);
      size_t at = t.rfind(" at ");
      PtxProvenance p;
      p.opName = std::string(trim(t.substr(0, at)));
      if (at != std::string_view::npos) p.loc = parseLocation(t.substr(at + 4));
      p.commentLine = static_cast<int>(i) + 1;
      provenance_.push_back(std::move(p));
      current = static_cast<int>(provenance_.size()) - 1;
    }
    provenanceIndex_.push_back(current);
  }
}

std::optional<PtxProvenance> PtxSourceMap::provenanceOf(int line) const {
  if (line < 1 || line > static_cast<int>(lines_.size())) return std::nullopt;
  int idx = provenanceIndex_[line - 1];
  if (idx < 0) return std::nullopt;
  return provenance_[idx];
}

std::string_view PtxSourceMap::lineText(int line) const {
  if (line < 1 || line > static_cast<int>(lines_.size())) return {};
  return trim(lines_[line - 1]);
}

std::vector<ir::Diagnostic> reportPtxasMessages(const std::vector<PtxasMessage>& messages,
                                             const PtxSourceMap& source, std::string_view ptxName,
                                             std::string_view arch, ir::DiagnosticEngine& diag) {
  std::vector<ir::Diagnostic> warnings;
  bool sawError = false;
  for (const PtxasMessage& m : messages) {
    using K = PtxasMessage::Kind;
    // "Ptx assembly aborted due to errors" repeats what the errors before it said.
    if (m.kind == K::Fatal && sawError) continue;
    ir::Location loc;
    std::string text = "ptxas: " + m.text;
    if (m.ptxLine > 0) {
      loc = ir::Location{std::string(ptxName), static_cast<uint32_t>(m.ptxLine), 0};
      std::string where = fmt::format("PTX line {}: `{}`", m.ptxLine, source.lineText(m.ptxLine));
      if (auto p = source.provenanceOf(m.ptxLine)) {
        if (p->loc.known()) loc = p->loc;
        text += fmt::format(" (in the PTX emitted for {} at {}; {})", p->opName, p->loc.str(), where);
      } else {
        text += " (" + where + ")";
      }
    } else {
      text += fmt::format(" (assembling {} for {})", ptxName, arch);
    }
    if (m.kind == K::Error || m.kind == K::Fatal) {
      sawError = true;
      diag.error(loc) << text;
    } else {
      ir::Diagnostic d{ir::Severity::Warning, loc, text};
      warnings.push_back(d);
      diag.report(std::move(d));
    }
  }
  return warnings;
}

}  // namespace kiln::backend
