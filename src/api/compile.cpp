// kiln::compile (contract in include/kiln/compile.h).
#include "kiln/compile.h"

#include <algorithm>

#include "codegen/ptx/emitter.h"
#include "dialects/kern/kern_ops.h"
#include "dialects/kern/kernel_launch.h"
#include "dialects/tile/tensor_layout.h"
#include "kiln/dialects.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"
#include "kiln/target.h"
#include "schedule/config.h"
#include "schedule/pipeline.h"

namespace kiln {
using namespace ir;

int64_t GridAxis::eval(const std::map<std::string, int64_t>& dims) const {
  // Saturates instead of wrapping: validate() then reports a grid over CUDA's limit rather than a
  // wrapped (small, or negative) block count.
  int64_t v = constant;
  for (const auto& [dim, tile] : tiles) {
    auto it = dims.find(dim);
    int64_t d = it == dims.end() ? 0 : it->second;
    if (__builtin_mul_overflow(v, d / tile + (d % tile != 0 ? 1 : 0), &v)) return INT64_MAX;
  }
  return v;
}

bool KernelParam::StreamRule::holds(const std::map<std::string, int64_t>& dims) const {
  auto b = dims.find(boundDim), r = dims.find(rowDim);
  return b != dims.end() && r != dims.end() && b->second <= bound && rowMultiple > 0 && r->second % rowMultiple == 0;
}

std::array<int64_t, 3> LaunchInfo::gridFor(const std::map<std::string, int64_t>& dims, int sms) const {
  std::array<int64_t, 3> g = {1, 1, 1};
  // The grid axes count clusters; a block per SM at most, in whole clusters.
  for (size_t i = 0; i < grid.size() && i < 3; ++i)
    if (__builtin_mul_overflow(grid[i].eval(dims), int64_t(cluster[i]), &g[i])) g[i] = INT64_MAX;
  if (persistent && sms > 0)
    g[0] = std::min<int64_t>(g[0], std::max(1, sms / cluster[0]) * int64_t(cluster[0]) * persistentPerSm);
  return g;
}

std::array<int64_t, 2> LaunchInfo::workspaceBytes(const std::map<std::string, int64_t>& dims, int sms) const {
  if (grid.empty() || (workspaceUnitBytes[0] == 0 && workspaceUnitBytes[1] == 0)) return {0, 0};
  GridAxis tilesOnly = grid[0];
  tilesOnly.constant = 1;
  int64_t units = workspacePerBlock ? gridFor(dims, sms)[0] : tilesOnly.eval(dims);
  // Saturated, so that a huge grid asks for an allocation the driver refuses, never a wrapped one.
  std::array<int64_t, 2> bytes{};
  for (int i = 0; i < 2; ++i)
    if (__builtin_mul_overflow(units, workspaceUnitBytes[size_t(i)], &bytes[size_t(i)])) bytes[size_t(i)] = INT64_MAX;
  return bytes;
}

bool LaunchInfo::validate(const std::map<std::string, int64_t>& dims, DiagnosticEngine& diag) const {
  size_t before = diag.errorCount();
  for (const auto& p : params) {
    if (p.kind != KernelParam::Kind::Dim) continue;
    auto it = dims.find(p.name);
    if (it == dims.end()) diag.error({}) << "kernel " << kernelName << " needs a value for dim " << p.name;
    else if (it->second <= 0 || it->second > INT32_MAX)
      diag.error({}) << "dim " << p.name << " = " << it->second << " is out of range (1 to " << INT32_MAX << ")";
  }
  if (diag.errorCount() == before) {
    auto g = gridFor(dims);
    const int64_t limits[3] = {2147483647, 65535, 65535};  // CUDA's grid limits per axis
    for (int i = 0; i < 3; ++i)
      if (g[size_t(i)] > limits[i])
        diag.error({}) << "kernel " << kernelName << " needs " << g[size_t(i)] << " blocks along grid "
                       << "xyz"[i] << ", over the limit of " << limits[i] << "; use raster=grouped or larger tiles";
  }
  for (const auto& [dim, m] : divisibility) {
    auto it = dims.find(dim);
    if (it != dims.end() && it->second % m != 0)
      diag.error({}) << "kernel " << kernelName << " needs " << dim << " to be a multiple of " << m << " (got "
                     << it->second << "): its rows must be aligned for the kernel's vector accesses (16-byte copies, "
                        "loads and stores, paired stores)";
  }
  return diag.errorCount() == before;
}

namespace {

LaunchInfo launchInfoOf(const Operation& k, const std::vector<std::string>& dimNames) {
  kern::KernelLaunch l = kern::kernelLaunchOf(k);
  LaunchInfo info;
  info.kernelName = l.name;
  info.threads = int(l.threads);
  info.dynamicSmemBytes = l.smemBytes;
  for (unsigned i = 0; i < k.body().numArguments(); ++i) {
    const Type& t = k.body().argument(i)->type();
    KernelParam p;
    p.name = l.params[i];
    p.elem = t.elem();
    // The dims are the last parameters (kiln/compile.h); an argument may share a dim's name.
    bool isDim = i + dimNames.size() >= k.body().numArguments() && t.isScalar(ScalarType::I32);
    // A split-K kernel ({workspace}) takes its workspace as two pointers the runtime fills in.
    bool workspace = l.workspace && kern::isPtr(t) && (p.name == "ws_flags" || p.name == "ws_partials");
    p.kind = workspace                ? KernelParam::Kind::Workspace
             : kern::isPtr(t)         ? KernelParam::Kind::Pointer
             : kern::isTensorMap(t) ? KernelParam::Kind::TensorMap
             : isDim                ? KernelParam::Kind::Dim
                                    : KernelParam::Kind::Scalar;
    if (auto tm = kern::tensorMapType(t)) {
      p.tensor = tm->tensor;
      p.box = tm->box;
      p.swizzleBytes = int(tm->swizzle);
      p.flat = tm->flat;
    }
    if (p.kind == KernelParam::Kind::Pointer) {
      p.alignment = bitWidth(t.elem()) / 8;
      for (const auto& [n, a] : l.alignment)
        if (n == p.name) p.alignment = std::max(p.alignment, a);
    }
    for (const auto& s : l.streams)
      if (s.map == p.name) p.stream = KernelParam::StreamRule{s.boundDim, s.bound, s.rowDim, s.rowMultiple, int(s.fillBytes)};
    info.params.push_back(p);
  }
  for (const auto& x : l.grid) info.grid.push_back(GridAxis{x.factor, x.tiles});
  info.divisibility = l.divisibility;
  info.persistent = l.persistent;
  info.persistentPerSm = int(l.persistentPerSm);
  if (l.cluster) info.cluster = {int((*l.cluster)[0]), int((*l.cluster)[1]), int((*l.cluster)[2])};
  if (l.workspace) info.workspaceUnitBytes = *l.workspace;
  info.workspacePerBlock = l.workspacePerBlock;
  info.programmatic = l.programmatic;
  return info;
}

}  // namespace

std::optional<CompileResult> compile(const Module& program, const Target& target, const Config& config,
                                     DiagnosticEngine& diag) {
  registerAllDialects();
  std::unique_ptr<Module> m = program.clone();
  Operation* prog = nullptr;
  for (auto& op : m->body().operations()) {
    // Anything else beside the program (a hand-written kern.kernel) would be emitted with it, and
    // its launch contract could be taken for the program's.
    if (!op->is("tile.program")) {
      diag.error(op->loc()) << "kiln::compile compiles a module holding one tile.program and nothing else; this "
                            << "module also has a '" << op->name() << "'; remove it (the kernel is made from the program)";
      return std::nullopt;
    }
    if (prog) {
      diag.error(op->loc()) << "kiln::compile compiles one tile.program at a time; this module has several";
      return std::nullopt;
    }
    prog = op.get();
  }
  if (!prog) {
    diag.error({}) << "kiln::compile needs a module with a tile.program";
    return std::nullopt;
  }
  auto steps = pipeline::pipelineSteps(config.strategy);
  if (steps.empty()) {
    validate(config, target, OperandInfo{}, diag, prog->loc());  // says "unknown strategy"
    return std::nullopt;
  }
  std::vector<std::string> dims = prog->stringsAttr("dims");
  prog->setAttr("target", target.name);
  // The typed config goes to the strategy's lowering as it is (not through the program's config
  // attribute, which would print it and parse it again).
  pipeline::PipelineOptions opts;
  opts.config = &config;
  if (!pipeline::runSteps(steps, *m, diag, opts)) return std::nullopt;

  CompileResult r;
  const Operation* kernel = nullptr;
  for (const auto& op : m->body().operations())
    if (op->is("kern.kernel")) kernel = op.get();
  KILN_ASSERT(kernel != nullptr, "the pipeline produced no kern.kernel");
  r.launch = launchInfoOf(*kernel, dims);
  // The layout each pointer parameter is addressed with: its tensor argument's (in the program as
  // given: the pipeline replaced the copy's).
  const Operation* given = nullptr;
  for (const auto& op : program.body().operations())
    if (op->is("tile.program")) given = op.get();
  for (const auto& op : given->body().operations()) {
    if (!op->is("tile.input") && !op->is("tile.output")) continue;
    const Type& t = op->result()->type();
    for (KernelParam& p : r.launch.params) {
      if (p.kind != KernelParam::Kind::Pointer || p.name != op->stringAttr("name")) continue;
      if (const Attribute* o = t.param("order")) p.order = *o->asInts();
      p.strides = tile::tensorLayout(t).strides;
    }
  }
  auto ptx = ptx::emitModule(*m, target, diag);
  if (!ptx) return std::nullopt;
  r.ptx = std::move(*ptx);
  r.target = target.name;
  r.config = config.str();
  r.kernIr = toString(*m);
  return r;
}

std::optional<CompileResult> compile(const Module& program, const Target& target, std::string_view config,
                                     DiagnosticEngine& diag) {
  auto parsed = Config::parse(config, diag);
  if (!parsed) return std::nullopt;
  return compile(program, target, *parsed, diag);
}

}  // namespace kiln
