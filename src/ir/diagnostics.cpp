#include "kiln/ir/diagnostics.h"

#include <cstdio>
#include <cstdlib>

namespace kiln::ir {

std::string Location::str() const {
  std::string s;
  if (!file.empty()) s = file + ":";
  if (line == 0 && file.empty()) return "<unknown>";
  s += std::to_string(line);
  if (col != 0) s += ":" + std::to_string(col);
  return s;
}

static const char* severityName(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
    case Severity::Remark: return "remark";
  }
  return "error";
}

std::string Diagnostic::str() const {
  std::string s;
  if (loc.known()) s = loc.str() + ": ";
  return s + severityName(severity) + ": " + message;
}

InFlightDiagnostic::InFlightDiagnostic(InFlightDiagnostic&& other) noexcept
    : engine_(other.engine_), sev_(other.sev_), loc_(std::move(other.loc_)),
      os_(std::move(other.os_)) {
  other.engine_ = nullptr;
}

InFlightDiagnostic::~InFlightDiagnostic() {
  if (engine_) engine_->report(Diagnostic{sev_, std::move(loc_), os_.str()});
}

void DiagnosticEngine::report(Diagnostic d) {
  if (d.severity == Severity::Error) ++errors_;
  if (handler_) {
    handler_(d);
    return;
  }
  diags_.push_back(std::move(d));
}

std::string DiagnosticEngine::str() const {
  std::string s;
  for (const auto& d : diags_) s += d.str() + "\n";
  return s;
}

Error::Error(std::vector<Diagnostic> diags) : diags_(std::move(diags)) {
  for (size_t i = 0; i < diags_.size(); ++i) {
    if (i) text_ += "\n";
    text_ += diags_[i].str();
  }
}

void internalError(const char* file, int line, const std::string& message) {
  std::fprintf(stderr, "kiln internal error at %s:%d: %s\n"
               "This is a bug in Kiln, not in your program; please report it.\n",
               file, line, message.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace kiln::ir
