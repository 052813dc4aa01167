#include "interp/verify_outputs.h"

#include <cmath>
#include <cstdio>

#include "interp/tile_sampler.h"
#include "kiln/interp/interpreter.h"

namespace kiln::interp {
namespace {
// Per element: a few bf16 ulps of the larger of |ref| and the output's rms (accumulation order
// differs between the kernel and the reference).
constexpr double kElementTol = 3e-2;
constexpr double kFrobeniusTol = 1e-2;
}  // namespace

std::optional<ExpectedOutputs> expectedOutputs(const ir::Operation& program, const GeneratedArguments& args,
                                               const std::map<std::string, int64_t>& dims, const std::string& mode,
                                               uint64_t seed, ir::DiagnosticEngine& diag, int64_t maxMemoryBytes,
                                               size_t sampledTiles) {
  double work = 1;
  for (const auto& [d, v] : dims) work *= double(v);
  auto sample = mode == "full" ? std::nullopt : sampleTiles(program, dims, sampledTiles, seed);
  if (sample) sample->options.maxMemoryBytes = maxMemoryBytes;
  bool sampled = sample && (mode == "sample" || work > kFullVerifyWork) && !sample->options.instances.empty();
  ExpectedOutputs out;
  // The reference writes only the outputs, which must not touch what the GPU got: they are
  // copied; the inputs, which can be gigabytes, are read where they are.
  GeneratedArguments copy;
  copy.request = args.request;
  for (const auto& op : program.body().operations())
    if (op->is("tile.output") && args.tensors.count(op->stringAttr("name"))) {
      const std::string name = op->stringAttr("name");
      copy.request.tensors[name] = &(copy.tensors[name] = args.tensors.at(name));
    }
  if (!sampled) {
    if (work > kFullVerifyWork)
      std::fprintf(stderr, "kiln run: interpreting the whole problem (%.3g multiply-adds); this can take minutes\n",
                   work);
    RunOptions whole;
    whole.maxMemoryBytes = maxMemoryBytes;
    if (!run(program, copy.request, diag, whole)) return std::nullopt;
    for (const auto& op : program.body().operations())
      if (op->is("tile.output"))
        out.values[op->stringAttr("name")] = toDoubles(copy.tensors.at(op->stringAttr("name")));
    out.how = "checked: every element against the interpreter";
    return out;
  }
  std::fprintf(stderr,
               "kiln run: checking %zu of %lld output tiles against an fp64 reference (--verify full checks every "
               "element)\n",
               sample->options.instances.size(), static_cast<long long>(sample->instances));
  for (const auto& op : program.body().operations())
    if (op->is("tile.output")) {
      auto& t = copy.tensors.at(op->stringAttr("name"));
      std::fill(t.bytes.begin(), t.bytes.end(), 0xff);  // NaN in every float format: "not sampled"
    }
  if (!runReference(program, copy.request, out.values, diag, sample->options)) return std::nullopt;
  out.how = "checked: " + std::to_string(sample->options.instances.size()) + " of " +
            std::to_string(sample->instances) + " output tiles against an fp64 reference";
  return out;
}

bool outputMatches(const std::string& name, const std::vector<double>& got, const std::vector<double>& expected,
                   std::string& line) {
  SampledErrors e = compareSampled(got, expected, kElementTol);
  char buf[512];
  std::snprintf(buf, sizeof buf, "output %s: rel_fro_err %.3e over %zu elements, %zu beyond the per-element bound",
                name.c_str(), e.relFro, e.checked, e.bad);
  line = buf;
  if (e.bad) {
    std::snprintf(buf, sizeof buf, "\n  first at flat index %zu: %g where %g was expected", e.firstBad,
                  got[e.firstBad], expected[e.firstBad]);
    line += buf;
  }
  return e.bad == 0 && e.relFro < kFrobeniusTol;
}

bool checkOutput(const std::string& name, const std::vector<double>& got, const std::vector<double>& expected) {
  std::string line;
  bool ok = outputMatches(name, got, expected, line);
  std::printf("%s\n", line.c_str());
  return ok;
}

}  // namespace kiln::interp
