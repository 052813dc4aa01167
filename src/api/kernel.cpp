#include "kiln/kernel.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "backend/assembler.h"
#include "backend/compile_cache.h"
#include "dialects/tile/tensor_layout.h"
#include "kiln/runtime/launch_args.h"
#include "kiln/runtime/launcher.h"
#include "kiln/runtime/memory.h"
#include "kiln/runtime/module.h"
#include "kiln/runtime/stream.h"
#include "kiln/target.h"
#include "schedule/config.h"

namespace kiln {

// The last launch's arguments and what they packed into: a warm call with the same arguments
// (a benchmark's loop, a model's layer run again) skips validation, the pointer queries and the
// tensor-map encoding, which together cost more host time than the launch itself.
struct Kernel::Packed {
  uint64_t context = 0;
  void* stream = nullptr;
  std::vector<uint64_t> tensors;
  std::vector<double> scalars;
  std::map<std::string, int64_t> dims;
  std::vector<uint64_t> storage;    // pointer, scalar, dim and workspace parameters, by index
  std::vector<CUtensorMap> maps;    // tensor-map parameters, by index
  std::array<int64_t, 3> grid{};
  bool same(uint64_t c, void* s, const std::vector<uint64_t>& t, const std::vector<double>& sc,
            const std::map<std::string, int64_t>& d) const {
    return c == context && s == stream && t == tensors && sc == scalars && d == dims;
  }
};

struct Kernel::Impl {
  CompileResult compiled;
  backend::AssembledKernel assembled;
  runtime::KernelSignature signature;
  // Loaded lazily, once per kernel, in the context of the first launch.
  mutable std::mutex loadMutex;
  mutable std::optional<runtime::Module> module;
  mutable std::optional<runtime::Function> function;
  mutable std::optional<int> activeClusters;  // clusters the device runs at once (persistent cluster kernels)
  // Split-K and stream-K workspaces, one per stream: launches on one stream run in order, so they
  // can share the flags (which each launch leaves zero) and partial tiles; launches on two streams
  // may overlap, so they get their own. Flags and partials are separate buffers, each grown on its
  // own: a smaller problem after a larger one uses a prefix of each, so its partial sums never land
  // on flags the larger problem counts on being zero. A buffer outgrown by a larger problem is kept
  // until the kernel is destroyed, since a launch still in flight may be using it.
  struct Workspace {
    std::optional<runtime::DeviceBuffer> flags, partials;
  };
  mutable std::mutex workspaceMutex;
  mutable std::map<void*, Workspace> workspaces;
  mutable std::vector<runtime::DeviceBuffer> outgrown;
  // The tensor spans (and context) whose pointers the last launch checked: a benchmark relaunches
  // the same buffers thousands of times, and the driver queries would sit between its timing
  // events. A different pointer, span or context is checked again.
  mutable std::mutex pointerMutex;
  mutable uint64_t checkedContext = 0;
  mutable std::vector<std::pair<uint64_t, uint64_t>> checkedSpans;
  // The last launch's packing (Kernel::Packed).
  mutable std::mutex packedMutex;
  mutable std::shared_ptr<const Kernel::Packed> lastPacked;
};

Kernel::Kernel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Kernel::~Kernel() = default;
Kernel::Kernel(Kernel&&) noexcept = default;
Kernel& Kernel::operator=(Kernel&&) noexcept = default;

runtime::KernelSignature signatureOf(const ir::Operation& program, const LaunchInfo& launch) {
  runtime::KernelSignature sig;
  sig.dims = program.stringsAttr("dims");
  std::map<std::string, int64_t> align;
  for (const auto& p : launch.params)
    if (p.kind == KernelParam::Kind::Pointer) align[p.name] = std::max(align[p.name], p.alignment);
  // A tensor read or written through a tensor map has its address and every row 16-byte aligned;
  // a flat map's rows may be any length (its address is the map's check, Kernel::validate).
  for (const auto& p : launch.params)
    if (p.kind == KernelParam::Kind::TensorMap && !p.flat) align[p.tensor] = std::max<int64_t>(align[p.tensor], 16);
  for (const auto& op : program.body().operations()) {
    if (op->is("tile.input") || op->is("tile.output")) {
      const ir::Type& t = op->result()->type();
      runtime::TensorParam tp;
      tp.name = op->stringAttr("name");
      tp.dtype = t.elem();
      tp.shape = t.shape();
      if (const ir::Attribute* o = t.param("order")) tp.order = o->asInts().value_or(std::vector<int64_t>{});
      tp.strides = tile::tensorLayout(t).strides;
      if (t.param("block")) tp.block = ir::blockOf(t);
      tp.alignBytes = static_cast<int>(align.count(tp.name) ? align[tp.name] : 16);
      tp.output = op->is("tile.output");
      sig.tensors.push_back(std::move(tp));
    } else if (op->is("tile.scalar")) {
      sig.scalars.push_back({op->stringAttr("name"), op->result()->type().elem()});
    }
  }
  for (const auto& [dim, multiple] : launch.divisibility) sig.dimMultipleOf[dim] = multiple;
  return sig;
}

std::optional<Kernel> Kernel::build(const ir::Module& program, const Target& target, const Config& config,
                                    ir::DiagnosticEngine& diag, const backend::CompileCache* cache) {
  auto impl = std::make_unique<Impl>();
  auto compiled = compile(program, target, config, diag);
  if (!compiled) return std::nullopt;
  auto assembled = backend::assembleCached(compiled->ptx, target.name, diag, cache);
  if (!assembled) return std::nullopt;
  impl->compiled = std::move(*compiled);
  impl->assembled = std::move(*assembled);
  const ir::Operation* prog = nullptr;
  for (const auto& op : program.body().operations())
    if (op->is("tile.program")) prog = op.get();
  impl->signature = signatureOf(*prog, impl->compiled.launch);
  return Kernel(std::move(impl));
}

std::optional<Kernel> Kernel::build(const ir::Module& program, const Target& target, std::string_view config,
                                    ir::DiagnosticEngine& diag, const backend::CompileCache* cache) {
  auto parsed = Config::parse(config, diag);
  if (!parsed) return std::nullopt;
  return build(program, target, *parsed, diag, cache);
}

const std::string& Kernel::ptx() const { return impl_->compiled.ptx; }
const std::vector<char>& Kernel::cubin() const { return impl_->assembled.cubin; }
const LaunchInfo& Kernel::launchInfo() const { return impl_->compiled.launch; }
const runtime::KernelSignature& Kernel::signature() const { return impl_->signature; }
const std::string& Kernel::config() const { return impl_->compiled.config; }

const backend::ResourceReport& Kernel::resources() const {
  auto it = impl_->assembled.resources.find(launchInfo().kernelName);
  if (it == impl_->assembled.resources.end()) KILN_ICE("no resource report for kernel " + launchInfo().kernelName);
  return it->second;
}

runtime::TensorMapDesc tensorMapDescFor(const KernelParam& param, const runtime::KernelSignature& sig,
                                        const std::vector<uint64_t>& tensors,
                                        const std::map<std::string, int64_t>& dims) {
  size_t index = sig.tensors.size();
  for (size_t i = 0; i < sig.tensors.size(); ++i)
    if (sig.tensors[i].name == param.tensor) index = i;
  KILN_ASSERT(index < sig.tensors.size(), "tensor map '" + param.name + "' names no tensor argument");
  const runtime::TensorParam& t = sig.tensors[index];
  runtime::TensorMapDesc d;
  d.name = param.name;
  d.dtype = t.dtype;
  d.globalAddress = index < tensors.size() ? tensors[index] : 0;
  // A block tensor's map (an sm90 kernel's per-column scale_b) covers its stored elements.
  std::vector<int64_t> shape;
  for (size_t j = 0; j < t.shape.size(); ++j) {
    const auto& e = t.shape[j];
    auto it = e.isSymbolic() ? dims.find(e.sym) : dims.end();
    const int64_t extent = e.isSymbolic() ? (it == dims.end() ? 0 : it->second) : e.value;
    shape.push_back(ir::storedExtent(extent, j < t.block.size() ? t.block[j] : 1));
  }
  // A strided tensor's map lists its axes as a row-major one's would be, the unit-stride axis first
  // (the box is in the kernel's order: the contiguous axis, the other matrix axis, the batch), each
  // with the stride the dims give it.
  std::vector<int64_t> order = runtime::dimOrder(t);
  std::vector<int64_t> strides = runtime::contiguousStrides(shape, order);
  if (!t.strides.empty()) {
    strides = runtime::paramStrides(t, dims);
    order.clear();
    for (size_t a = 0; a < t.strides.size(); ++a)
      if (!t.strides[a].isSymbolic() && t.strides[a].value == 1) order.push_back(int64_t(a));
    for (int64_t a = int64_t(t.strides.size()) - 1; a >= 0; --a)
      if (a != order[0]) order.push_back(a);
  }
  int64_t bytes = ir::bitWidth(t.dtype) / 8;
  if (param.flat) {  // {flat}: the stored elements as one row (dense tensors only), a second dim of 1
    int64_t total = 1;
    for (int64_t e : shape) total *= e;
    d.globalDims = {uint64_t(total), 1};
    d.globalStrides = {uint64_t((total * bytes + 15) / 16 * 16)};  // never stepped: any 16-byte multiple
    order.clear();
  }
  for (size_t k = 0; k < order.size(); ++k) {
    d.globalDims.push_back(uint64_t(shape[size_t(order[k])]));
    if (k > 0) d.globalStrides.push_back(uint64_t(strides[size_t(order[k])] * bytes));
  }
  for (int64_t b : param.box) d.boxDims.push_back(uint32_t(b));
  d.swizzle = param.swizzleBytes == 128  ? runtime::TmaSwizzle::B128
              : param.swizzleBytes == 64 ? runtime::TmaSwizzle::B64
              : param.swizzleBytes == 32 ? runtime::TmaSwizzle::B32
                                         : runtime::TmaSwizzle::None;
  // L2 promotion of 256 bytes: operand tiles are reread by neighbouring CTAs (CUTLASS does the same);
  // an operand the kernel streams this launch fills as its stream rule says.
  d.l2Promotion = runtime::TmaL2Promotion::B256;
  if (param.stream && param.stream->holds(dims))
    d.l2Promotion = param.stream->fillBytes == 256   ? runtime::TmaL2Promotion::B256
                    : param.stream->fillBytes == 128 ? runtime::TmaL2Promotion::B128
                    : param.stream->fillBytes == 64  ? runtime::TmaL2Promotion::B64
                                                     : runtime::TmaL2Promotion::None;
  return d;
}

namespace {

// The runtime's view of a launch: each tensor with its signature's dtype and its shape at `dims`
// (a block tensor's stored extents: one element per block, ceil(extent / block)).
runtime::LaunchArgs launchArgsFor(const runtime::KernelSignature& sig, const std::vector<uint64_t>& tensors,
                                  const std::vector<double>& scalars, const std::map<std::string, int64_t>& dims) {
  runtime::LaunchArgs args;
  args.dims = dims;
  args.scalars = scalars;
  for (size_t i = 0; i < tensors.size(); ++i) {
    runtime::TensorArg t;
    t.ptr = tensors[i];
    if (i < sig.tensors.size()) {
      const runtime::TensorParam& p = sig.tensors[i];
      t.dtype = p.dtype;
      for (size_t j = 0; j < p.shape.size(); ++j) {
        const ir::Extent& e = p.shape[j];
        auto d = e.isSymbolic() ? dims.find(e.sym) : dims.end();
        const int64_t extent = e.isSymbolic() ? (d == dims.end() ? 0 : d->second) : e.value;
        t.shape.push_back(ir::storedExtent(extent, j < p.block.size() ? p.block[j] : 1));
      }
    }
    args.tensors.push_back(std::move(t));
  }
  return args;
}

// Every tensor pointer is device memory of `ctx` whose allocation covers the tensor's bytes: a
// host pointer, another context's buffer or a short allocation would fault (or read a neighbour)
// on the device, far from its cause.
bool checkPointers(const runtime::Context& ctx, const runtime::KernelSignature& sig, const runtime::LaunchArgs& args,
                   ir::DiagnosticEngine& diag) {
  ctx.makeCurrent();  // cuPointerGetAttribute answers for the current context
  std::vector<runtime::ByteSpan> spans = runtime::tensorByteSpans(sig, args);
  bool ok = true;
  for (size_t i = 0; i < spans.size(); ++i)
    ok &= runtime::checkPointerAttributes(sig.tensors[i].name, spans[i],
                                          runtime::queryPointerAttributes(ctx.driver(), spans[i].begin),
                                          reinterpret_cast<uint64_t>(ctx.handle()), diag);
  return ok;
}

}  // namespace

bool Kernel::pointersValid(const runtime::Context& ctx, const std::vector<uint64_t>& tensors,
                           const std::vector<double>& scalars, const std::map<std::string, int64_t>& dims,
                           ir::DiagnosticEngine& diag) const {
  runtime::LaunchArgs args = launchArgsFor(impl_->signature, tensors, scalars, dims);
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  for (const runtime::ByteSpan& s : runtime::tensorByteSpans(impl_->signature, args)) spans.emplace_back(s.begin, s.end);
  const uint64_t context = reinterpret_cast<uint64_t>(ctx.handle());
  std::lock_guard<std::mutex> lock(impl_->pointerMutex);
  if (context == impl_->checkedContext && spans == impl_->checkedSpans) return true;
  if (!checkPointers(ctx, impl_->signature, args, diag)) return false;
  impl_->checkedContext = context;
  impl_->checkedSpans = std::move(spans);
  return true;
}

bool Kernel::validate(const std::vector<uint64_t>& tensors, const std::vector<double>& scalars,
                      const std::map<std::string, int64_t>& dims, ir::DiagnosticEngine& diag) const {
  if (!launchInfo().validate(dims, diag)) return false;
  const auto& sig = impl_->signature;
  runtime::LaunchArgs args = launchArgsFor(sig, tensors, scalars, dims);
  if (!runtime::validateLaunch(sig, args, diag)) return false;
  bool ok = true;
  for (const KernelParam& p : launchInfo().params)
    if (p.kind == KernelParam::Kind::TensorMap)
      ok &= runtime::validateTensorMap(tensorMapDescFor(p, sig, tensors, dims), diag);
  return ok;
}

std::pair<uint64_t, uint64_t> Kernel::workspaceFor(const runtime::Context& ctx, void* stream,
                                                   const std::map<std::string, int64_t>& dims) const {
  // Per-block workspaces (stream-K) are sized for the grid launch() gives a kernel without
  // clusters: a block per SM at most.
  auto [flagBytes, partialBytes] = launchInfo().workspaceBytes(dims, ctx.properties().smCount);
  std::lock_guard<std::mutex> lock(impl_->workspaceMutex);
  Impl::Workspace& ws = impl_->workspaces[stream];
  auto fit = [&](std::optional<runtime::DeviceBuffer>& buf, int64_t bytes, bool zero) {
    if (buf && buf->size() >= size_t(bytes)) return;
    if (buf) impl_->outgrown.push_back(std::move(*buf));
    buf.emplace(runtime::DeviceBuffer::allocate(ctx, std::max<size_t>(size_t(bytes), 256)));
    if (!zero) return;
    // The flags start at zero (each launch leaves them so). The fill runs on the legacy stream;
    // synchronizing once here orders it before launches on non-blocking streams too.
    buf->fill(0);
    ctx.driver().checkCu(ctx.driver().ctxSynchronize(), "cuCtxSynchronize after zeroing a workspace's flags");
  };
  fit(ws.flags, flagBytes, true);
  fit(ws.partials, partialBytes, false);
  return {ws.flags->ptr(), ws.partials->ptr()};
}

void Kernel::launch(const runtime::Context& ctx, void* stream, const std::vector<uint64_t>& tensors,
                    const std::vector<double>& scalars, const std::map<std::string, int64_t>& dims) const {
  const LaunchInfo& info = launchInfo();
  const uint64_t context = reinterpret_cast<uint64_t>(ctx.handle());
  std::shared_ptr<const Packed> packed;
  {
    std::lock_guard<std::mutex> lock(impl_->packedMutex);
    if (impl_->lastPacked && impl_->lastPacked->same(context, stream, tensors, scalars, dims)) packed = impl_->lastPacked;
  }
  if (!packed) {
    auto fresh = std::make_shared<Packed>();
    pack(ctx, stream, tensors, scalars, dims, *fresh);
    packed = fresh;
    std::lock_guard<std::mutex> lock(impl_->packedMutex);
    impl_->lastPacked = packed;
  }
  std::vector<void*> params;
  params.reserve(info.params.size());
  for (size_t i = 0; i < info.params.size(); ++i)
    params.push_back(info.params[i].kind == KernelParam::Kind::TensorMap
                         ? static_cast<void*>(const_cast<CUtensorMap*>(&packed->maps[i]))
                         : static_cast<void*>(const_cast<uint64_t*>(&packed->storage[i])));  // the driver only reads them
  runtime::Dim3 clusterDim{uint32_t(info.cluster[0]), uint32_t(info.cluster[1]), uint32_t(info.cluster[2])};
  runtime::Stream s = runtime::Stream::adopt(ctx, static_cast<CUstream>(stream));
  runtime::launch(*impl_->function,
                  runtime::Dim3{uint32_t(packed->grid[0]), uint32_t(packed->grid[1]), uint32_t(packed->grid[2])},
                  runtime::Dim3{uint32_t(info.threads), 1, 1}, clusterDim, uint32_t(info.dynamicSmemBytes), s, params,
                  info.programmatic);
}

void Kernel::pack(const runtime::Context& ctx, void* stream, const std::vector<uint64_t>& tensors,
                  const std::vector<double>& scalars, const std::map<std::string, int64_t>& dims,
                  Packed& packed) const {
  ir::DiagnosticEngine diag;
  if (!validate(tensors, scalars, dims, diag) || !pointersValid(ctx, tensors, scalars, dims, diag))
    throw ir::Error(diag.diagnostics());
  const LaunchInfo& info = launchInfo();
  // A kernel compiled for clusters (.reqnctapercluster) cannot run without them: say so before
  // loading a module the device could not launch.
  if (info.cluster[0] * info.cluster[1] * info.cluster[2] > 1 && !ctx.properties().clusterLaunch)
    throw ir::Error(ir::Location::unknown(),
                    fmt::format("kernel '{}' was compiled for clusters of [{}, {}, {}] blocks, which this device "
                                "cannot launch (thread-block clusters need sm_90 or newer); use a variant without "
                                "a cluster",
                                info.kernelName, info.cluster[0], info.cluster[1], info.cluster[2]));
  {
    std::lock_guard<std::mutex> lock(impl_->loadMutex);
    if (!impl_->function) {
      std::string_view image(cubin().data(), cubin().size());
      impl_->module.emplace(runtime::Module::load(ctx, image, info.kernelName));
      impl_->function.emplace(impl_->module->function(info.kernelName, static_cast<int>(info.dynamicSmemBytes)));
    }
  }
  // The parameters in the contract's order: pointers, tensor maps, scalars, dims.
  packed.context = reinterpret_cast<uint64_t>(ctx.handle());
  packed.stream = stream;
  packed.tensors = tensors;
  packed.scalars = scalars;
  packed.dims = dims;
  packed.storage.resize(info.params.size());
  packed.maps.resize(info.params.size());  // CUtensorMap is declared 64-byte aligned
  size_t ti = 0, si = 0;
  for (size_t i = 0; i < info.params.size(); ++i) {
    const KernelParam& p = info.params[i];
    switch (p.kind) {
      case KernelParam::Kind::Pointer: packed.storage[i] = tensors.at(ti++); break;
      case KernelParam::Kind::TensorMap:
        packed.maps[i] = runtime::encodeTensorMap(ctx, tensorMapDescFor(p, impl_->signature, tensors, dims));
        break;
      case KernelParam::Kind::Scalar: {
        // By the parameter's declared type (.f32, .u32, .u64), as validate() range-checked it.
        runtime::PackedParam param = runtime::packScalar(p.elem, scalars.at(si++));
        std::memcpy(&packed.storage[i], &param.bits, size_t(param.size));
        break;
      }
      case KernelParam::Kind::Dim: {
        runtime::PackedParam param = runtime::packDim(dims.at(p.name));
        std::memcpy(&packed.storage[i], &param.bits, size_t(param.size));
        break;
      }
      case KernelParam::Kind::Workspace: {
        auto [flags, partials] = workspaceFor(ctx, stream, dims);
        packed.storage[i] = p.name == "ws_flags" ? flags : partials;
        break;
      }
    }
  }
  // A persistent grid has one block per SM; in clusters, only as many clusters as the device runs
  // at once (the SMs of a GPC may not all pair up), or the last ones would start a second wave.
  int slots = ctx.properties().smCount;
  runtime::Dim3 clusterDim{uint32_t(info.cluster[0]), uint32_t(info.cluster[1]), uint32_t(info.cluster[2])};
  if (info.persistent && clusterDim.count() > 1) {
    std::lock_guard<std::mutex> lock(impl_->loadMutex);
    if (!impl_->activeClusters)
      impl_->activeClusters = runtime::maxActiveClusters(*impl_->function, runtime::Dim3{uint32_t(info.threads), 1, 1},
                                                         clusterDim, uint32_t(info.dynamicSmemBytes));
    if (*impl_->activeClusters > 0) slots = std::min(slots, *impl_->activeClusters * int(clusterDim.count()));
  }
  packed.grid = info.gridFor(dims, slots);
}

}  // namespace kiln
