// Fuzz target: a mutated program runs through the tile-IR interpreter -- run() and the fp64
// reference runReference() -- on seeded inputs (random_inputs.h). Any program that verifies must
// run or be refused with diagnostics: never a crash, a hang or a sanitizer report.
//
// Input: the first line gives dims as `kiln run --dims` does ("M=5,N=3,K=7"); the rest of the
// input is the program's text IR. The harness keeps each run small, so the fuzzer explores
// programs rather than memory: each dim is clamped to [1, kMaxDim] (generateArguments() needs
// positive dims), a dim the line does not give is kDefaultDim, and a program is skipped when
// a value of it would hold more than kMaxElements elements or its scf.for loops more than
// kMaxTrips iterations in all. Those caps are the harness's, not the interpreter's: large sizes are
// the interpreter's own unit tests' subject.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "interp/interpret_command.h"
#include "interp/random_inputs.h"
#include "kiln/dialects.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/verifier.h"

namespace {

constexpr int64_t kMaxDim = 64, kDefaultDim = 16, kMaxElements = int64_t(1) << 16, kMaxTrips = 4096;
using Dims = std::map<std::string, int64_t>;

Dims boundedDims(std::string_view line, const kiln::ir::Operation& program) {
  kiln::ir::DiagnosticEngine ignored;  // a malformed line means the defaults
  Dims given = kiln::interp::parseDims(std::string(line), ignored).value_or(Dims{});
  Dims dims;
  for (const auto& name : program.stringsAttr("dims")) {
    auto it = given.find(name);
    dims[name] = it == given.end() ? kDefaultDim : std::clamp<int64_t>(it->second, 1, kMaxDim);
  }
  return dims;
}

// The elements a value of type `t` holds at `dims` (constants as written, unknown dims as the
// largest), saturating at the cap.
int64_t elementsOf(const kiln::ir::Type& t, const Dims& dims) {
  int64_t n = 1;
  for (const auto& e : t.shape()) {
    auto it = e.isSymbolic() ? dims.find(e.sym) : dims.end();
    int64_t x = e.isSymbolic() ? (it == dims.end() ? kMaxDim : it->second) : e.value;
    if (x > kMaxElements || n * std::max<int64_t>(x, 1) > kMaxElements) return kMaxElements + 1;
    n *= std::max<int64_t>(x, 1);
  }
  return n;
}

std::optional<int64_t> constantOf(const kiln::ir::Value* v) {
  const kiln::ir::Operation* d = v->definingOp();
  if (!d || !d->is("arith.constant") || !d->attr("value") || !d->attr("value")->isInt()) return std::nullopt;
  return d->attr("value")->asInt();
}

// Whether the program stays within the harness's caps at these dims.
bool small(const kiln::ir::Operation& program, const Dims& dims) {
  bool ok = true;
  int64_t trips = 1;
  program.walk([&](const kiln::ir::Operation& op) {
    for (const auto& r : op.results()) ok = ok && elementsOf(r->type(), dims) <= kMaxElements;
    for (unsigned i = 0; i < op.numRegions(); ++i)
      for (const auto& b : op.region(i).blocks())
        for (unsigned a = 0; a < b->numArguments(); ++a)
          ok = ok && elementsOf(b->argument(a)->type(), dims) <= kMaxElements;
    if (!op.is("scf.for") || op.numOperands() < 3) return;
    auto lb = constantOf(op.operand(0)), ub = constantOf(op.operand(1)), step = constantOf(op.operand(2));
    // A loop whose bounds are not constants, or whose trip count is large, could run for ever.
    if (!lb || !ub || !step || *step <= 0 || *ub - *lb > kMaxTrips * *step) return void(ok = false);
    trips *= std::max<int64_t>(1, (*ub - *lb + *step - 1) / *step);
    ok = ok && trips <= kMaxTrips;
  });
  return ok;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kiln::registerAllDialects();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  size_t eol = text.find('\n');
  if (eol == std::string_view::npos) return 0;
  kiln::ir::DiagnosticEngine diag;
  auto module = kiln::ir::parseModule(text.substr(eol + 1), diag, {"fuzz", /*allowUnregistered=*/false});
  if (!module || !kiln::ir::verify(*module, diag)) return 0;
  for (const auto& op : module->body().operations()) {
    if (!op->is("tile.program")) continue;
    Dims dims = boundedDims(text.substr(0, eol), *op);
    if (!small(*op, dims)) continue;
    auto args = kiln::interp::generateArguments(*op, dims, /*seed=*/1);
    std::map<std::string, std::vector<double>> reference;
    kiln::interp::run(*op, args.request, diag);
    kiln::interp::runReference(*op, args.request, reference, diag);
  }
  return 0;
}
