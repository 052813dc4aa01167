// Fuzz target: a target, a schedule and a program, all mutated, go through kiln::compile -- the
// tile verifier, the config's parse and validation, every step of the strategy's pipeline (the IR
// verified between steps) and the PTX emitter, to PTX text. Any input must end in PTX or in
// diagnostics: never a crash, a hang, a sanitizer report, or a diagnostic that says Kiln has a bug;
// and PTX, when it comes, must be the program's kernel and come out the same when compiled again.
// The assembler is left out (it is NVIDIA's code, slow, and not built with the sanitizers).
//
// Input: the first line is `TARGET CONFIG...` (e.g. `sm_90a strategy=sm90_ws_persistent bm=128`);
// when its first word names no target, sm_80 is used and the whole line is the config. The rest of
// the input is the program's text IR.
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string_view>

#include "kiln/compile.h"
#include "kiln/dialects.h"
#include "kiln/ir/parser.h"
#include "kiln/target.h"

namespace {

struct Input {
  kiln::Target target = kiln::Target::sm80();
  std::string_view config, program;
};

Input split(std::string_view text) {
  Input in;
  size_t eol = text.find('\n');
  std::string_view header = text.substr(0, eol);
  in.program = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
  size_t space = header.find(' ');
  if (auto t = kiln::Target::byName(header.substr(0, space))) {
    in.target = *t;
    header = space == std::string_view::npos ? std::string_view() : header.substr(space + 1);
  }
  in.config = header;
  return in;
}

// A diagnostic that blames Kiln itself (e.g. a pass whose output does not verify) is a bug, just
// like a crash: report it as one so the fuzzer keeps the input.
void abortOnInternalError(const kiln::ir::DiagnosticEngine& diag) {
  for (const auto& d : diag.diagnostics())
    if (d.message.find("bug in Kiln") != std::string::npos) {
      std::fprintf(stderr, "%s\n", diag.str().c_str());
      std::abort();
    }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kiln::registerAllDialects();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in = split(std::string_view(reinterpret_cast<const char*>(data), size));
  kiln::ir::DiagnosticEngine diag;
  auto module = kiln::ir::parseModule(in.program, diag, {"fuzz", /*allowUnregistered=*/false});
  if (!module) return 0;
  auto result = kiln::compile(*module, in.target, in.config, diag);
  abortOnInternalError(diag);
  if (!result) return 0;
  if (result->ptx.empty()) std::abort();  // success means PTX
  // The launch contract is the program's kernel's, not another kernel's the input carried.
  const auto& program = *module->body().front();
  if (!program.is("tile.program") || result->launch.kernelName != program.stringAttr("sym_name")) std::abort();
  // Output is deterministic (DESIGN.md): the same input compiles to the same PTX again.
  kiln::ir::DiagnosticEngine again;
  auto second = kiln::compile(*module, in.target, in.config, again);
  if (!second || second->ptx != result->ptx) std::abort();
  return 0;
}
