// One program in the kern simulator against the interpreter (contract in sim_run.h).
#include "tests/unit/testing/sim_run.h"

#include <cstring>

#include "interp/random_inputs.h"
#include "kiln/compile.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/parser.h"
#include "tests/unit/testing/example_runs.h"
#include "tests/unit/testing/kern_sim.h"
#include "tests/unit/testing/sim_values.h"

namespace kiln::testing {

SimRun simulateAgainstInterpreter(const ir::Module& module, const Config& config, const Target& target,
                                  const std::map<std::string, int64_t>& dims, uint64_t seed, CopyTiming timing) {
  SimRun run{{}, config.str()};
  const ir::Operation* program = module.body().front();
  ir::DiagnosticEngine diag;
  auto compiled = compile(module, target, config, diag);
  if (!compiled) return {"does not compile: " + diag.str(), run.config};
  auto kern = ir::parseModule(compiled->kernIr, diag);
  if (!kern) return {"its kern IR does not parse back: " + diag.str(), run.config};
  if (!compiled->launch.validate(dims, diag)) return {"the launch is refused: " + diag.str(), run.config};
  auto args = interp::generateArguments(*program, dims, seed);
  GlobalMemory mem;
  std::map<std::string, uint64_t> addr;
  for (const auto& [name, t] : args.tensors) {
    std::vector<uint8_t> bytes = t.bytes;
    for (const auto& op : program->body().operations())
      if (op->is("tile.output") && op->stringAttr("name") == name) std::memset(bytes.data(), 0xFF, bytes.size());
    addr[name] = mem.add(std::move(bytes));
  }
  SimLaunch launch;
  launch.kernel = kern->body().front();
  launch.timing = timing;
  for (const auto& p : compiled->launch.params) {
    if (p.kind == KernelParam::Kind::Pointer) launch.args.push_back(addr.at(p.name));
    else if (p.kind == KernelParam::Kind::Dim) launch.args.push_back(uint32_t(int32_t(dims.at(p.name))));
    else if (p.kind == KernelParam::Kind::Scalar && p.elem == ir::ScalarType::F32)
      launch.args.push_back(simvalues::fromF(float(args.request.scalars.at(p.name))));
    else if (p.kind == KernelParam::Kind::Scalar)
      launch.args.push_back(uint32_t(int32_t(args.request.scalars.at(p.name))));
    else return {"a parameter the simulator harness does not fill: " + p.name, run.config};
  }
  auto grid = compiled->launch.gridFor(dims, /*sms=*/4);
  for (int i = 0; i < 3; ++i) launch.grid[i] = uint32_t(grid[size_t(i)]);
  if (std::string e = simulate(launch, mem); !e.empty()) return {"the simulator stopped: " + e, run.config};
  if (!interp::run(*program, args.request, diag)) return {"the interpreter failed: " + diag.str(), run.config};
  for (const auto& op : program->body().operations()) {
    if (!op->is("tile.output")) continue;
    std::string name = op->stringAttr("name");
    const interp::HostTensor& want = args.tensors.at(name);
    interp::HostTensor got = want;
    std::memcpy(got.bytes.data(), mem.at(addr.at(name)).data(), got.bytes.size());
    run.error += compareToInterpreter(name, want, got);
  }
  return run;
}

}  // namespace kiln::testing
