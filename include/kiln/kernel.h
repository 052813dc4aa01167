#pragma once
// kiln::Kernel: a compiled program ready to launch — its PTX, cubin and resource report, and a
// launch() that validates every argument before anything runs.
//
//   auto k = kiln::Kernel::build(*program, kiln::Target::sm90a(), "bm=128 bn=128 bk=32 stages=3", diag);
//   k->launch(ctx, stream, {a, b, c}, {}, {{"M", 4096}, {"N", 4096}, {"K", 4096}});
//
// launch() takes the device addresses of the program's tensor arguments in declaration order, its
// scalar arguments in order, and the dims by name. Shapes follow from the dims (tensors are dense in
// their declared order); a null or misaligned pointer, a missing or bad dim, a dim that breaks the
// kernel's divisibility contract, or an output that overlaps another argument is an error that names
// the argument and the rule, and nothing is launched.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/compile.h"
#include "kiln/ir/diagnostics.h"
#include "kiln/resource_report.h"
#include "kiln/runtime/device.h"
#include "kiln/runtime/launch_args.h"
#include "kiln/runtime/tensor_map.h"

namespace kiln {

namespace backend {
class CompileCache;
}  // namespace backend

class Kernel {
 public:
  // Compiles, assembles for the target (through the disk cache when given) and prepares launching.
  static std::optional<Kernel> build(const ir::Module& program, const Target& target, const Config& config,
                                     ir::DiagnosticEngine& diag, const backend::CompileCache* cache = nullptr);
  // The same with the schedule as a config line (kiln/compile.h).
  static std::optional<Kernel> build(const ir::Module& program, const Target& target, std::string_view config,
                                     ir::DiagnosticEngine& diag, const backend::CompileCache* cache = nullptr);
  ~Kernel();
  Kernel(Kernel&&) noexcept;
  Kernel& operator=(Kernel&&) noexcept;

  const std::string& ptx() const;
  const std::vector<char>& cubin() const;
  const backend::ResourceReport& resources() const;
  const LaunchInfo& launchInfo() const;
  const runtime::KernelSignature& signature() const;
  const std::string& config() const;

  // Checks the arguments against the kernel's contract; reports each violation to `diag`.
  bool validate(const std::vector<uint64_t>& tensors, const std::vector<double>& scalars,
                const std::map<std::string, int64_t>& dims, ir::DiagnosticEngine& diag) const;
  // Validates, checks with libcuda that every tensor pointer is device memory of `ctx` whose
  // allocation covers the tensor, then launches on `stream` (a CUstream of `ctx`): encodes the
  // tensor maps, and runs a persistent kernel on at most one block per SM of the device. A split-K
  // or stream-K kernel gets its workspace from the kernel (one per stream, allocated and its flags
  // zeroed at the first launch that needs it). Throws kiln::ir::Error on a bad argument. A launch
  // with the same context, stream, tensors, scalars and dims as the one before reuses its
  // validated, packed parameters (the host time of a warm call is the driver's launch alone).
  void launch(const runtime::Context& ctx, void* stream, const std::vector<uint64_t>& tensors,
              const std::vector<double>& scalars, const std::map<std::string, int64_t>& dims) const;

  // The split-K / stream-K workspace launch() passes on `stream` for these dims: (ws_flags,
  // ws_partials) addresses, allocated (the flags zeroed) or grown on first need. The flags stay
  // where they are for smaller problems.
  std::pair<uint64_t, uint64_t> workspaceFor(const runtime::Context& ctx, void* stream,
                                             const std::map<std::string, int64_t>& dims) const;

 private:
  struct Impl;
  explicit Kernel(std::unique_ptr<Impl> impl);
  // cuPointerGetAttribute for each tensor, unless the last launch checked the same spans in `ctx`.
  bool pointersValid(const runtime::Context& ctx, const std::vector<uint64_t>& tensors,
                     const std::vector<double>& scalars, const std::map<std::string, int64_t>& dims,
                     ir::DiagnosticEngine& diag) const;
  // A launch's parameters and grid, packed; a warm launch with the same arguments reuses them.
  struct Packed;
  // Validates, checks the pointers, loads the module and packs the parameters and grid of a launch.
  void pack(const runtime::Context& ctx, void* stream, const std::vector<uint64_t>& tensors,
            const std::vector<double>& scalars, const std::map<std::string, int64_t>& dims, Packed& packed) const;
  std::unique_ptr<Impl> impl_;
};

// The launch signature (tensor shapes, orders, alignments, dims) of a compiled tile program.
runtime::KernelSignature signatureOf(const ir::Operation& program, const LaunchInfo& launch);

// What launch() encodes for a tensor-map parameter: the tensor it names, at its argument's address,
// with its shape from the dims, dims fastest-varying first (the tensor's `order`), dense byte
// strides, the parameter's box and swizzle, zero fill. `tensors` are the launch's tensor addresses.
runtime::TensorMapDesc tensorMapDescFor(const KernelParam& param, const runtime::KernelSignature& sig,
                                        const std::vector<uint64_t>& tensors,
                                        const std::map<std::string, int64_t>& dims);

}  // namespace kiln
