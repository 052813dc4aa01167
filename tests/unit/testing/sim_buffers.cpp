// One program in the kern simulator on given tensors (contract in sim_buffers.h).
#include "tests/unit/testing/sim_buffers.h"

#include "kiln/compile.h"
#include "kiln/ir/parser.h"
#include "tests/unit/testing/kern_sim.h"

namespace kiln::testing {

BufferRun simulateOnBuffers(const ir::Module& program, const Config& config, const Target& target,
                            const std::map<std::string, int64_t>& dims,
                            std::map<std::string, std::vector<uint8_t>> tensors,
                            const std::map<std::string, uint32_t>& scalars) {
  BufferRun run;
  ir::DiagnosticEngine diag;
  auto compiled = compile(program, target, config, diag);
  if (!compiled) return {"does not compile: " + diag.str(), {}, {}};
  run.kernIr = compiled->kernIr;
  auto kern = ir::parseModule(compiled->kernIr, diag);
  if (!kern) return {"its kern IR does not parse back: " + diag.str(), run.kernIr, {}};
  if (!compiled->launch.validate(dims, diag)) return {"the launch is refused: " + diag.str(), run.kernIr, {}};
  GlobalMemory mem;
  std::map<std::string, uint64_t> addr;
  for (auto& [name, bytes] : tensors) addr[name] = mem.add(bytes);
  SimLaunch launch;
  launch.kernel = kern->body().front();
  for (const auto& p : compiled->launch.params) {
    auto a = addr.find(p.name);
    auto s = scalars.find(p.name);
    if (p.kind == KernelParam::Kind::Pointer && a != addr.end()) launch.args.push_back(a->second);
    else if (p.kind == KernelParam::Kind::Dim) launch.args.push_back(uint32_t(int32_t(dims.at(p.name))));
    else if (p.kind == KernelParam::Kind::Scalar && s != scalars.end()) launch.args.push_back(s->second);
    else return {"no value for the kernel's parameter '" + p.name + "'", run.kernIr, {}};
  }
  auto grid = compiled->launch.gridFor(dims, /*sms=*/4);
  for (int i = 0; i < 3; ++i) launch.grid[i] = uint32_t(grid[size_t(i)]);
  if (std::string e = simulate(launch, mem); !e.empty()) return {"the simulator stopped: " + e, run.kernIr, {}};
  for (const auto& [name, base] : addr) run.tensors[name] = mem.at(base);
  return run;
}

}  // namespace kiln::testing
