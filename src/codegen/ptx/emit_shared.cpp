// Emitters for shared memory: ring allocation, swizzled offsets, cp.async, groups, barriers.
//
// Addresses are 32-bit shared-window addresses (`mov.u32 %r, kiln_smem` gives the array's), used
// with the .shared state space (PTX ISA, "Addresses as operands"). The swizzle is the XOR pattern
// of swizzle.h, applied to byte offsets within a stage.
//   cp.async.cg.shared.global [dst], [src], 16, src_size   (PTX ISA, "cp.async": copies src_size
//   bytes and fills the rest of the 16 with zeros; .cg caches in L2 only, the 16-byte form;
//   cp.async.ca ... 8 or 4 for rows aligned to less, both addresses aligned to the size)
//   cp.async.commit_group / cp.async.wait_group N           (PTX ISA, "cp.async.commit_group",
//   "cp.async.wait_group")
//   bar.sync 0                                              (PTX ISA, "bar.sync")
#include <fmt/format.h>

#include "codegen/ptx/emitter.h"
#include "dialects/kern/kern_ops.h"

namespace kiln::ptx {
using namespace ir;

namespace {

// r = swizzle(row * rowBytes + col * elemBytes).
Reg swizzledOffset(KernelEmitter& e, const kern::SmemLayout& l, Reg row, Reg col) {
  PtxBuilder& b = e.b();
  Reg o = b.reg(RegClass::B32);
  b.inst(fmt::format("mul.lo.s32 {}, {}, {}", o.str(), row.str(), l.rowBytes()));
  b.inst(fmt::format("mad.lo.s32 {}, {}, {}, {}", o.str(), col.str(), l.elemBytes(), o.str()));
  if (l.swizzle.none()) return o;
  Reg m = b.reg(RegClass::B32), r = b.reg(RegClass::B32);
  b.inst(fmt::format("bfe.u32 {}, {}, {}, {}", m.str(), o.str(), l.swizzle.base + l.swizzle.shift, l.swizzle.bits));
  b.inst(fmt::format("shl.b32 {}, {}, {}", m.str(), m.str(), l.swizzle.base));
  b.inst(fmt::format("xor.b32 {}, {}, {}", r.str(), o.str(), m.str()));
  return r;
}

// d = a * k + c for compile-time k, c (skipping what is zero).
Reg affine(PtxBuilder& b, Reg a, int64_t k, int64_t c) {
  Reg r = b.reg(RegClass::B32);
  if (k == 0) b.inst(fmt::format("mov.b32 {}, {}", r.str(), c));
  else b.inst(fmt::format("mad.lo.s32 {}, {}, {}, {}", r.str(), a.str(), k, c));
  return r;
}

}  // namespace

SharedAddress stageAddress(KernelEmitter& e, const Operation& op) {
  PtxBuilder& b = e.b();
  auto l = *kern::smemLayout(op.operand(0)->type());
  const Operation& offOp = *op.operand(2)->definingOp();
  int quads = op.is("kern.ldmatrix") ? int(op.intAttr("num", 4)) : 4;
  auto d = *displace(l.swizzle, l.rowBytes(), l.elemBytes(), op.intAttr("row", 0), op.intAttr("col", 0),
                     kern::runtimeChunks(offOp, quads, l.elemBytes()), nullptr,
                     kern::withinChunkDisplacement(op));
  Reg a = b.reg(RegClass::B32);
  b.inst(fmt::format("mad.lo.s32 {}, {}, {}, {}", a.str(), e.use(op.operand(1)).str(), l.stageBytes(),
                     e.use(op.operand(0)).str()));
  Reg off = e.use(op.operand(2));
  if (d.xorBytes != 0) {
    Reg t = b.reg(RegClass::B32);
    b.inst(fmt::format("xor.b32 {}, {}, {}", t.str(), off.str(), d.xorBytes));
    off = t;
  }
  Reg r = b.reg(RegClass::B32);
  b.inst(fmt::format("add.s32 {}, {}, {}", r.str(), a.str(), off.str()));
  return SharedAddress{r, d.addBytes};
}

bool emitSmemAlloc(KernelEmitter& e, const Operation& op) {
  Reg r = e.def(op.result());
  int64_t offset = op.intAttr("offset", 0);
  if (offset == 0) {
    e.b().inst(fmt::format("mov.u32 {}, {}", r.str(), kSmemSymbol));
  } else {
    Reg t = e.b().reg(RegClass::B32);
    e.b().inst(fmt::format("mov.u32 {}, {}", t.str(), kSmemSymbol));
    e.b().inst(fmt::format("add.s32 {}, {}, {}", r.str(), t.str(), offset));
  }
  return true;
}

bool emitSmemOffset(KernelEmitter& e, const Operation& op) {
  auto l = *kern::smemLayout(op.operand(0)->type());
  Reg r = swizzledOffset(e, l, e.use(op.operand(1)), e.use(op.operand(2)));
  e.bind(op.result(), r);
  return true;
}

bool emitLdsmOffset(KernelEmitter& e, const Operation& op) {
  PtxBuilder& b = e.b();
  auto l = *kern::smemLayout(op.operand(0)->type());
  auto info = *kern::ldsmOffsetInfo(op);
  Reg lane = b.reg(RegClass::B32), q0 = b.reg(RegClass::B32), q1 = b.reg(RegClass::B32), r8 = b.reg(RegClass::B32);
  b.inst(fmt::format("mov.u32 {}, %laneid", lane.str()));
  b.inst(fmt::format("bfe.u32 {}, {}, 3, 1", q0.str(), lane.str()));
  b.inst(fmt::format("bfe.u32 {}, {}, 4, 1", q1.str(), lane.str()));
  b.inst(fmt::format("and.b32 {}, {}, 7", r8.str(), lane.str()));
  // row = wr * sr + br + q0 * quads[1].r + q1 * quads[2].r + lane % 8
  Reg row = affine(b, e.use(op.operand(1)), info.stride[0], info.base[0]);
  b.inst(fmt::format("add.s32 {}, {}, {}", row.str(), row.str(), r8.str()));
  if (info.quads[1][0]) b.inst(fmt::format("mad.lo.s32 {}, {}, {}, {}", row.str(), q0.str(), info.quads[1][0], row.str()));
  if (info.quads[2][0]) b.inst(fmt::format("mad.lo.s32 {}, {}, {}, {}", row.str(), q1.str(), info.quads[2][0], row.str()));
  // col = wc * sc + bc + q0 * quads[1].c + q1 * quads[2].c
  Reg col = affine(b, e.use(op.operand(2)), info.stride[1], info.base[1]);
  if (info.quads[1][1]) b.inst(fmt::format("mad.lo.s32 {}, {}, {}, {}", col.str(), q0.str(), info.quads[1][1], col.str()));
  if (info.quads[2][1]) b.inst(fmt::format("mad.lo.s32 {}, {}, {}, {}", col.str(), q1.str(), info.quads[2][1], col.str()));
  e.bind(op.result(), swizzledOffset(e, l, row, col));
  return true;
}

bool emitCpAsync(KernelEmitter& e, const Operation& op) {
  SharedAddress dst = stageAddress(e, op);
  // 16 bytes go through L2 only (.cg); 4 and 8, which .cg does not take, through L1 (.ca).
  const int64_t bytes = op.intAttr("bytes", 16);
  e.b().inst(fmt::format("cp.async.{}.shared.global {}, [{}], {}, {}", bytes == 16 ? "cg" : "ca", dst.operand(),
                         e.use(op.operand(3)).str(), bytes, e.use(op.operand(4)).str()));
  return true;
}

bool emitCpAsyncCommit(KernelEmitter& e, const Operation&) {
  e.b().inst("cp.async.commit_group");
  return true;
}

bool emitCpAsyncWait(KernelEmitter& e, const Operation& op) {
  e.b().inst(fmt::format("cp.async.wait_group {}", op.intAttr("pending", 0)));
  return true;
}

bool emitBarrier(KernelEmitter& e, const Operation&) {
  e.b().inst("bar.sync 0");
  return true;
}

// bar.sync id, threads (PTX ISA, "bar.sync": a named barrier for a subset of the CTA's warps). It
// is barrier.sync.aligned: every thread meeting at one generation executes this same instruction.
bool emitNamedBarrier(KernelEmitter& e, const Operation& op) {
  e.b().inst(fmt::format("bar.sync {}, {}", e.use(op.operand(0)).str(), op.intAttr("threads", 0)));
  return true;
}

// kern.st_shared / kern.stmatrix address a stage like cp.async does (stageAddress above): the
// per-thread swizzled offset comes from one kern.smem_offset, and each store adds its compile-time
// displacement as a constant XOR and an immediate, so a tile's stores share a few address registers.
bool emitStShared(KernelEmitter& e, const Operation& op) {
  auto l = *kern::smemLayout(op.operand(0)->type());
  SharedAddress a = stageAddress(e, op);
  if (op.numOperands() == 5) {  // two 32-bit elements, 8 aligned bytes (the verifier checks the displacement)
    e.b().inst(fmt::format("st.shared.v2.{} {}, {{{}, {}}}", l.elem == ScalarType::F32 ? "f32" : "b32", a.operand(),
                           e.use(op.operand(3)).str(), e.use(op.operand(4)).str()));
    return true;
  }
  const char* type = kern::isFrag(op.operand(3)->type()) || l.elemBytes() == 4 ? "b32" : l.elemBytes() == 2 ? "b16" : "b8";
  e.b().inst(fmt::format("st.shared.{} {}, {}", type, a.operand(), e.use(op.operand(3)).str()));
  return true;
}

bool emitLdShared(KernelEmitter& e, const Operation& op) {
  auto l = *kern::smemLayout(op.operand(0)->type());
  SharedAddress a = stageAddress(e, op);
  const char* type = l.elemBytes() == 4 ? (l.elem == ScalarType::F32 ? "f32" : "b32") : l.elemBytes() == 2 ? "b16" : "u8";
  e.b().inst(fmt::format("ld.shared.{} {}, {}", type, e.def(op.result()).str(), a.operand()));
  return true;
}

// st.shared.v4.b32: four 32-bit values at a 16-byte aligned address (the verifier checks the layout).
bool emitStSharedV4(KernelEmitter& e, const Operation& op) {
  SharedAddress a = stageAddress(e, op);
  e.b().inst(fmt::format("st.shared.v4.b32 {}, {{{}, {}, {}, {}}}", a.operand(), e.use(op.operand(3)).str(),
                         e.use(op.operand(4)).str(), e.use(op.operand(5)).str(), e.use(op.operand(6)).str()));
  return true;
}

// stmatrix .x2 / .x4 (PTX ISA 7.8): each lane's address is the row segment at its (off, row, col);
// {trans}: .trans, each matrix stored transposed.
bool emitStmatrix(KernelEmitter& e, const Operation& op) {
  e.requirePtxIsa(7, 8);
  SharedAddress a = stageAddress(e, op);
  const Attribute* trans = op.attr("trans");
  std::string values;
  for (unsigned i = 3; i < op.numOperands(); ++i) values += (i > 3 ? ", " : "") + e.use(op.operand(i)).str();
  e.b().inst(fmt::format("stmatrix.sync.aligned.m8n8.x{}{}.shared.b16 {}, {{{}}}", op.numOperands() - 3,
                         trans && trans->asBool() ? ".trans" : "", a.operand(), values));
  return true;
}

}  // namespace kiln::ptx
