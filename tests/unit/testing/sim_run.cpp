// One program in the kern simulator (or, for sm90_ws_persistent, the warp-specialized one) against
// the interpreter (contract in sim_run.h).
#include "tests/unit/testing/sim_run.h"

#include <cstring>

#include "interp/random_inputs.h"
#include "kiln/compile.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/parser.h"
#include "kiln/kernel.h"
#include "tests/unit/testing/example_runs.h"
#include "tests/unit/testing/kern_sim.h"
#include "tests/unit/testing/sim_values.h"
#include "tests/unit/testing/ws_sim.h"

namespace kiln::testing {

SimRun simulateAgainstInterpreter(const ir::Module& module, const Config& config, const Target& target,
                                  const std::map<std::string, int64_t>& dims, uint64_t seed, CopyTiming timing,
                                  bool reverseBlocks) {
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
  // A warp-specialized kernel (sm90_ws_persistent, with tensor maps) runs in ws_sim on a few
  // persistent blocks; the others in kern_sim over their grid.
  const bool ws = config.strategy == "sm90_ws_persistent";
  std::vector<uint64_t> tensors;
  for (const auto& op : program->body().operations())
    if (op->is("tile.input") || op->is("tile.output")) tensors.push_back(addr.at(op->stringAttr("name")));
  const runtime::KernelSignature sig = signatureOf(*program, compiled->launch);
  WsLaunch wsLaunch;
  SimLaunch launch;
  launch.reverse = reverseBlocks;
  uint64_t flagBuffer = 0;
  launch.kernel = kern->body().front();
  launch.timing = timing;
  for (const auto& p : compiled->launch.params) {
    if (p.kind == KernelParam::Kind::TensorMap && ws) {
      launch.args.push_back(wsLaunch.maps.size());
      wsLaunch.maps.push_back(tensorMapDescFor(p, sig, tensors, dims));
    } else if (p.kind == KernelParam::Kind::Pointer) launch.args.push_back(addr.at(p.name));
    else if (p.kind == KernelParam::Kind::Dim) launch.args.push_back(uint32_t(int32_t(dims.at(p.name))));
    else if (p.kind == KernelParam::Kind::Scalar && p.elem == ir::ScalarType::F32)
      launch.args.push_back(simvalues::fromF(float(args.request.scalars.at(p.name))));
    else if (p.kind == KernelParam::Kind::Scalar)
      launch.args.push_back(uint32_t(int32_t(args.request.scalars.at(p.name))));
    else if (p.kind == KernelParam::Kind::Workspace && !ws) {  // gemv split_k: flags zero, partials poisoned
      auto [flagBytes, partialBytes] = compiled->launch.workspaceBytes(dims, 4);
      bool flags = p.name == "ws_flags";
      launch.args.push_back(mem.add(std::vector<uint8_t>(size_t(flags ? flagBytes : partialBytes), flags ? 0 : 0xFF)));
      if (flags) flagBuffer = launch.args.back();
    }
    else return {"a parameter the simulator harness does not fill: " + p.name, run.config};
  }
  auto grid = compiled->launch.gridFor(dims, /*sms=*/4);
  for (int i = 0; i < 3; ++i) launch.grid[i] = uint32_t(grid[size_t(i)]);
  if (ws) {
    wsLaunch.kernel = launch.kernel;
    wsLaunch.args = launch.args;
    wsLaunch.blocks = launch.grid[0];
    if (std::string e = simulateWarpSpecialized(wsLaunch, mem); !e.empty())
      return {"the simulator stopped: " + e, run.config};
  } else if (std::string e = simulate(launch, mem); !e.empty()) {
    return {"the simulator stopped: " + e, run.config};
  }
  if (flagBuffer)
    for (uint8_t byte : mem.at(flagBuffer))
      if (byte) return {"the kernel left a workspace flag nonzero (the next launch would miscount)", run.config};
  if (!interp::run(*program, args.request, diag)) return {"the interpreter failed: " + diag.str(), run.config};
  for (const auto& op : program->body().operations()) {
    if (!op->is("tile.output")) continue;
    std::string name = op->stringAttr("name");
    const interp::HostTensor& want = args.tensors.at(name);
    interp::HostTensor got = want;
    std::memcpy(got.bytes.data(), mem.at(addr.at(name)).data(), got.bytes.size());
    run.outputs[name] = got.bytes;
    run.error += compareToInterpreter(name, want, got);
  }
  return run;
}

}  // namespace kiln::testing
