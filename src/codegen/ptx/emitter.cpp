// The PTX emitter driver: module header, kernel entries, parameters, the op table and the
// `// kiln:` location lines (contract in emitter.h).
#include "codegen/ptx/emitter.h"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "dialects/kern/kern_ops.h"
#include "dialects/ptx_name.h"
#include "kiln/ir/op_registry.h"

namespace kiln::ptx {
using namespace ir;

namespace {

struct Entry {
  std::string_view name;
  EmitFn fn;
};

// One line per op name (sorted for lookup).
const std::vector<Entry>& table() {
  static const std::vector<Entry> t = [] {
    std::vector<Entry> v = {
        {"arith.constant", emitConstant},   {"arith.addi", emitIntBinary},     {"arith.subi", emitIntBinary},
        {"arith.muli", emitIntBinary},      {"arith.divsi", emitIntBinary},    {"arith.remsi", emitIntBinary},
        {"arith.divui", emitIntBinary},      {"arith.remui", emitIntBinary},
        {"arith.minsi", emitIntBinary},     {"arith.maxsi", emitIntBinary},    {"arith.andi", emitIntBinary},
        {"arith.ori", emitIntBinary},       {"arith.xori", emitIntBinary},     {"arith.shli", emitIntBinary},
        {"arith.shrui", emitIntBinary},     {"arith.cmpi", emitCmp},           {"arith.select", emitSelect},
        {"arith.cast", emitCast},           {"arith.addf", emitFloatBinary},   {"arith.subf", emitFloatBinary},
        {"arith.mulf", emitFloatBinary},    {"arith.divf", emitFloatBinary},   {"arith.maxf", emitFloatBinary},
        {"arith.minf", emitFloatBinary},    {"arith.negf", emitFloatUnary},    {"arith.absf", emitFloatUnary},
        {"math.exp", emitMath},             {"math.tanh", emitMath},           {"scf.for", emitFor},
        {"math.exp2", emitMath},            {"math.log2", emitMath},           {"math.sqrt", emitMath},
        {"math.rsqrt", emitMath},           {"math.erf", emitMath},            {"arith.cmpf", emitCmpf},
        {"kern.grid_dim", emitThreadIndex}, {"kern.shfl_xor", emitShflXor},    {"kern.ld_shared", emitLdShared},
        {"kern.cvt_unpack", emitCvtUnpack}, {"arith.fmaf", emitFloatFma},
        {"scf.if", emitIf},                 {"kern.thread_id", emitThreadIndex}, {"kern.lane_id", emitThreadIndex},
        {"kern.warp_id", emitThreadIndex},  {"kern.block_id", emitThreadIndex}, {"kern.smem_alloc", emitSmemAlloc},
        {"kern.smem_offset", emitSmemOffset}, {"kern.ldsm_offset", emitLdsmOffset}, {"kern.cp_async", emitCpAsync},
        {"kern.cp_async_commit", emitCpAsyncCommit}, {"kern.cp_async_wait", emitCpAsyncWait},
        {"kern.barrier", emitBarrier},      {"kern.ldmatrix", emitLdmatrix},   {"kern.mma_sync", emitMmaSync},
        {"kern.ptr_add", emitPtrAdd},       {"kern.ld_global", emitLdGlobal},  {"kern.st_global", emitStGlobal},
        {"kern.prefetch_global", emitPrefetchGlobal}, {"kern.cvt_pack", emitCvtPack},
        {"kern.role", emitRole},            {"kern.tile_loop", emitTileLoop},  {"kern.setmaxnreg", emitSetMaxNReg},
        {"kern.stage_begin", emitStageMarker}, {"kern.stage_end", emitStageMarker},
        {"kern.mbarrier_alloc", emitMbarrierAlloc}, {"kern.mbarrier_init", emitMbarrierInit},
        {"kern.mbarrier_arrive_expect_tx", emitMbarrierArriveExpectTx}, {"kern.mbarrier_arrive", emitMbarrierArrive},
        {"kern.mbarrier_wait", emitMbarrierWait}, {"kern.fence", emitFence},   {"kern.tma_load", emitTmaLoad},
        {"kern.prefetch_tensormap", emitPrefetchTensormap},
        {"kern.wgmma_desc", emitWgmmaDesc}, {"kern.wgmma", emitWgmma},         {"kern.wgmma_fence", emitWgmmaFence},
        {"kern.wgmma_commit", emitWgmmaCommit}, {"kern.wgmma_wait", emitWgmmaWait},
        {"kern.st_shared", emitStShared},
        {"kern.stmatrix", emitStmatrix},   {"kern.tma_store", emitTmaStore},  {"kern.bulk_commit", emitBulkCommit},
        {"kern.bulk_wait", emitBulkWait},   {"kern.named_barrier", emitNamedBarrier}, {"kern.undef", emitUndef},
        {"kern.cluster_rank", emitClusterIndex},
        {"kern.cluster_id", emitClusterIndex}, {"kern.cluster_count", emitClusterIndex},
        {"kern.assume_range", emitAssumeRange}, {"kern.cluster_barrier", emitClusterBarrier},
        {"kern.griddep_wait", emitGridDep}, {"kern.griddep_launch_dependents", emitGridDep},
        {"kern.mbarrier_arrive_remote", emitMbarrierArriveRemote},
        {"kern.st_shared_v4", emitStSharedV4},
        {"kern.ld_shared_remote_v4", emitLdSharedRemoteV4},
        {"kern.red_release", emitRedRelease}, {"kern.spin_wait", emitSpinWait}, {"kern.atom_add", emitAtomAdd},
    };
    std::sort(v.begin(), v.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
    return v;
  }();
  return t;
}

EmitFn lookup(std::string_view name) {
  const auto& t = table();
  auto it = std::lower_bound(t.begin(), t.end(), name, [](const Entry& e, std::string_view n) { return e.name < n; });
  return it != t.end() && it->name == name ? it->fn : nullptr;
}

const char* paramType(const Type& t) {
  if (kern::isPtr(t) || t.isScalar(ScalarType::I64)) return ".u64";
  if (t.isScalar(ScalarType::F32)) return ".f32";
  return ".u32";
}

// One kernel: entry, parameters, body. Raises `isa` to the PTX ISA version its ops need.
bool emitKernel(const Operation& k, const Target& target, DiagnosticEngine& diag, std::string& out,
                std::pair<int, int>& isa) {
  PtxBuilder b;
  KernelEmitter e(b, target, diag);
  std::string name = k.stringAttr("sym_name");
  // Checked here too, where the name becomes PTX: IR built in C++ may reach the emitter unverified.
  if (std::string bad = ptxNameProblem(name); !bad.empty()) return diag.error(k.loc()) << bad;
  const Block& body = k.body();
  b.comment("kiln: kern.kernel at " + k.loc().str());
  std::string params;
  for (unsigned i = 0; i < body.numArguments(); ++i) {
    const Value* a = body.argument(i);
    std::string pname = fmt::format("{}_param_{}", name, i);
    Reg r = e.def(a);
    if (kern::isTensorMap(a->type())) {
      // A CUtensorMap by value (__grid_constant__): 128 bytes, 64-byte aligned (CUDA driver API,
      // cuTensorMapEncodeTiled). TMA takes its generic address (PTX ISA, "cvta": .param, PTX 7.7+).
      params += fmt::format("{}\t.param .align 64 .b8 {}[128]", i ? ",\n" : "", pname);
      Reg raw = b.reg(RegClass::B64);
      b.inst(fmt::format("mov.u64 {}, {}", raw.str(), pname));
      b.inst(fmt::format("cvta.param.u64 {}, {}", r.str(), raw.str()));
      continue;
    }
    params += fmt::format("{}\t.param {} {}", i ? ",\n" : "", paramType(a->type()), pname);
    if (kern::isPtr(a->type())) {
      Reg raw = b.reg(RegClass::B64);
      b.inst(fmt::format("ld.param.u64 {}, [{}]", raw.str(), pname));
      b.inst(fmt::format("cvta.to.global.u64 {}, {}", r.str(), raw.str()));
    } else {
      b.inst(fmt::format("ld.param{} {}, [{}]", paramType(a->type()), r.str(), pname));
    }
  }
  if (!e.emitBlock(body)) return false;
  b.inst("ret");
  // .maxnreg: the register count at entry, without which ptxas ignores setmaxnreg (C7508).
  std::string maxnreg = k.attr("max_regs") ? fmt::format(".maxnreg {}\n", k.intAttr("max_regs", 0)) : "";
  // {cluster}: the kernel must run in clusters of exactly this shape (PTX ISA, "Cluster Dimension
  // Directives": .explicitcluster, .reqnctapercluster; PTX ISA 7.8).
  if (auto c = k.intsAttr("cluster"); c.size() == 3 && c[0] * c[1] * c[2] > 1) {
    maxnreg += fmt::format(".explicitcluster\n.reqnctapercluster {}, {}, {}\n", c[0], c[1], c[2]);
    e.requirePtxIsa(7, 8);
  }
  out += fmt::format(".visible .entry {}(\n{}\n)\n.maxntid {}, 1, 1\n{}{{\n{}\n{}}}\n", name, params,
                     k.intAttr("threads", 32), maxnreg, b.declarations(), b.body());
  isa = std::max(isa, e.ptxIsa());
  return true;
}

}  // namespace

RegClass regClassOf(const Type& t) {
  if (t.isScalar(ScalarType::I1)) return RegClass::Pred;
  if (t.isScalar(ScalarType::I64) || t.isScalar(ScalarType::Index) || kern::isPtr(t) || kern::isTensorMap(t))
    return RegClass::B64;
  if (t.isScalar(ScalarType::F32)) return RegClass::F32;
  if (t.isScalar(ScalarType::BF16) || t.isScalar(ScalarType::F16)) return RegClass::B16;
  return RegClass::B32;  // i32, frag<16-bit, [2]>, smem buffer addresses
}

const char* moveType(const Type& t) {
  switch (regClassOf(t)) {
    case RegClass::Pred: return "pred";
    case RegClass::B16: return "b16";
    case RegClass::B32: return "b32";
    case RegClass::B64: return "b64";
    case RegClass::F32: return "f32";
  }
  return "b32";
}

Reg KernelEmitter::def(const Value* v) {
  auto it = regs_.find(v);
  if (it != regs_.end()) return it->second;
  Reg r = b_.reg(regClassOf(v->type()));
  regs_[v] = r;
  return r;
}

Reg KernelEmitter::use(const Value* v) const {
  auto it = regs_.find(v);
  KILN_ASSERT(it != regs_.end(), "PTX emitter: a value is used before it has a register");
  return it->second;
}

void KernelEmitter::requirePtxIsa(int major, int minor) { isa_ = std::max(isa_, std::make_pair(major, minor)); }

bool KernelEmitter::fail(const Operation& op, const std::string& why) {
  diag_.error(op.loc()) << "cannot emit PTX for '" << op.name() << "': " << why;
  return false;
}

bool KernelEmitter::emitOp(const Operation& op) {
  EmitFn fn = lookup(op.name());
  if (!fn) return fail(op, "no PTX emitter handles this op");
  b_.comment("kiln: " + op.name() + " at " + op.loc().str());
  return fn(*this, op);
}

bool KernelEmitter::emitBlock(const Block& block) {
  for (const auto& op : block.operations())
    if (!op->info() || !op->info()->has(kTerminator))
      if (!emitOp(*op)) return false;
  return true;
}

std::string SharedAddress::operand() const {
  if (imm == 0) return "[" + reg.str() + "]";
  return fmt::format("[{}+{}]", reg.str(), imm);
}

std::optional<std::string> emitModule(const Module& m, const Target& target, DiagnosticEngine& diag) {
  // Kernels first: the header's .version is the target's, or higher when an op needs it.
  std::string kernels;
  std::pair<int, int> isa{target.ptxIsaMajor, target.ptxIsaMinor};
  bool any = false;
  for (const auto& op : m.body().operations()) {
    if (!op->is("kern.kernel")) continue;
    kernels += "\n";
    if (!emitKernel(*op, target, diag, kernels, isa)) return std::nullopt;
    any = true;
  }
  if (!any) {
    diag.error({}) << "the module has no kern.kernel to emit; lower the tile program first";
    return std::nullopt;
  }
  return fmt::format(
             "//\n// Generated by Kiln {} for {}. Do not edit.\n//\n\n.version {}.{}\n.target {}\n.address_size "
             "64\n\n.extern .shared .align 1024 .b8 {}[];\n",
             KILN_VERSION, target.name, isa.first, isa.second, target.ptxTarget, kSmemSymbol) +
         kernels;
}

}  // namespace kiln::ptx
