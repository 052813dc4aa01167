// Benchmark rows that survive an unsupported shape (see bench_rows.h).
#include "bench/bench_rows.h"

#include <exception>

#include "kiln/ir/diagnostics.h"

namespace kiln::bench {
namespace {

std::string joinMessages(const std::vector<ir::Diagnostic>& diags) {
  std::string s;
  for (const auto& d : diags) s += (s.empty() ? "" : "; ") + d.message;
  return s;
}

}  // namespace

std::string unsupportedStatus(const std::string& reason) {
  std::string oneLine;
  for (char c : reason) oneLine += c == '\n' ? std::string("; ") : std::string(1, c);
  return "unsupported: " + oneLine;
}

std::optional<std::string> unsupportedShape(const Kernel& kernel, const std::vector<uint64_t>& tensors,
                                            const std::vector<double>& scalars,
                                            const std::map<std::string, int64_t>& dims) {
  ir::DiagnosticEngine diag;
  if (kernel.validate(tensors, scalars, dims, diag)) return std::nullopt;
  return unsupportedStatus(joinMessages(diag.diagnostics()));
}

std::optional<std::string> guardedRow(const std::function<void()>& measure) {
  try {
    measure();
    return std::nullopt;
  } catch (const ir::Error& e) {
    return unsupportedStatus(joinMessages(e.diagnostics()));
  } catch (const std::exception& e) {
    return "failed: " + unsupportedStatus(e.what()).substr(13);  // one line, like the others
  }
}

}  // namespace kiln::bench
