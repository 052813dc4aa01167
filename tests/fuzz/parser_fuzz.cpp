// Fuzz target: any byte string given to the parser, then the verifier, then the printer and the
// parser again, must give diagnostics or IR — never a crash, a hang, or a sanitizer report.
// A module that parses must also print and re-parse to the same text.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "kiln/dialects.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kiln::registerAllDialects();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  kiln::ir::DiagnosticEngine diag;
  auto module = kiln::ir::parseModule(text, diag, {"fuzz", /*allowUnregistered=*/false});
  if (!module) return 0;
  kiln::ir::verify(*module, diag);
  std::string printed = kiln::ir::toString(*module);
  kiln::ir::DiagnosticEngine diag2;
  auto again = kiln::ir::parseModule(printed, diag2);
  if (!again || kiln::ir::toString(*again) != printed) std::abort();  // the round trip must hold
  return 0;
}
