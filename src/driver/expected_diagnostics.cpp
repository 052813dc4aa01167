#include "driver/expected_diagnostics.h"

#include <regex>

namespace kiln::driver {

std::vector<ExpectedDiagnostic> parseExpectations(std::string_view source, ir::DiagnosticEngine& diag) {
  static const std::regex re(R"(expected-(error|warning|note|remark)(@([+-]?)(\d+))?\s*\{\{(.*?)\}\})");
  std::vector<ExpectedDiagnostic> out;
  uint32_t lineNo = 0;
  size_t pos = 0;
  while (pos <= source.size()) {
    size_t end = source.find('\n', pos);
    if (end == std::string_view::npos) end = source.size();
    ++lineNo;
    std::string line(source.substr(pos, end - pos));
    size_t comment = line.find("//");
    if (comment != std::string::npos && line.find("expected-", comment) != std::string::npos) {
      std::string rest = line.substr(comment);
      auto begin = std::sregex_iterator(rest.begin(), rest.end(), re);
      if (begin == std::sregex_iterator()) {
        diag.error(ir::Location{"", lineNo, static_cast<uint32_t>(comment + 1)})
            << "malformed expectation: write expected-error {{text}} or expected-error@+1 {{text}}";
      }
      for (auto it = begin; it != std::sregex_iterator(); ++it) {
        const auto& m = *it;
        ir::Severity sev = m[1] == "error" ? ir::Severity::Error
                           : m[1] == "warning" ? ir::Severity::Warning
                           : m[1] == "note" ? ir::Severity::Note : ir::Severity::Remark;
        int64_t target = lineNo;
        if (m[2].matched) {
          int64_t off = std::stoll(m[4].str());
          if (m[3] == "-") target -= off;
          else if (m[3] == "+") target += off;
          else target = off;  // @N: an absolute line
        }
        out.push_back({sev, static_cast<uint32_t>(target), m[5].str(), lineNo});
      }
    }
    if (end == source.size()) break;
    pos = end + 1;
  }
  return out;
}

static const char* sevName(ir::Severity s) {
  switch (s) {
    case ir::Severity::Error: return "error";
    case ir::Severity::Warning: return "warning";
    case ir::Severity::Note: return "note";
    case ir::Severity::Remark: return "remark";
  }
  return "error";
}

std::vector<std::string> matchExpectations(const std::vector<ExpectedDiagnostic>& expected,
                                           const std::vector<ir::Diagnostic>& produced) {
  std::vector<std::string> problems;
  std::vector<bool> used(produced.size(), false);
  for (const auto& e : expected) {
    bool found = false;
    for (size_t i = 0; i < produced.size() && !found; ++i) {
      const auto& d = produced[i];
      if (!used[i] && d.severity == e.severity && d.loc.line == e.line &&
          d.message.find(e.text) != std::string::npos) {
        used[i] = found = true;
      }
    }
    if (!found)
      problems.push_back("line " + std::to_string(e.writtenAt) + ": expected " + sevName(e.severity) + " on line " +
                         std::to_string(e.line) + " was not produced: " + e.text);
  }
  for (size_t i = 0; i < produced.size(); ++i)
    if (!used[i] && (produced[i].severity == ir::Severity::Error || produced[i].severity == ir::Severity::Warning))
      problems.push_back("unexpected " + std::string(sevName(produced[i].severity)) + ": " + produced[i].str());
  return problems;
}

}  // namespace kiln::driver
