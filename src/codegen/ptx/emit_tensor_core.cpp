// Emitters for the tensor-core path: ldmatrix and mma.sync (fragment layouts in
// target/fragment_layout.h).
//   ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16 {d...}, [addr]
//     (PTX ISA, "Warp-level matrix load instruction: ldmatrix")
//   mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}.{bf16,f16}.f32 {d0..d3}, {a0..a3}, {b0, b1}, {c0..c3}
//   mma.sync.aligned.m16n8k32.row.col.f32.{e4m3,e5m2}.{e4m3,e5m2}.f32 (same operand shape; FP8)
//     (PTX ISA, "Warp-level matrix multiply-accumulate: mma"). The FP8 form needs sm_89 or newer
//     and PTX ISA 8.4 ("mma with FP8 floating point type requires PTX ISA .version 8.4 or later",
//     as ptxas says): on sm_89 and sm_120 ptxas gives QMMA.16832.F32.E4M3.E4M3; on sm_90/sm_90a and
//     sm_100a, which have no FP8 mma.sync unit, it widens the bytes to f16 (F2FP.F16.E4M3.UNPACK_B)
//     and issues two HMMA.16816.F32 -- exact, since every e4m3/e5m2 value is an f16 value.
#include <fmt/format.h>

#include "codegen/ptx/emitter.h"

namespace kiln::ptx {
using namespace ir;

namespace {
std::string regList(KernelEmitter& e, const std::vector<Reg>& regs) {
  std::string s = "{";
  for (size_t i = 0; i < regs.size(); ++i) s += (i ? ", " : "") + regs[i].str();
  return s + "}";
}
}  // namespace

bool emitLdmatrix(KernelEmitter& e, const Operation& op) {
  SharedAddress src = stageAddress(e, op);
  std::vector<Reg> dst;
  for (unsigned i = 0; i < op.numResults(); ++i) dst.push_back(e.def(op.result(i)));
  bool trans = op.attr("trans")->asBool();
  e.b().inst(fmt::format("ldmatrix.sync.aligned.m8n8.x{}{}.shared.b16 {}, {}", op.numResults(), trans ? ".trans" : "",
                         regList(e, dst), src.operand()));
  return true;
}

namespace {
const char* mmaTypeName(ScalarType t) {
  switch (t) {
    case ScalarType::BF16: return "bf16";
    case ScalarType::F16: return "f16";
    case ScalarType::F8E4M3: return "e4m3";
    case ScalarType::F8E5M2: return "e5m2";
    default: return nullptr;
  }
}
}  // namespace

bool emitMmaSync(KernelEmitter& e, const Operation& op) {
  std::string shape = op.stringAttr("shape");
  const char* at = mmaTypeName(op.operand(0)->type().elem());
  const char* bt = mmaTypeName(op.operand(4)->type().elem());
  if (!at || !bt) return e.fail(op, "unsupported mma.sync operand type");
  if (shape == "m16n8k32") {
    if (!e.target().mmaSyncFp8)
      return e.fail(op, "FP8 mma.sync (m16n8k32 ." + std::string(at) + ") needs sm_89 or newer; " + e.target().name +
                            " has none");
    e.requirePtxIsa(8, 4);
  }
  std::vector<Reg> d, a, b, c;
  for (unsigned i = 0; i < 4; ++i) a.push_back(e.use(op.operand(i)));
  for (unsigned i = 4; i < 6; ++i) b.push_back(e.use(op.operand(i)));
  for (unsigned i = 6; i < 10; ++i) c.push_back(e.use(op.operand(i)));
  for (unsigned i = 0; i < 4; ++i) d.push_back(e.def(op.result(i)));
  e.b().inst(fmt::format("mma.sync.aligned.{}.row.col.f32.{}.{}.f32 {}, {}, {}, {}", shape, at, bt, regList(e, d),
                         regList(e, a), regList(e, b), regList(e, c)));
  return true;
}

}  // namespace kiln::ptx
