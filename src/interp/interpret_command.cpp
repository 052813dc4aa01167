// `kiln interpret` (see interpret_command.h).
#include "interp/interpret_command.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "interp/random_inputs.h"
#include "interp/size_limits.h"
#include "kiln/dialects.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/verifier.h"

namespace kiln::interp {

namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}


const ir::Operation* findProgram(const ir::Module& m, ir::DiagnosticEngine& diag) {
  const ir::Operation* program = nullptr;
  for (const auto& op : m.body().operations()) {
    if (!op->is("tile.program")) continue;
    if (program) {
      diag.error(op->loc()) << "the input holds more than one tile.program; interpret runs one";
      return nullptr;
    }
    program = op.get();
  }
  if (!program) diag.error({}) << "the input holds no tile.program";
  return program;
}

// Elements that agree: equal (infinities of one sign included), or NaN in both.
bool agree(double got, double ref) { return got == ref || (std::isnan(got) && std::isnan(ref)); }

// The output's line of the report; reports to `diag` when some element is NaN (or infinite)
// where the reference is finite, which no error figure can express.
std::string outputLine(const std::string& name, const HostTensor& out, const std::vector<double>& ref,
                       ir::DiagnosticEngine& diag) {
  std::vector<double> got = toDoubles(out);
  double sum = 0, sumsq = 0, maxErr = 0, errSq = 0, refSq = 0;
  size_t nonFinite = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(got[i]) && std::isnan(ref[i])) continue;  // a strided output's gap, poisoned in both
    double d = agree(got[i], ref[i]) ? 0.0 : std::fabs(got[i] - ref[i]);
    if (!std::isfinite(d) && nonFinite++ == 0) first = i;
    sum += got[i];
    sumsq += got[i] * got[i];
    maxErr = std::isnan(d) || std::isnan(maxErr) ? NAN : std::max(maxErr, d);
    errSq += d * d;
    refSq += std::isfinite(ref[i]) ? ref[i] * ref[i] : 0.0;
  }
  if (nonFinite)
    diag.error({}) << "output '" << name << "' has " << nonFinite << " element" << (nonFinite == 1 ? "" : "s")
                   << " that differ from the fp64 reference by NaN or infinity (the first at flat index " << first
                   << ": " << got[first] << " where the reference is " << ref[first] << ")";
  std::string shape;
  for (size_t a = 0; a < out.shape.size(); ++a) shape += (a ? ", " : "") + std::to_string(out.shape[a]);
  // An exact match has error 0 even when the reference is all zeros.
  double rel = errSq == 0 ? 0.0 : std::sqrt(errSq) / std::sqrt(refSq);
  return fmt::format("output {} {} [{}]: sum {:.6e} sumsq {:.6e} max_abs_err {:.6e} rel_fro_err {:.6e}\n", name,
                     ir::scalarName(out.dtype), shape, sum, sumsq, maxErr, rel);
}

}  // namespace

// "M=64, N=32" -> {M: 64, N: 32}; nullopt after reporting a malformed entry.
std::optional<std::map<std::string, int64_t>> parseDims(const std::string& spec, ir::DiagnosticEngine& diag) {
  std::map<std::string, int64_t> dims;
  if (trim(spec).empty()) return dims;
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t comma = spec.find(',', pos);
    std::string item = trim(spec.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
    pos = comma == std::string::npos ? spec.size() + 1 : comma + 1;
    size_t eq = item.find('=');
    std::string name = eq == std::string::npos ? "" : trim(item.substr(0, eq));
    std::string value = eq == std::string::npos ? "" : trim(item.substr(eq + 1));
    size_t used = 0;
    int64_t v = 0;
    try {
      v = value.empty() ? 0 : std::stoll(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (name.empty() || value.empty() || used != value.size()) {
      diag.error({}) << "bad dims entry '" << item << "': expected NAME=INTEGER, as in \"M=64,N=32,K=16\"";
      return std::nullopt;
    }
    if (!dims.emplace(name, v).second) {
      diag.error({}) << "dim '" << name << "' is given twice";
      return std::nullopt;
    }
  }
  return dims;
}

std::string runInterpretCommand(const std::string& kilnText, const std::string& dimsSpec, uint64_t seed,
                                ir::DiagnosticEngine& diag, int64_t maxMemoryBytes, const std::string& sourceName) {
  registerAllDialects();
  auto module = ir::parseModule(kilnText, diag, {sourceName, false});
  if (!module || !ir::verify(*module, diag)) return "";
  const ir::Operation* program = findProgram(*module, diag);
  if (!program) return "";
  auto dims = parseDims(dimsSpec, diag);
  if (!dims) return "";
  // Inputs are generated only for sizes that fit: a huge dim is a sentence, not a bad_alloc.
  if (!checkArgumentSizes(*program, *dims, maxMemoryBytes, diag)) return "";

  GeneratedArguments args = generateArguments(*program, *dims, seed);
  RunOptions opts;
  opts.maxMemoryBytes = maxMemoryBytes;
  if (!run(*program, args.request, diag, opts)) return "";
  // The reference runs on the same inputs; it writes its outputs to `ref`, not to the tensors.
  std::map<std::string, std::vector<double>> ref;
  if (!runReference(*program, args.request, ref, diag, opts)) return "";

  std::string report = fmt::format("program {}\ndims", program->stringAttr("sym_name"));
  for (const auto& d : program->stringsAttr("dims")) report += fmt::format(" {}={}", d, dims->at(d));
  report += fmt::format("\nseed {}\n", seed);
  for (const auto& op : program->body().operations())
    if (op->is("tile.output")) {
      std::string name = op->stringAttr("name");
      report += outputLine(name, args.tensors.at(name), ref.at(name), diag);
    }
  return report;
}

}  // namespace kiln::interp
