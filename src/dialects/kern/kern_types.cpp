// The kern dialect's types and layouts (declared in kern_ops.h): which types are pointers and
// fragments, the shared-memory ring layout of an smem<...> type, and what ldmatrix offsets cover.
// Kept apart from the verify hooks (kern_dialect.cpp), which use them.
#include <string>

#include "dialects/kern/int_range.h"
#include "dialects/kern/kern_builder.h"
#include "dialects/kern/kern_ops.h"

namespace kiln::kern {
using namespace kiln::ir;

bool isPtr(const Type& t) { return t.isKind("ptr") && t.hasElem() && !t.hasShape() && t.params().empty(); }
bool isFrag(const Type& t) {
  if (!t.isKind("frag") || !t.hasElem() || !t.hasShape()) return false;
  int bits = bitWidth(t.elem());
  return (bits == 8 || bits == 16) && t.shape() == Shape{Extent::of(32 / bits)};
}

std::optional<SmemLayout> smemLayout(const Type& t, std::string* why) {
  auto fail = [&](std::string m) -> std::optional<SmemLayout> {
    if (why) *why = std::move(m);
    return std::nullopt;
  };
  if (!t.isKind("smem") || !t.hasElem() || !t.hasShape() || t.rank() != 3)
    return fail("expected smem<elem, [stages, rows, cols], swizzle = [B, M, S]>, got " + t.str());
  SmemLayout l;
  l.elem = t.elem();
  for (const auto& e : t.shape())
    if (e.isSymbolic() || e.value <= 0) return fail("smem extents must be positive constants, got " + shapeStr(t.shape()));
  l.stages = t.shape()[0].value;
  l.rows = t.shape()[1].value;
  l.cols = t.shape()[2].value;
  if (l.elemBytes() == 0) return fail("smem elements must be whole bytes, not " + std::string(scalarName(l.elem)));
  if (const Attribute* s = t.param("swizzle")) {
    auto sw = Swizzle::fromAttr(*s);
    if (!sw) return fail("smem swizzle must be [B, 4, S] with B <= 3 and B <= S, got " + s->str());
    l.swizzle = *sw;
  } else {
    l.swizzle = Swizzle{0, 4, 3};
  }
  int64_t rb = l.rowBytes();
  if (!l.swizzle.none() && (rb < 16 || (rb & (rb - 1)) != 0))
    return fail("a swizzled smem row must be a power of two of at least 16 bytes, got " + std::to_string(rb) + " bytes");
  if (l.stageBytes() % 128 != 0)
    return fail("an smem stage must be a multiple of 128 bytes, got " + std::to_string(l.stageBytes()));
  return l;
}

std::optional<LdsmOffsetInfo> ldsmOffsetInfo(const Operation& op) {
  auto q = op.intsAttr("quads"), stride = op.intsAttr("stride"), base = op.intsAttr("base");
  if (!op.is("kern.ldsm_offset") || q.size() != 8 || stride.size() != 2 || base.size() != 2) return std::nullopt;
  LdsmOffsetInfo info;
  for (int i = 0; i < 4; ++i) {
    info.quads[i][0] = q[2 * i];
    info.quads[i][1] = q[2 * i + 1];
  }
  for (int i = 0; i < 2; ++i) {
    info.stride[i] = stride[i];
    info.base[i] = base[i];
  }
  return info;
}

uint8_t runtimeChunks(const Operation& offsetOp, int numQuads, int elemBytes) {
  int64_t perChunk = 16 / elemBytes;
  if (offsetOp.is("kern.smem_offset")) {
    // The column operand's interval (int_range.h), when it spans few enough values to list.
    IntRange cols = IntRangeAnalysis().of(offsetOp.operand(2));
    if (cols.lo < 0 || cols.hi - cols.lo > 64) return 0xff;
    uint8_t set = 0;
    for (int64_t col = cols.lo; col <= cols.hi; ++col) set |= uint8_t(1u << ((col / perChunk) % 8));
    return set;
  }
  auto info = ldsmOffsetInfo(offsetOp);
  if (!info) return 0xff;
  uint8_t set = 0;
  // wc * stride cycles through at most 8 residues of the chunk index modulo 8.
  for (int64_t wc = 0; wc < 8; ++wc)
    for (int q = 0; q < numQuads && q < 4; ++q) {
      int64_t col = wc * info->stride[1] + info->base[1] + info->quads[q][1];
      set |= uint8_t(1u << ((col / perChunk) % 8));
    }
  return set;
}

namespace {
// Whether an i32 value is always a multiple of `k`: a constant multiple, a product with one, or a
// sum of two such (what the strategies build a chunk's column from).
bool multipleOf(const Value* v, int64_t k, int depth = 0) {
  if (depth > 8) return false;
  if (auto c = KernBuilder::intConstant(v)) return *c % k == 0;
  const Operation* d = v->definingOp();
  if (!d || d->numOperands() != 2) return false;
  if (d->is("arith.muli")) return multipleOf(d->operand(0), k, depth + 1) || multipleOf(d->operand(1), k, depth + 1);
  if (d->is("arith.addi")) return multipleOf(d->operand(0), k, depth + 1) && multipleOf(d->operand(1), k, depth + 1);
  return false;
}
}  // namespace

bool runtimeChunkAligned(const Operation& offsetOp, int elemBytes) {
  return offsetOp.is("kern.smem_offset") && multipleOf(offsetOp.operand(2), 16 / elemBytes);
}

bool withinChunkDisplacement(const Operation& op) {
  if (!op.is("kern.cp_async") && !op.is("kern.st_shared") && !op.is("kern.ld_shared")) return false;
  auto layout = smemLayout(op.operand(0)->type());
  const Operation* off = op.operand(2)->definingOp();
  return layout && off && runtimeChunkAligned(*off, int(layout->elemBytes()));
}

Type smemType(ScalarType elem, int64_t stages, int64_t rows, int64_t cols, const Swizzle& s) {
  std::vector<NamedAttr> params;
  if (!s.none()) params.push_back({"swizzle", s.toAttr()});
  return Type::make("smem", elem, Shape{Extent::of(stages), Extent::of(rows), Extent::of(cols)}, std::move(params));
}

}  // namespace kiln::kern
