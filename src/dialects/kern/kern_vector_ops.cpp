// Verify hooks of the kern ops that move and convert vectors of elements (kern_ops.def): global
// loads and stores of 1, 2 or 4 elements or packed 32-bit words, packing f32 into 16- and 8-bit
// elements and unpacking them, warp shuffles, shared-memory scalars and the grid size.
#include "dialects/kern/kern_ops.h"
#include "dialects/kern/kern_verify.h"

namespace kiln::kern {
using namespace kiln::ir;

namespace {

bool is16Bit(ScalarType e) { return e == ScalarType::BF16 || e == ScalarType::F16; }
bool isPackable(ScalarType e) { return is16Bit(e) || isFp8(e); }

}  // namespace

bool verifyLdGlobal(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  const Type& p = op.operand(0)->type();
  size_t n = op.numResults();
  bool ok = isPtr(p) && op.operand(1)->type().isScalar(ScalarType::I1) && (n == 1 || n == 2 || n == 4);
  Type r = ok ? op.result(0)->type() : Type();
  ok = ok && (r == Type::scalar(p.elem()) || (isPackable(p.elem()) && r == fragType(p.elem())));
  for (unsigned i = 0; ok && i < n; ++i) ok = op.result(i)->type() == r;
  if (!ok)
    return d.error(op.loc()) << "'kern.ld_global' needs (ptr<e>, i1) and produces 1, 2 or 4 values e (or 32-bit words "
                                "frag<e, [n]> of packed 8- or 16-bit elements)";
  const Attribute* other = op.attr("other");
  if (other && !other->isInt() && !other->isFloat())
    return d.error(op.loc()) << "'kern.ld_global' {other} must be a number";
  if (other && kern::isFrag(r) && other->asNumber() != 0)
    return d.error(op.loc()) << "'kern.ld_global' of packed words fills masked-off words with zero bits; {other} must "
                                "be 0";
  return true;
}

bool verifyStGlobal(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  if (op.numOperands() < 3 || !isPtr(op.operand(0)->type()) || !op.operand(1)->type().isScalar(ScalarType::I1))
    return d.error(op.loc()) << "'kern.st_global' needs (ptr<e>, i1 predicate, values...)";
  ScalarType e = op.operand(0)->type().elem();
  const Type& v = op.operand(2)->type();
  size_t n = op.numOperands() - 2;
  bool ok = (v == Type::scalar(e) || (isPackable(e) && v == fragType(e))) && (n == 1 || n == 2 || n == 4);
  for (unsigned i = 2; i < op.numOperands(); ++i) ok = ok && op.operand(i)->type() == v;
  if (!ok)
    return d.error(op.loc()) << "'kern.st_global' stores 1, 2 or 4 values of the pointer's element type "
                             << scalarName(e)
                             << (is16Bit(e) ? " (or " + fragType(e).str() + " pairs)"
                                 : isFp8(e) ? " (or " + fragType(e).str() + " words of four)"
                                            : std::string());
  return true;
}

bool verifyCvtPack(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  const Type& r = op.result()->type();
  size_t n = op.numOperands();
  bool ok = true;
  for (unsigned i = 0; i < n; ++i) ok = ok && op.operand(i)->type().isScalar(ScalarType::F32);
  bool pair = isFrag(r) && is16Bit(r.elem()) && n == 2;
  bool quad = isFrag(r) && isFp8(r.elem()) && n == 4;
  bool single = r.isScalar() && isPackable(r.elem()) && n == 1;
  if (!ok || !(pair || quad || single))
    return d.error(op.loc()) << "'kern.cvt_pack' packs two f32 into frag<bf16, [2]> or frag<f16, [2]>, four into "
                                "frag<f8e4m3|f8e5m2, [4]>, or one into a bf16, f16 or FP8 element";
  return true;
}

bool verifyCvtUnpack(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  const Type& x = op.operand(0)->type();
  size_t want = isFrag(x) ? size_t(x.shape()[0].value) : x.isScalar() && isPackable(x.elem()) ? 1 : 0;
  bool ok = want != 0 && op.numResults() == want;
  for (unsigned i = 0; ok && i < op.numResults(); ++i) ok = op.result(i)->type().isScalar(ScalarType::F32);
  if (!ok)
    return d.error(op.loc()) << "'kern.cvt_unpack' widens frag<bf16|f16, [2]> into two f32, frag<f8e4m3|f8e5m2, [4]> "
                                "into four, or one bf16, f16 or FP8 element into one";
  return true;
}

bool verifyGridDim(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  std::string dim = op.stringAttr("dim");
  if (dim != "x" && dim != "y" && dim != "z")
    return d.error(op.loc()) << "'kern.grid_dim' needs {dim = \"x\"|\"y\"|\"z\"}, got \"" << dim << "\"";
  if (!op.result()->type().isScalar(ScalarType::I32)) return d.error(op.loc()) << "'kern.grid_dim' produces i32";
  return true;
}

bool verifyShflXor(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  const Type& v = op.operand(0)->type();
  if (!(v.isScalar(ScalarType::F32) || v.isScalar(ScalarType::I32)) || op.result()->type() != v)
    return d.error(op.loc()) << "'kern.shfl_xor' exchanges an f32 or i32 value and produces its type";
  int64_t k = op.intAttr("offset", 0);
  if (k != 1 && k != 2 && k != 4 && k != 8 && k != 16)
    return d.error(op.loc()) << "'kern.shfl_xor' needs {offset = 1|2|4|8|16}: the lane distance of the butterfly";
  return true;
}

bool verifyLdShared(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  auto layout = stageAddress(op, d);
  if (!layout) return false;
  if (op.result()->type() != Type::scalar(layout->elem))
    return d.error(op.loc()) << "'kern.ld_shared' loads one " << scalarName(layout->elem) << " from this buffer, not "
                             << op.result()->type().str();
  return true;
}

}  // namespace kiln::kern
