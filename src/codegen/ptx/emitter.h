#pragma once
// The PTX emitter: kern IR to PTX text, one emitter function per kern op family (DESIGN.md, "PTX,
// assembly, runtime"). The driver (emitter.cpp) writes the module header, each kernel's entry and
// parameters, and, for every op, the line `// kiln: <op> at <file:line:col>` followed by what the
// op's emitter writes; the backend maps assembler errors back to ops through those lines.
//
// Output is deterministic: registers and labels are numbered in emission order, and nothing in the
// text depends on addresses, time or the environment.
#include <optional>
#include <string>
#include <unordered_map>

#include "codegen/ptx/ptx_builder.h"
#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"
#include "kiln/target.h"

namespace kiln::ptx {

// PTX for every kern.kernel of the module; nullopt after diagnostics (an op the emitter does not
// know, or an unsupported conversion).
std::optional<std::string> emitModule(const ir::Module& m, const Target& target, ir::DiagnosticEngine& diag);

// The name of the module-scope dynamic shared memory array every kernel addresses.
inline constexpr const char* kSmemSymbol = "kiln_smem";

// State shared by the op emitters while one kernel is written.
class KernelEmitter {
 public:
  KernelEmitter(PtxBuilder& b, const Target& t, ir::DiagnosticEngine& d) : b_(b), target_(t), diag_(d) {}

  PtxBuilder& b() { return b_; }
  const Target& target() const { return target_; }
  ir::DiagnosticEngine& diag() { return diag_; }

  // The register holding a value (created on first definition).
  Reg def(const ir::Value* v);
  Reg use(const ir::Value* v) const;
  void bind(const ir::Value* v, Reg r) { regs_[v] = r; }
  bool has(const ir::Value* v) const { return regs_.count(v) != 0; }

  // Emits every op of a block in order (used by the kernel and by structured control flow).
  bool emitBlock(const ir::Block& block);
  // False after a diagnostic.
  bool emitOp(const ir::Operation& op);

  bool fail(const ir::Operation& op, const std::string& why);

  // An instruction newer than the target's first PTX ISA version: the module's `.version` becomes
  // at least major.minor (the highest any op asks for; still deterministic).
  void requirePtxIsa(int major, int minor);
  std::pair<int, int> ptxIsa() const { return isa_; }

 private:
  PtxBuilder& b_;
  const Target& target_;
  ir::DiagnosticEngine& diag_;
  std::unordered_map<const ir::Value*, Reg> regs_;
  std::pair<int, int> isa_{0, 0};
};

RegClass regClassOf(const ir::Type& t);
// The PTX type suffix for moving / selecting a value of this type (b32, b64, f32, b16, pred).
const char* moveType(const ir::Type& t);

// ---- op emitters (one family per file) ----
using EmitFn = bool (*)(KernelEmitter&, const ir::Operation&);
// emit_arith.cpp
bool emitConstant(KernelEmitter&, const ir::Operation&);
bool emitIntBinary(KernelEmitter&, const ir::Operation&);
bool emitCmp(KernelEmitter&, const ir::Operation&);
bool emitSelect(KernelEmitter&, const ir::Operation&);
bool emitCast(KernelEmitter&, const ir::Operation&);
bool emitFloatBinary(KernelEmitter&, const ir::Operation&);
bool emitFloatUnary(KernelEmitter&, const ir::Operation&);
bool emitFloatFma(KernelEmitter&, const ir::Operation&);
bool emitAssumeRange(KernelEmitter&, const ir::Operation&);
bool emitCmpf(KernelEmitter&, const ir::Operation&);
// emit_math.cpp
bool emitMath(KernelEmitter&, const ir::Operation&);
// emit_shuffle.cpp
bool emitShflXor(KernelEmitter&, const ir::Operation&);
// emit_convert.cpp
bool emitCvtPack(KernelEmitter&, const ir::Operation&);
bool emitCvtUnpack(KernelEmitter&, const ir::Operation&);
// emit_control.cpp
bool emitFor(KernelEmitter&, const ir::Operation&);
bool emitIf(KernelEmitter&, const ir::Operation&);
// emit_thread.cpp
bool emitThreadIndex(KernelEmitter&, const ir::Operation&);
// emit_shared.cpp
bool emitSmemAlloc(KernelEmitter&, const ir::Operation&);
bool emitSmemOffset(KernelEmitter&, const ir::Operation&);
bool emitLdsmOffset(KernelEmitter&, const ir::Operation&);
bool emitCpAsync(KernelEmitter&, const ir::Operation&);
bool emitCpAsyncCommit(KernelEmitter&, const ir::Operation&);
bool emitCpAsyncWait(KernelEmitter&, const ir::Operation&);
bool emitBarrier(KernelEmitter&, const ir::Operation&);
bool emitNamedBarrier(KernelEmitter&, const ir::Operation&);
bool emitUndef(KernelEmitter&, const ir::Operation&);
bool emitStShared(KernelEmitter&, const ir::Operation&);
bool emitLdShared(KernelEmitter&, const ir::Operation&);
bool emitStSharedV4(KernelEmitter&, const ir::Operation&);
bool emitStmatrix(KernelEmitter&, const ir::Operation&);
// emit_tensor_core.cpp
bool emitLdmatrix(KernelEmitter&, const ir::Operation&);
bool emitMmaSync(KernelEmitter&, const ir::Operation&);
// emit_global.cpp
bool emitPtrAdd(KernelEmitter&, const ir::Operation&);
bool emitLdGlobal(KernelEmitter&, const ir::Operation&);
bool emitPrefetchGlobal(KernelEmitter&, const ir::Operation&);
bool emitStGlobal(KernelEmitter&, const ir::Operation&);
bool emitRedRelease(KernelEmitter&, const ir::Operation&);
bool emitSpinWait(KernelEmitter&, const ir::Operation&);
bool emitAtomAdd(KernelEmitter&, const ir::Operation&);

// emit_warp_specialized.cpp
bool emitRole(KernelEmitter&, const ir::Operation&);
bool emitTileLoop(KernelEmitter&, const ir::Operation&);
bool emitStageMarker(KernelEmitter&, const ir::Operation&);
bool emitSetMaxNReg(KernelEmitter&, const ir::Operation&);
// emit_mbarrier.cpp
bool emitMbarrierAlloc(KernelEmitter&, const ir::Operation&);
bool emitMbarrierInit(KernelEmitter&, const ir::Operation&);
bool emitMbarrierArriveExpectTx(KernelEmitter&, const ir::Operation&);
bool emitMbarrierArrive(KernelEmitter&, const ir::Operation&);
bool emitMbarrierWait(KernelEmitter&, const ir::Operation&);
bool emitFence(KernelEmitter&, const ir::Operation&);
// emit_tma.cpp
bool emitTmaLoad(KernelEmitter&, const ir::Operation&);
bool emitPrefetchTensormap(KernelEmitter&, const ir::Operation&);
bool emitTmaStore(KernelEmitter&, const ir::Operation&);
bool emitBulkCommit(KernelEmitter&, const ir::Operation&);
bool emitBulkWait(KernelEmitter&, const ir::Operation&);
// emit_cluster.cpp
bool emitClusterIndex(KernelEmitter&, const ir::Operation&);
bool emitClusterBarrier(KernelEmitter&, const ir::Operation&);
bool emitGridDep(KernelEmitter&, const ir::Operation&);
bool emitMbarrierArriveRemote(KernelEmitter&, const ir::Operation&);
bool emitLdSharedRemoteV4(KernelEmitter&, const ir::Operation&);
// emit_wgmma.cpp
bool emitWgmmaDesc(KernelEmitter&, const ir::Operation&);
bool emitWgmma(KernelEmitter&, const ir::Operation&);
bool emitWgmmaFence(KernelEmitter&, const ir::Operation&);
bool emitWgmmaCommit(KernelEmitter&, const ir::Operation&);
bool emitWgmmaWait(KernelEmitter&, const ir::Operation&);

// The shared address of `slot` of an smem ring plus the op's {row, col} displacement resolved to
// (xor, add): returns the register and the immediate to add in the address operand.
struct SharedAddress {
  Reg reg;
  int64_t imm = 0;
  std::string operand() const;  // "[%r5+256]"
};
SharedAddress stageAddress(KernelEmitter& e, const ir::Operation& op);

}  // namespace kiln::ptx
