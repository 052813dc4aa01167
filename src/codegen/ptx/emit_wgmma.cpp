// Emitters for wgmma (semantics in dialects/kern/kern_ops.h; descriptor contract in
// target/wgmma_desc.h):
//   kern.wgmma_desc  ->  addr = stage(slot) + (r + row) * 128 + col * sizeof(e);
//                        desc = ((addr & 0x3FFFF) >> 4) | descriptorConstant(lbo, sbo),
//                        built as field(buf) + (slot * stageBytes + ... ) / 16 (see below)
//   kern.wgmma       ->  wgmma.mma_async.sync.aligned.m64nNk16.f32.{bf16|f16}.{bf16|f16}
//                            {d...}, descA, descB, scale_d, 1, 1, trans_a, trans_b
//                        FP8: wgmma.mma_async.sync.aligned.m64nNk32.f32.{e4m3|e5m2}.{e4m3|e5m2}
//                            {d...}, descA, descB, scale_d, 1, 1   (both K-major)
//                        (PTX ISA, "wgmma.mma_async": d is read and written, so the results
//                        take the accumulator operands' registers)
//   kern.wgmma_fence / commit / wait  ->  wgmma.fence / commit_group / wait_group N .sync.aligned
#include <fmt/format.h>

#include "codegen/ptx/emitter.h"
#include "dialects/kern/kern_ops.h"
#include "target/wgmma_desc.h"

namespace kiln::ptx {
using namespace ir;

bool emitWgmmaDesc(KernelEmitter& e, const Operation& op) {
  PtxBuilder& b = e.b();
  auto l = *kern::smemLayout(op.operand(0)->type());
  int64_t disp = op.intAttr("row", 0) * l.rowBytes() + op.intAttr("col", 0) * l.elemBytes();
  uint64_t constant = wgmma::descriptorConstant(op.intAttr("lbo", 16), op.intAttr("sbo", 1024));
  const Operation* kernel = op.enclosing("kern.kernel");
  int64_t smem = kernel ? kernel->intAttr("smem_bytes", -1) : -1;
  Reg d = e.def(op.result());
  // The address field is bits 4-17 of the shared address. A CTA's window holds at most 227 KB (and
  // 1 KB reserved before it), so the buffer's address within it plus any offset into the buffer stays
  // below 2^18: the field of the sum is the sum of the fields. Built that way, each term in units of
  // 16 bytes, the buffer's field is loop-invariant and the stage's is shared by a K step's wgmmas,
  // which then differ by one immediate add (ptxas: one UIADD3 per operand per wgmma, as cuBLASLt's
  // kernels advance their descriptors, where the masked form took five).
  bool fieldsAdd = smem >= 0 && smem + 1024 <= (int64_t(1) << 18) && l.stageBytes() % 16 == 0 &&
                   l.rowBytes() % 16 == 0 && disp % 16 == 0;
  if (fieldsAdd) {
    Reg a = b.reg(RegClass::B32);
    b.inst(fmt::format("bfe.u32 {}, {}, 4, 14", a.str(), e.use(op.operand(0)).str()));
    b.inst(fmt::format("mad.lo.s32 {}, {}, {}, {}", a.str(), e.use(op.operand(1)).str(), l.stageBytes() / 16, a.str()));
    b.inst(fmt::format("mad.lo.s32 {}, {}, {}, {}", a.str(), e.use(op.operand(2)).str(), l.rowBytes() / 16, a.str()));
    b.inst(fmt::format("add.s32 {}, {}, {:#x}", a.str(), a.str(), uint32_t(constant) + disp / 16));
    b.inst(fmt::format("mov.b64 {}, {{{}, {:#x}}}", d.str(), a.str(), uint32_t(constant >> 32)));
    return true;
  }
  Reg a = b.reg(RegClass::B32);
  b.inst(fmt::format("mad.lo.s32 {}, {}, {}, {}", a.str(), e.use(op.operand(1)).str(), l.stageBytes(),
                     e.use(op.operand(0)).str()));
  b.inst(fmt::format("mad.lo.s32 {}, {}, {}, {}", a.str(), e.use(op.operand(2)).str(), l.rowBytes(), a.str()));
  if (disp) b.inst(fmt::format("add.s32 {}, {}, {}", a.str(), a.str(), disp));
  b.inst(fmt::format("bfe.u32 {}, {}, 4, 14", a.str(), a.str()));
  b.inst(fmt::format("cvt.u64.u32 {}, {}", d.str(), a.str()));
  b.inst(fmt::format("or.b64 {}, {}, {:#x}", d.str(), d.str(), constant));
  return true;
}

bool emitWgmma(KernelEmitter& e, const Operation& op) {
  // The request is numerics (the program asked for f32 sums), so it never becomes the fast form.
  if (op.attr("accumulate"))
    return e.fail(op, "{accumulate = \"" + op.stringAttr("accumulate") +
                          "\"} asks for FP8 sums promoted to f32 registers, which sm90-promote-fp8 writes into the K "
                          "loop; run that pass first (the sm90 pipeline does), on a K loop of the shape it rewrites");
  auto shape = op.intsAttr("shape");
  std::string ab = op.stringAttr("ab");
  std::string d = "{";
  for (unsigned i = 0; i < op.numResults(); ++i) {
    Reg r = e.use(op.operand(3 + i));
    e.bind(op.result(i), r);
    d += (i ? ", " : "") + r.str();
  }
  d += "}";
  std::string descs = fmt::format("{}, {}, {}, {}, 1, 1", d, e.use(op.operand(1)).str(), e.use(op.operand(2)).str(),
                                  e.use(op.operand(0)).str());
  if (ab == "f8e4m3" || ab == "f8e5m2") {
    // The 8-bit forms name each operand's format (.e4m3 / .e5m2, without the f8 prefix) and take
    // no transpose immediates: both operands are K-major.
    const Attribute* bt = op.attr("b");
    auto ptxName = [](const std::string& t) { return t == "f8e4m3" ? "e4m3" : "e5m2"; };
    e.b().inst(fmt::format("wgmma.mma_async.sync.aligned.m64n{}k32.f32.{}.{} {}", shape[1], ptxName(ab),
                           ptxName(bt ? bt->asString() : ab), descs));
    return true;
  }
  const Attribute* transA = op.attr("trans_a");
  e.b().inst(fmt::format("wgmma.mma_async.sync.aligned.m64n{}k16.f32.{}.{} {}, {}, {}", shape[1], ab, ab, descs,
                         transA && transA->asBool() ? 1 : 0, op.attr("trans_b")->asBool() ? 1 : 0));
  return true;
}

bool emitWgmmaFence(KernelEmitter& e, const Operation&) {
  e.b().inst("wgmma.fence.sync.aligned");
  return true;
}

bool emitWgmmaCommit(KernelEmitter& e, const Operation&) {
  e.b().inst("wgmma.commit_group.sync.aligned");
  return true;
}

bool emitWgmmaWait(KernelEmitter& e, const Operation& op) {
  e.b().inst(fmt::format("wgmma.wait_group.sync.aligned {}", op.intAttr("pending", 0)));
  return true;
}

}  // namespace kiln::ptx
