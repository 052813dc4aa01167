// Emitters for structured control flow (scf.for, scf.if) as PTX branches.
//
// scf.for(lb, ub, step, inits...) with body args (iv, carried...):
//       mov iv, lb;  mov carried_i, init_i
//       setp.ge iv, ub -> skip                     (zero-trip loops run no iteration)
//   head:
//       .pragma "nounroll"                          (one body per iteration in SASS: predictable
//       body                                        code size and countable instruction mix)
//       mov carried_i, yielded_i                    (through temporaries when a yielded value is
//       add iv, iv, step                             itself a carried register: a parallel copy)
//       setp.lt iv, ub -> head
//   skip:
// The loop's results are the carried registers.
#include <fmt/format.h>

#include "codegen/ptx/emitter.h"

namespace kiln::ptx {
using namespace ir;

namespace {

// Moves `values` into `dests` as a parallel copy.
void parallelCopy(KernelEmitter& e, const std::vector<Reg>& dests, const std::vector<Value*>& values,
                  const std::vector<Type>& types) {
  PtxBuilder& b = e.b();
  std::vector<Reg> srcs;
  bool clash = false;
  for (size_t i = 0; i < values.size(); ++i) {
    srcs.push_back(e.use(values[i]));
    for (size_t j = 0; j < dests.size(); ++j)
      if (j != i && srcs[i].cls == dests[j].cls && srcs[i].id == dests[j].id) clash = true;
  }
  if (clash) {
    for (size_t i = 0; i < srcs.size(); ++i) {
      Reg t = b.reg(srcs[i].cls);
      b.inst(fmt::format("mov.{} {}, {}", moveType(types[i]), t.str(), srcs[i].str()));
      srcs[i] = t;
    }
  }
  for (size_t i = 0; i < srcs.size(); ++i) {
    // A kern.undef value has no content to copy: the destination may hold anything.
    const Operation* def = values[i]->definingOp();
    if (def && def->is("kern.undef")) continue;
    if (srcs[i].cls != dests[i].cls || srcs[i].id != dests[i].id)
      b.inst(fmt::format("mov.{} {}, {}", moveType(types[i]), dests[i].str(), srcs[i].str()));
  }
}

}  // namespace

// kern.undef: a register that no instruction writes (its uses must not depend on its content).
bool emitUndef(KernelEmitter& e, const Operation& op) {
  e.def(op.result());
  return true;
}

bool emitFor(KernelEmitter& e, const Operation& op) {
  PtxBuilder& b = e.b();
  const Block& body = op.body();
  const Type& ivType = op.operand(0)->type();
  const char* w = ivType.isScalar(ScalarType::I64) ? "s64" : "s32";
  Reg iv = e.def(body.argument(0));
  b.inst(fmt::format("mov.{} {}, {}", moveType(ivType), iv.str(), e.use(op.operand(0)).str()));
  std::vector<Reg> carried;
  std::vector<Value*> inits;
  std::vector<Type> types;
  for (unsigned i = 1; i < body.numArguments(); ++i) {
    carried.push_back(e.def(body.argument(i)));
    inits.push_back(op.operand(2 + i));
    types.push_back(body.argument(i)->type());
    e.bind(op.result(i - 1), carried.back());
  }
  parallelCopy(e, carried, inits, types);
  std::string head = b.label(), skip = b.label();
  Reg p = b.reg(RegClass::Pred);
  b.inst(fmt::format("setp.ge.{} {}, {}, {}", w, p.str(), iv.str(), e.use(op.operand(1)).str()));
  b.instIf(p, "bra.uni " + skip);
  b.placeLabel(head);
  b.pragmaNounroll();
  if (!e.emitBlock(body)) return false;
  const Operation* y = body.back();
  parallelCopy(e, carried, y->operands(), types);
  b.inst(fmt::format("add.{} {}, {}, {}", w, iv.str(), iv.str(), e.use(op.operand(2)).str()));
  Reg q = b.reg(RegClass::Pred);
  b.inst(fmt::format("setp.lt.{} {}, {}, {}", w, q.str(), iv.str(), e.use(op.operand(1)).str()));
  b.instIf(q, "bra.uni " + head);
  b.placeLabel(skip);
  return true;
}

bool emitIf(KernelEmitter& e, const Operation& op) {
  PtxBuilder& b = e.b();
  std::vector<Reg> results;
  std::vector<Type> types;
  for (unsigned i = 0; i < op.numResults(); ++i) {
    results.push_back(e.def(op.result(i)));
    types.push_back(op.result(i)->type());
  }
  std::string elseL = b.label(), endL = b.label();
  b.instIf(e.use(op.operand(0)), "bra " + elseL, /*negate=*/true);
  if (!e.emitBlock(op.body(0))) return false;
  parallelCopy(e, results, op.body(0).back()->operands(), types);
  b.inst("bra " + endL);
  b.placeLabel(elseL);
  if (!e.emitBlock(op.body(1))) return false;
  parallelCopy(e, results, op.body(1).back()->operands(), types);
  b.placeLabel(endL);
  return true;
}

}  // namespace kiln::ptx
