// The GPU half of `kiln run` (see gpu_run.h): compile the program for the GPU present (the
// default schedule of ops/default_schedule.h unless --config), fill its inputs with the same
// seeded data the interpreter would use, launch, and report each output's error against the
// interpreter's exact result, or against an fp64 reference of sampled tiles for a large problem
// (interp/verify_outputs.h).
#include "tools/gpu_run.h"

#include <cmath>
#include <cstdio>

#include "interp/interpret_command.h"
#include "interp/random_inputs.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/verifier.h"
#include "kiln/kernel.h"
#include "kiln/resource_report.h"
#include "kiln/runtime/driver.h"
#include "kiln/runtime/memory.h"
#include "kiln/target.h"
#include "ops/default_schedule.h"
#include "kiln/select.h"
#include "schedule/config.h"
#include "tools/commands.h"
#include "interp/verify_outputs.h"

namespace kiln::tools {

int runOnGpu(const std::string& text, const std::string& dimsSpec, uint64_t seed, const std::string& configText,
             const std::string& verify) {
  ir::DiagnosticEngine diag;
  auto module = ir::parseModule(text, diag);
  if (!module || !ir::verify(*module, diag)) {
    std::fprintf(stderr, "%s", diag.str().c_str());
    return kFailed;
  }
  const ir::Operation* program = module->body().front();
  runtime::Context ctx = runtime::Context::primary(*runtime::Driver::get());
  auto target = targetOf(ctx);
  if (!target) {
    std::fprintf(stderr, "kiln run: this GPU (%s) is not a Kiln target; known: %s\n", ctx.properties().name.c_str(),
                 Target::knownNames().c_str());
    return kFailed;
  }
  auto dims = interp::parseDims(dimsSpec, diag);
  if (!dims) {
    std::fprintf(stderr, "%s", diag.str().c_str());
    return kUsage;
  }
  // Without --config: the registered family's pick (a GEMM family's, or rowwise's for a program
  // without a matrix product), else that strategy's default; a pick that does not compile this
  // program (a fused or batched GEMM the family's checks do not see) falls back, saying why.
  std::optional<Config> config;
  std::string chosen;
  std::optional<Kernel> kernel;
  // Without --config, measurements come first (kiln::select on the device): `kiln tune`'s winner
  // for this program, device and shape bucket, else a pretuned entry shipped for this device.
  if (configText.empty()) {
    std::string warnings;
    const Selection measured = select(*module, ctx, *dims, "", &warnings);
    std::fprintf(stderr, "%s", warnings.c_str());
    if (!measured.tuned.empty()) {
      auto tuned = Config::parse(measured.config, diag);
      if (tuned) kernel = Kernel::build(*module, *target, *tuned, diag);
      chosen = measured.why;
      if (!kernel) {
        std::fprintf(stderr, "note: %s does not compile at these dims; using the default:\n%s", measured.why.c_str(),
                     diag.str().c_str());
        diag = ir::DiagnosticEngine();
      }
    }
  }
  if (kernel) {
    // A measured winner, built above.
  } else if (configText.empty()) {
    ops::DefaultSchedule d = ops::defaultSchedule(*program, *target, *dims);
    chosen = d.why;
    kernel = Kernel::build(*module, *target, d.config, diag);
    if (!kernel && d.fromFamily) {
      std::fprintf(stderr, "note: %s does not compile this program:\n%s", d.why.c_str(), diag.str().c_str());
      diag = ir::DiagnosticEngine();
      bool rows = d.config.strategy == "rowwise";
      config = rows ? Config::parse(ops::kRowwiseFallback, diag) : ops::fallbackSchedule(*program);
      chosen = rows ? "the rowwise default (the family's pick did not compile)"
                    : "the sm80 default (the family's pick did not compile)";
      kernel = Kernel::build(*module, *target, *config, diag);
    }
  } else {
    config = Config::parse(configText, diag, {"--config", 1, 1}, true);
    if (!config) {
      std::fprintf(stderr, "%s", diag.str().c_str());
      return kUsage;
    }
    chosen = "--config";
    kernel = Kernel::build(*module, *target, *config, diag);
  }
  if (!kernel) {
    std::fprintf(stderr, "%s", diag.str().c_str());
    return kFailed;
  }
  auto generated = interp::generateArguments(*program, *dims, seed);
  std::map<std::string, interp::HostTensor>& host = generated.tensors;
  interp::RunRequest req = generated.request;
  // What the kernel must approximate: the exact interpreter, or an fp64 reference of a sample of
  // output tiles for a problem too large to interpret whole in seconds (interp/verify_outputs.h).
  auto expected = interp::expectedOutputs(*program, generated, *dims, verify, seed, diag);
  if (!expected) {
    std::fprintf(stderr, "%s", diag.str().c_str());
    return kFailed;
  }
  std::vector<runtime::DeviceBuffer> buffers;
  std::vector<uint64_t> ptrs;
  std::vector<std::string> names;
  for (const auto& op : program->body().operations()) {
    if (!op->is("tile.input") && !op->is("tile.output")) continue;
    std::string name = op->stringAttr("name");
    const interp::HostTensor& t = host.at(name);
    buffers.push_back(runtime::DeviceBuffer::allocate(ctx, std::max<size_t>(t.bytes.size(), 1)));
    if (op->is("tile.input")) buffers.back().copyFromHost(t.bytes.data(), t.bytes.size());
    else buffers.back().fill(0x7f);  // poison: NaN in every float format Kiln writes
    ptrs.push_back(buffers.back().ptr());
    names.push_back(op->is("tile.output") ? name : "");
  }
  try {
    std::vector<double> scalars;  // in declaration order, as the kernel takes them
    for (const auto& op : program->body().operations())
      if (op->is("tile.scalar")) scalars.push_back(req.scalars.at(op->stringAttr("name")));
    kernel->launch(ctx, nullptr, ptrs, scalars, req.dims);
    ctx.synchronize();
  } catch (const ir::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kFailed;
  }
  std::printf("program %s on %s\nschedule %s\n  (%s)\n%s\n", program->stringAttr("sym_name").c_str(),
              ctx.properties().name.c_str(), kernel->config().c_str(), chosen.c_str(), kernel->resources().str().c_str());
  std::printf("%s\n", expected->how.c_str());
  bool ok = true;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) continue;
    interp::HostTensor got = host.at(names[i]);
    buffers[i].copyToHost(got.bytes.data(), got.bytes.size());
    ok = interp::checkOutput(names[i], interp::toDoubles(got), expected->values.at(names[i])) && ok;
  }
  return ok ? kOk : kFailed;
}

}  // namespace kiln::tools
