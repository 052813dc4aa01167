// The grouped GEMM tests' simulator harness (see grouped_sim.h).
#include "tests/unit/testing/grouped_sim.h"

#include <cstring>
#include <vector>

#include "kiln/compile.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/parser.h"
#include "kiln/kernel.h"
#include "kiln/target.h"
#include "schedule/config.h"
#include "tests/unit/testing/ws_sim.h"

namespace kiln::testing {

GroupedSimRun runGroupedSim(const ir::Module& module, const std::string& configText,
                            const std::map<std::string, int64_t>& dims, uint64_t seed, const GroupedSimOptions& o) {
  GroupedSimRun out;
  const ir::Operation& program = *module.body().front();
  ir::DiagnosticEngine diag;
  auto compiled = compile(module, Target::sm90a(), Config::parse(configText), diag);
  if (!compiled) return out.error = diag.str(), out;
  auto kern = ir::parseModule(compiled->kernIr, diag);
  if (!kern) return out.error = diag.str(), out;
  if (o.mutate) o.mutate(*kern->body().front());
  if (!compiled->launch.validate(dims, diag)) return out.error = diag.str(), out;

  auto args = interp::generateArguments(program, dims, seed);
  if (o.prepare) o.prepare(args.tensors);
  interp::HostTensor& want = args.tensors.at("C");
  std::memset(want.bytes.data(), 0xFF, want.bytes.size());  // poison: NaN in bf16 and f32

  GlobalMemory mem;
  std::map<std::string, uint64_t> addr;
  std::vector<uint64_t> tensors;  // the tensor arguments in the program's order (for the maps)
  uint64_t flags = 0;             // stream_k's flags: every launch must leave them zero
  for (const auto& op : program.body().operations())
    if (op->is("tile.input") || op->is("tile.output")) {
      const std::string name = op->stringAttr("name");
      addr[name] = mem.add(args.tensors.at(name).bytes);
      tensors.push_back(addr[name]);
    }
  WsLaunch launch;
  launch.kernel = kern->body().front();
  launch.blocks = o.blocks;
  auto sig = signatureOf(program, compiled->launch);
  for (const auto& prm : compiled->launch.params) {
    if (prm.kind == KernelParam::Kind::Pointer) {
      launch.args.push_back(addr.at(prm.name));
    } else if (prm.kind == KernelParam::Kind::TensorMap) {
      launch.args.push_back(launch.maps.size());
      launch.maps.push_back(tensorMapDescFor(prm, sig, tensors, dims));
    } else if (prm.kind == KernelParam::Kind::Workspace) {  // stream_k: flags zero, partials poisoned
      auto [flagBytes, partialBytes] = compiled->launch.workspaceBytes(dims, int(launch.blocks));
      const bool flagBuf = prm.name == "ws_flags";
      launch.args.push_back(mem.add(std::vector<uint8_t>(size_t(flagBuf ? flagBytes : partialBytes), flagBuf ? 0 : 0xFF)));
      if (flagBuf) flags = launch.args.back();
    } else {
      if (prm.kind != KernelParam::Kind::Dim) return out.error = "unexpected kernel parameter " + prm.name, out;
      launch.args.push_back(uint32_t(int32_t(dims.at(prm.name))));
    }
  }
  out.got = want;
  if (std::string e = simulateWarpSpecialized(launch, mem); !e.empty()) return out.error = e, out;
  if (flags)
    for (uint8_t byte : mem.at(flags))
      if (byte != 0) return out.error = "the launch left a stream-K flag set (the next launch would not wait)", out;
  std::memcpy(out.got.bytes.data(), mem.at(addr.at("C")).data(), out.got.bytes.size());
  if (o.runInterpreter && !interp::run(program, args.request, diag)) return out.error = diag.str(), out;
  out.want = want;
  return out;
}

AssembledPick assembleFamilyPick(const ir::Module& module, const std::map<std::string, int64_t>& dims,
                                 const std::string& family) {
  AssembledPick out;
  out.pick = ops::defaultSchedule(*module.body().front(), Target::sm90a(), dims);
  if (!out.pick.fromFamily || out.pick.family != family)
    return out.error = "not a " + family + " pick: " + out.pick.why, out;
  ir::DiagnosticEngine diag;
  auto compiled = compile(module, Target::sm90a(), out.pick.config, diag);
  if (!compiled) return out.error = diag.str(), out;
  auto cubin = backend::assemble(compiled->ptx, Target::sm90a().ptxTarget, diag);
  if (!cubin || cubin->resources.empty()) return out.error = "assembly: " + diag.str(), out;
  out.report = cubin->resources.begin()->second;
  return out;
}

}  // namespace kiln::testing
