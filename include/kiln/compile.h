#pragma once
// kiln::compile: a tile program, a target and a schedule in; PTX and the kernel's launch contract
// out (DESIGN.md, "The pipeline").
//
//   tile verify -> lower (the config's strategy) -> kern passes, verified between steps -> PTX
//
// The launch contract is data, so the runtime can validate arguments and launch without knowing
// how the kernel was built:
//  * params, in launch order: the program's tensor arguments in declaration order (64-bit global
//    addresses, each with its required byte alignment), then the tensor maps the kernel reads
//    through TMA (sm_90+: a 128-byte CUtensorMap each, passed by value, which the launcher encodes
//    from the tensor's address, shape and the box described here), then its scalar arguments (f32 /
//    i32), then its dims (32-bit signed integers) in the program's dims order;
//  * block = (threads, 1, 1); dynamic shared memory = dynamicSmemBytes (set the kernel's
//    max-dynamic-shared-memory attribute when it exceeds 48 KB);
//  * grid: one GridAxis per axis (x, y, z), each a constant times the product of ceil(dim / tile),
//    counting clusters: the blocks along an axis are that times the cluster dim; a persistent
//    kernel runs at most one block per SM (persistentPerSm of them with {persistent_per_sm}): x is
//    capped by the device's SM count (times that), rounded down to whole clusters;
//  * cluster: the thread-block cluster shape (1, 1, 1 when the kernel uses none); a kernel compiled
//    for clusters is launched with exactly this shape (cuLaunchKernelEx) and cannot run without it;
//  * divisibility: dims that must be multiples of a value (e.g. K % 8 == 0 so every operand row is
//    16-byte aligned for cp.async); validate() checks them and says which one fails;
//  * a strided tensor (tensor<..., strides = [...]>) is addressed through its strides: a stride that
//    is a dim is a dim parameter like any other, and the runtime checks at launch that the rows do
//    not overlap, that an output's elements do not share storage and that every row starts at the
//    pointer's alignment (kiln/runtime/launch_args.h), naming the argument and the stride.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"
#include "kiln/ir/types.h"

namespace kiln {

struct Target;
struct Config;

struct KernelParam {
  // Workspace: scratch memory the runtime allocates and owns (split-K's ws_flags, ws_partials).
  enum class Kind { Pointer, TensorMap, Scalar, Dim, Workspace };
  std::string name;
  Kind kind = Kind::Pointer;
  ir::ScalarType elem = ir::ScalarType::I32;  // pointee type for pointers and tensor maps, the type for scalars/dims
  int64_t alignment = 0;                      // pointers: required byte alignment of the address
  // Pointers: the layout the kernel addresses the tensor with (its type's, docs/layouts.md): axes
  // fastest-first when dense (empty: row-major), or one element stride per axis, a dim or a
  // constant, when strided (a leading dimension, a batch stride; the stride dims are launch dims).
  std::vector<int64_t> order;
  ir::Shape strides;
  // Tensor maps: the tensor argument described (its dims fastest-varying first, as TMA counts them),
  // the box copied per TMA load in that order, and the shared-memory swizzle in bytes (0, 32, 64, 128).
  std::string tensor;
  std::vector<int64_t> box;
  int swizzleBytes = 0;
  // Tensor maps {flat = true}: over the tensor's stored elements as one row (kern_ops.h).
  bool flat = false;
  // Tensor maps of an operand the kernel may stream (loads L2 evict_first, sm90 l2_hint=reuse): it
  // does when dims[boundDim] <= bound and dims[rowDim] % rowMultiple == 0, and while it does the
  // runtime sets the map's L2 promotion to fillBytes (0: none) instead of 256 bytes, so no fill
  // brings in bytes that evict_first would drop before their reader came (config.h, Sm90StreamRule).
  struct StreamRule {
    std::string boundDim;
    int64_t bound = 0;
    std::string rowDim;
    int64_t rowMultiple = 1;
    int fillBytes = 256;
    bool holds(const std::map<std::string, int64_t>& dims) const;
  };
  std::optional<StreamRule> stream;
};

struct GridAxis {
  int64_t constant = 1;
  std::vector<std::pair<std::string, int64_t>> tiles;  // (dim, tile): times ceil(dim / tile)
  int64_t eval(const std::map<std::string, int64_t>& dims) const;
};

struct LaunchInfo {
  std::string kernelName;
  std::vector<KernelParam> params;
  int threads = 0;
  int64_t dynamicSmemBytes = 0;
  std::vector<GridAxis> grid;                                // x, y, z (missing axes are 1)
  std::vector<std::pair<std::string, int64_t>> divisibility;  // dim % value == 0
  bool persistent = false;                                    // grid x capped by the SM count
  int persistentPerSm = 1;                                    // ... times this ({persistent_per_sm})
  std::array<int, 3> cluster = {1, 1, 1};
  // Split-K and stream-K: bytes of ws_flags and ws_partials per output tile, or with
  // workspacePerBlock per block of the launched grid ({0, 0}: no workspace).
  std::array<int64_t, 2> workspaceUnitBytes = {0, 0};
  bool workspacePerBlock = false;
  // Launched with programmatic stream serialization (sm90 pdl): the kernel may start before the
  // previous kernel in its stream has finished, and waits for it before touching global memory.
  bool programmatic = false;

  // The bytes of the two workspace regions a launch needs: workspaceUnitBytes times the tiles of
  // grid x, or times the blocks of grid x on a device of `sms` SMs (0: unknown, the uncapped grid).
  std::array<int64_t, 2> workspaceBytes(const std::map<std::string, int64_t>& dims, int sms = 0) const;

  // `sms`: the device's SM count (0: unknown, no cap).
  std::array<int64_t, 3> gridFor(const std::map<std::string, int64_t>& dims, int sms = 0) const;
  // Checks that every dim is given and positive, the grid fits CUDA's limits, and the divisibility
  // requirements hold.
  bool validate(const std::map<std::string, int64_t>& dims, ir::DiagnosticEngine& diag) const;
};

// The launch contract as a JSON object: {"kernel", "threads", "dynamic_smem_bytes", "params": [{"name",
// "kind" (pointer, tensor_map, scalar, dim, workspace), "dtype", pointers' "alignment" and "order" or
// "strides" (each stride a dim's name or a number), tensor maps'
// "tensor", "box", "swizzle_bytes", "stream"}], "grid": [{"constant", "tiles": [{"dim", "tile"}]}]
// (x, y, z), "cluster", "persistent", "divisibility": [{"dim", "multiple"}], "workspace_unit_bytes",
// "workspace_per_block"}, with the meanings above.
std::string launchJson(const LaunchInfo& launch);

struct CompileResult {
  std::string ptx;
  LaunchInfo launch;
  std::string target;  // Target::name
  std::string config;  // Config::str()
  std::string kernIr;  // the kern IR the PTX was emitted from
};

// Compiles the module's one tile.program. Returns nullopt after reporting diagnostics.
std::optional<CompileResult> compile(const ir::Module& program, const Target& target, const Config& config,
                                     ir::DiagnosticEngine& diag);
// The same with the schedule as a config line ("strategy=sm90_ws_persistent bm=128 ..."; empty: the
// sm80_multistage defaults), as `kiln compile --config` and kiln::select give it. A bad line is
// reported, with the key it is about.
std::optional<CompileResult> compile(const ir::Module& program, const Target& target, std::string_view config,
                                     ir::DiagnosticEngine& diag);

}  // namespace kiln
