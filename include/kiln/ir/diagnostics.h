#pragma once
// Kiln's two error channels (DESIGN.md, house style 6).
//
//  * User errors — a malformed program, an invalid config, a bad launch — are Diagnostics: they carry
//    a location and a sentence a user can act on, are collected by a DiagnosticEngine, and the caller
//    decides what to do. Nothing user-provided may crash the compiler.
//  * Internal errors — broken invariants, i.e. compiler bugs — go through KILN_ICE, which prints and
//    aborts. They are never used for user input.
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/ir/location.h"

namespace kiln::ir {

enum class Severity { Error, Warning, Note, Remark };

struct Diagnostic {
  Severity severity = Severity::Error;
  Location loc;
  std::string message;
  std::string str() const;  // "file:line:col: error: message"
};

class DiagnosticEngine;

// Streams a message into a diagnostic that is reported when the builder goes out of scope.
class InFlightDiagnostic {
 public:
  InFlightDiagnostic(DiagnosticEngine* engine, Severity sev, Location loc)
      : engine_(engine), sev_(sev), loc_(std::move(loc)) {}
  InFlightDiagnostic(InFlightDiagnostic&& other) noexcept;
  InFlightDiagnostic(const InFlightDiagnostic&) = delete;
  ~InFlightDiagnostic();
  template <typename T>
  InFlightDiagnostic& operator<<(const T& v) {
    os_ << v;
    return *this;
  }
  // Lets `return emitError(loc) << "...";` be used in functions returning bool (false).
  operator bool() const { return false; }

 private:
  DiagnosticEngine* engine_;
  Severity sev_;
  Location loc_;
  std::ostringstream os_;
};

class DiagnosticEngine {
 public:
  using Handler = std::function<void(const Diagnostic&)>;
  InFlightDiagnostic error(Location loc) { return {this, Severity::Error, std::move(loc)}; }
  InFlightDiagnostic warning(Location loc) { return {this, Severity::Warning, std::move(loc)}; }
  InFlightDiagnostic note(Location loc) { return {this, Severity::Note, std::move(loc)}; }
  InFlightDiagnostic remark(Location loc) { return {this, Severity::Remark, std::move(loc)}; }

  void report(Diagnostic d);
  // When a handler is set, diagnostics go to it instead of being stored.
  void setHandler(Handler h) { handler_ = std::move(h); }
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }
  bool hadError() const { return errors_ > 0; }
  size_t errorCount() const { return errors_; }
  void clear() { diags_.clear(); errors_ = 0; }
  // All stored diagnostics, one per line.
  std::string str() const;

 private:
  std::vector<Diagnostic> diags_;
  Handler handler_;
  size_t errors_ = 0;
};

// A user-facing failure that crosses an API boundary that cannot return diagnostics directly
// (the C++ DSL, Kernel::launch). what() is the full diagnostic text.
class Error : public std::exception {
 public:
  explicit Error(std::vector<Diagnostic> diags);
  explicit Error(Diagnostic d) : Error(std::vector<Diagnostic>{std::move(d)}) {}
  Error(Location loc, std::string message) : Error(Diagnostic{Severity::Error, std::move(loc), std::move(message)}) {}
  const char* what() const noexcept override { return text_.c_str(); }
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }

 private:
  std::vector<Diagnostic> diags_;
  std::string text_;
};

[[noreturn]] void internalError(const char* file, int line, const std::string& message);

}  // namespace kiln::ir

// A compiler bug: print where and why, then abort. Never for user input.
#define KILN_ICE(msg) ::kiln::ir::internalError(__FILE__, __LINE__, (msg))
#define KILN_ASSERT(cond, msg)                                                  \
  do {                                                                          \
    if (!(cond)) ::kiln::ir::internalError(__FILE__, __LINE__,                  \
                                           std::string("assertion `" #cond "` failed: ") + (msg)); \
  } while (0)
