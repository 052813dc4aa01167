// Emitters for the tensor-core path: ldmatrix and mma.sync (fragment layouts in
// schedule/fragment_layout.h).
//   ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16 {d...}, [addr]
//     (PTX ISA, "Warp-level matrix load instruction: ldmatrix")
//   mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}.{bf16,f16}.f32 {d0..d3}, {a0..a3}, {b0, b1}, {c0..c3}
//     (PTX ISA, "Warp-level matrix multiply-accumulate: mma")
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

bool emitMmaSync(KernelEmitter& e, const Operation& op) {
  const char* ab = op.operand(0)->type().elem() == ScalarType::BF16 ? "bf16" : "f16";
  std::vector<Reg> d, a, b, c;
  for (unsigned i = 0; i < 4; ++i) a.push_back(e.use(op.operand(i)));
  for (unsigned i = 4; i < 6; ++i) b.push_back(e.use(op.operand(i)));
  for (unsigned i = 6; i < 10; ++i) c.push_back(e.use(op.operand(i)));
  for (unsigned i = 0; i < 4; ++i) d.push_back(e.def(op.result(i)));
  e.b().inst(fmt::format("mma.sync.aligned.m16n8k16.row.col.f32.{}.{}.f32 {}, {}, {}, {}", ab, ab, regList(e, d),
                         regList(e, a), regList(e, b), regList(e, c)));
  return true;
}

}  // namespace kiln::ptx
