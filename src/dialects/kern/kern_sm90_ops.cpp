// Verify hooks of the sm_90a kern ops: roles, the persistent tile loop, setmaxnreg, mbarriers, TMA
// and wgmma (table in kern_ops.def, semantics in kern_ops.h). The hardware contracts behind the
// rules are cited where they are checked.
#include <fmt/format.h>

#include <algorithm>

#include "dialects/kern/kern_ops.h"
#include "dialects/kern/kern_verify.h"
#include "kiln/ir/op_registry.h"

namespace kiln::kern {
using namespace kiln::ir;

namespace {

bool isI32(const Type& t) { return t.isScalar(ScalarType::I32); }

// (bars, i) operands shared by the mbarrier ops.
bool barrierOperands(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  if (mbarrierCount(op.operand(0)->type()) == 0 || !isI32(op.operand(1)->type()))
    return d.error(op.loc()) << "'" << op.name() << "' needs (mbarrier<[n]> ring, i32 index)";
  return true;
}

// A 128B-swizzled ring whose stages start on 1024-byte boundaries: the layout TMA's
// CU_TENSOR_MAP_SWIZZLE_128B writes and wgmma's 128-byte swizzle mode reads (PTX ISA, "Matrix
// Descriptor Format": the pattern repeats every 1024 bytes; a stage starting on that boundary
// needs no base offset).
std::optional<SmemLayout> swizzled128(const Operation& op, const Value* buf, DiagnosticEngine& d) {
  auto layout = smemLayout(buf->type());
  const Operation* alloc = buf->definingOp();
  bool ok = layout && layout->rowBytes() == 128 && layout->swizzle.bits == 3 && layout->swizzle.base == 4 &&
            layout->swizzle.shift == 3 && layout->stageBytes() % 1024 == 0 && alloc &&
            alloc->is("kern.smem_alloc") && alloc->intAttr("offset", 1) % 1024 == 0;
  if (!ok) {
    d.error(op.loc()) << "'" << op.name()
                      << "' needs a kern.smem_alloc ring with 128-byte rows, swizzle = [3, 4, 3] and stages on "
                         "1024-byte boundaries (the 128B swizzle atom)";
    return std::nullopt;
  }
  return layout;
}

}  // namespace

bool verifyInKernel(const Operation& op, DiagnosticEngine& d) { return requireInKernel(op, d); }

// ---- roles and persistence ----

bool verifyRole(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  std::string name = op.stringAttr("name");
  if (name != "producer" && name != "consumer" && name != "epilogue")
    return d.error(op.loc()) << "'kern.role' needs {name = \"producer\"|\"consumer\"|\"epilogue\"}, got \"" << name
                             << "\"";
  auto wg = op.intsAttr("warpgroups");
  int64_t threads = op.enclosing("kern.kernel")->intAttr("threads", 0);
  if (wg.size() != 2 || wg[0] < 0 || wg[1] < 1 || (wg[0] + wg[1]) * 128 > threads)
    return d.error(op.loc()) << "'kern.role' needs {warpgroups = [first, count]}: whole warpgroups of 128 threads "
                                "within the kernel's "
                             << threads << " threads";
  if (op.enclosing("kern.role"))
    return d.error(op.loc()) << "'kern.role' regions do not nest";
  // The role's dispatch broadcasts lane 0's thread index (emitRole), which every lane must reach.
  if (op.enclosing("scf.if"))
    return d.error(op.loc()) << "'kern.role' is entered by whole warps (its dispatch is broadcast from lane 0); move "
                                "it out of the enclosing 'scf.if'";
  return true;
}

bool verifyTileLoop(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  if (op.attr("ragged")) return verifyTileLoopRagged(op, d);
  unsigned operands = op.attr("stream_k") ? 4 : 3;
  if (op.numOperands() != operands)
    return d.error(op.loc()) << "'kern.tile_loop' takes (M, N, batches)"
                             << (operands == 4 ? ", and with {stream_k} ktiles (K steps per tile)," : "")
                             << " as i32; got " << op.numOperands() << " operands";
  for (unsigned i = 0; i < operands; ++i)
    if (!isI32(op.operand(i)->type()))
      return d.error(op.loc()) << "'kern.tile_loop' takes (M, N, batches" << (operands == 4 ? ", ktiles" : "")
                               << ") as i32";
  const Block& body = op.body();
  if (!verifyTileLoopSplits(op, d)) return false;
  for (unsigned i = 0; i < body.numArguments(); ++i)
    if (!isI32(body.argument(i)->type()))
      return d.error(op.loc()) << "'kern.tile_loop' body arguments are i32";
  auto tile = op.intsAttr("tile");
  if (tile.size() != 2 || tile[0] <= 0 || tile[1] <= 0)
    return d.error(op.loc()) << "'kern.tile_loop' needs {tile = [bm, bn]} with positive sizes";
  std::string raster = op.stringAttr("raster");
  if (raster != "row" && raster != "grouped")
    return d.error(op.loc()) << "'kern.tile_loop' needs {raster = \"row\"|\"grouped\"}, got \"" << raster << "\"";
  if (raster == "grouped" && op.intAttr("group_m", 0) < 1)
    return d.error(op.loc()) << "'kern.tile_loop' with raster = \"grouped\" needs {group_m = G} with G >= 1";
  return verifyTileLoopCluster(op, d);
}

bool verifySetMaxNReg(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  std::string action = op.stringAttr("action");
  int64_t regs = op.intAttr("regs", 0);
  if (action != "inc" && action != "dec")
    return d.error(op.loc()) << "'kern.setmaxnreg' needs {action = \"inc\"|\"dec\"}, got \"" << action << "\"";
  // PTX ISA, "setmaxnreg": imm-reg-count is in 24..256 and a multiple of 8.
  if (regs < 24 || regs > 256 || regs % 8 != 0)
    return d.error(op.loc()) << "'kern.setmaxnreg' needs {regs = N} with N a multiple of 8 from 24 to 256, got "
                             << regs;
  if (!op.enclosing("kern.role"))
    return d.error(op.loc()) << "'kern.setmaxnreg' must be inside a kern.role (every warp of a warpgroup executes it)";
  if (!op.enclosing("kern.kernel")->attr("max_regs"))
    return d.error(op.loc()) << "'kern.setmaxnreg' needs the kernel's {max_regs = N}: ptxas ignores setmaxnreg "
                                "when the register count at entry is unknown";
  return true;
}

// ---- mbarriers ----

bool verifyMbarrierAlloc(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  if (mbarrierCount(op.result()->type()) == 0)
    return d.error(op.loc()) << "'kern.mbarrier_alloc' produces mbarrier<[n]> with n >= 1";
  const Attribute* off = op.attr("offset");
  if (!off || !off->isInt() || off->asInt() < 0 || off->asInt() % 8 != 0)
    return d.error(op.loc()) << "'kern.mbarrier_alloc' needs {offset = N}: a byte offset that is a multiple of 8";
  return true;
}

bool verifyMbarrierInit(const Operation& op, DiagnosticEngine& d) {
  if (!barrierOperands(op, d)) return false;
  // PTX ISA, "mbarrier.init": the expected arrival count is 1 .. 2^20 - 1.
  int64_t n = op.intAttr("count", 0);
  if (n < 1 || n >= (1 << 20))
    return d.error(op.loc()) << "'kern.mbarrier_init' needs {count = N} with 1 <= N < 2^20, got " << n;
  return true;
}

bool verifyMbarrierExpectTx(const Operation& op, DiagnosticEngine& d) {
  if (!barrierOperands(op, d)) return false;
  // PTX ISA, "mbarrier.expect_tx": the transaction count is 0 .. 2^20 - 1 per phase.
  int64_t n = op.intAttr("bytes", 0);
  if (n < 1 || n >= (1 << 20))
    return d.error(op.loc()) << "'kern.mbarrier_arrive_expect_tx' needs {bytes = N} with 1 <= N < 2^20, got " << n;
  return true;
}

bool verifyMbarrierArrive(const Operation& op, DiagnosticEngine& d) { return barrierOperands(op, d); }

bool verifyMbarrierWait(const Operation& op, DiagnosticEngine& d) {
  if (!barrierOperands(op, d)) return false;
  if (!isI32(op.operand(2)->type())) return d.error(op.loc()) << "'kern.mbarrier_wait' takes an i32 parity (0 or 1)";
  return verifyWaitScope(op, d);
}

bool verifyFence(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  std::string kind = op.stringAttr("kind");
  if (kind != "mbarrier_init" && kind != "proxy_async")
    return d.error(op.loc()) << "'kern.fence' needs {kind = \"mbarrier_init\"|\"proxy_async\"}, got \"" << kind << "\"";
  return true;
}

// ---- TMA ----

bool verifyTmaLoad(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  const Attribute* streamAttr = op.attr("stream");
  if (streamAttr && !streamAttr->isBool())
    return d.error(op.loc()) << "'kern.tma_load' {stream} is true or false";
  const unsigned stream = streamAttr && streamAttr->asBool() ? 1 : 0;
  const unsigned nOperands = op.numOperands() - std::min<size_t>(stream, op.numOperands());
  if (nOperands < 7 || nOperands > 8)
    return d.error(op.loc()) << "'kern.tma_load' takes (map, buf, slot, bars, i) and 2 or 3 coordinates"
                             << (stream ? ", then the i1 stream flag" : "");
  if (stream && !op.operand(nOperands)->type().isScalar(ScalarType::I1))
    return d.error(op.loc()) << "'kern.tma_load' {stream = true} takes an i1 as its last operand (true: load "
                                "L2 evict_first)";
  auto tm = tensorMapType(op.operand(0)->type());
  if (!tm) return d.error(op.loc()) << "'kern.tma_load' needs a tmap<...> kernel parameter as its map";
  // An unswizzled map (swizzle = 0: a row of f32 scales) lands in an unswizzled ring whose rows are
  // its box rows, each stage 128-byte aligned (a TMA copy's shared-memory destination); a swizzled
  // one in the 128B swizzle's ring.
  std::optional<SmemLayout> layout;
  if (tm->swizzle == 0) {
    layout = smemLayout(op.operand(1)->type());
    const Operation* alloc = op.operand(1)->definingOp();
    if (!layout || !layout->swizzle.none() || layout->stageBytes() % 128 != 0 || !alloc ||
        !alloc->is("kern.smem_alloc") || alloc->intAttr("offset", 1) % 128 != 0)
      return d.error(op.loc()) << "'kern.tma_load' of an unswizzled tensor map needs an unswizzled kern.smem_alloc "
                                  "ring with stages on 128-byte boundaries";
  } else {
    layout = swizzled128(op, op.operand(1), d);
  }
  if (!layout) return false;
  bool ok = isI32(op.operand(2)->type()) && mbarrierCount(op.operand(3)->type()) > 0 && isI32(op.operand(4)->type());
  for (unsigned i = 5; i < nOperands; ++i) ok = ok && isI32(op.operand(i)->type());
  if (!ok) return d.error(op.loc()) << "'kern.tma_load' needs an i32 slot, an mbarrier ring, an i32 index and i32 coordinates";
  if (nOperands - 5 != tm->box.size())
    return d.error(op.loc()) << "'kern.tma_load' gives " << nOperands - 5 << " coordinates for a rank-"
                             << tm->box.size() << " tensor map";
  // TMA writes a box's rows densely, so they must be the buffer's; an unswizzled box of one row may
  // be shorter than the buffer's row (a row padded to 128 bytes: sm90 staged_scales.cpp).
  const bool oneRow = std::all_of(tm->box.begin() + 1, tm->box.end(), [](int64_t e) { return e == 1; });
  const int64_t boxBytes = tm->box[0] * layout->elemBytes();
  if (tm->elem != layout->elem || (tm->swizzle == 0 && oneRow ? boxBytes > layout->rowBytes() : boxBytes != layout->rowBytes()))
    return d.error(op.loc()) << "'kern.tma_load' box rows (" << tm->box[0] << " x " << scalarName(tm->elem)
                             << ") must be the buffer's rows (" << layout->cols << " x " << scalarName(layout->elem)
                             << ")" << (tm->swizzle == 0 && oneRow ? ", or a box of one row no longer than one" : "");
  int64_t rows = tm->boxBytes() / layout->rowBytes();
  int64_t row = op.intAttr("row", -1);
  if (row < 0 || (tm->swizzle != 0 && row % 8 != 0) || row + rows > layout->rows)
    return d.error(op.loc()) << "'kern.tma_load' {row = " << row << "}: the box's " << rows
                             << " rows must start at a multiple of 8 and fit in the stage's " << layout->rows
                             << " rows";
  return verifyMulticast(op, d);
}

bool verifyPrefetchTensormap(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  if (!tensorMapType(op.operand(0)->type()))
    return d.error(op.loc()) << "'kern.prefetch_tensormap' needs a tmap<...> kernel parameter";
  return true;
}

// ---- wgmma ----

bool verifyWgmmaDesc(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  auto layout = swizzled128(op, op.operand(0), d);
  if (!layout) return false;
  if (!isI32(op.operand(1)->type()) || !isI32(op.operand(2)->type()) || !op.result()->type().isScalar(ScalarType::I64))
    return d.error(op.loc()) << "'kern.wgmma_desc' takes (buf, i32 slot, i32 row) and produces i64";
  std::string major = op.stringAttr("major");
  int64_t row = op.intAttr("row", -1), col = op.intAttr("col", -1);
  int64_t colBytes = col * layout->elemBytes();
  if (major != "k" && major != "mn")
    return d.error(op.loc()) << "'kern.wgmma_desc' needs {major = \"k\"|\"mn\"}, got \"" << major << "\"";
  if (row < 0 || row % 8 != 0 || row >= layout->rows)
    return d.error(op.loc()) << "'kern.wgmma_desc' {row = " << row << "} must be a multiple of 8 inside the stage";
  // K-major: a k16 step starts 32 bytes further along the swizzled row; MN-major operands start
  // at a row (k) boundary.
  if (col < 0 || colBytes % 32 != 0 || colBytes >= 128 || (major == "mn" && col != 0))
    return d.error(op.loc()) << "'kern.wgmma_desc' {col = " << col
                             << "} must start a k16 step inside the 128-byte row (0 for major = \"mn\")";
  for (const char* key : {"lbo", "sbo"}) {
    int64_t v = op.intAttr(key, -1);
    if (v < 16 || v % 16 != 0 || v >= (1 << 18))
      return d.error(op.loc()) << "'kern.wgmma_desc' {" << key
                               << "} is a byte offset: a multiple of 16 from 16 to 2^18 - 16, got " << v;
  }
  return true;
}

// The scales of a K loop's promotion: in the body of the loop whose wgmmas carry {accumulate}, one
// f32 per accumulator the loop carries (its f32 block arguments), before the step's wgmmas.
bool verifyPromoteScales(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  const Operation* loop = op.parentOp();
  const Block* body = op.parentBlock();
  bool marked = false;
  if (loop && loop->is("scf.for"))
    for (const auto& other : body->operations()) marked |= other->is("kern.wgmma") && other->attr("accumulate") != nullptr;
  if (!marked)
    return d.error(op.loc()) << "'kern.promote_scales' belongs in the body of a K loop (scf.for) whose wgmmas carry "
                                "{accumulate}: sm90-promote-fp8 applies it as it promotes their sums";
  size_t accumulators = 0;
  for (size_t i = 1; i < body->numArguments(); ++i) accumulators += body->argument(unsigned(i))->type().isScalar(ScalarType::F32);
  if (op.numOperands() != accumulators)
    return d.error(op.loc()) << "'kern.promote_scales' takes one f32 factor per accumulator the loop carries ("
                             << accumulators << "), got " << op.numOperands();
  for (const Value* v : op.operands())
    if (!v->type().isScalar(ScalarType::F32))
      return d.error(op.loc()) << "'kern.promote_scales' factors are f32, got " << v->type().str();
  return true;
}

bool verifyWgmma(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  auto shape = op.intsAttr("shape");
  // PTX ISA, "wgmma.mma_async": m64nNk16 for .bf16/.f16, m64nNk32 for .e4m3/.e5m2, N a multiple
  // of 8 from 8 to 256.
  std::string ab = op.stringAttr("ab");
  const bool fp8 = ab == "f8e4m3" || ab == "f8e5m2";
  if (ab != "bf16" && ab != "f16" && !fp8)
    return d.error(op.loc()) << "'kern.wgmma' needs {ab = \"bf16\"|\"f16\"|\"f8e4m3\"|\"f8e5m2\"}, got \"" << ab << "\"";
  // FP8 operands may mix formats: {b} names B's when it differs from A's.
  const Attribute* bt = op.attr("b");
  if (bt && (!fp8 || !bt->isString() || (bt->asString() != "f8e4m3" && bt->asString() != "f8e5m2")))
    return d.error(op.loc()) << "'kern.wgmma' {b} names an FP8 B format (\"f8e4m3\"|\"f8e5m2\") beside an FP8 {ab}";
  const int64_t k = fp8 ? 32 : 16;
  if (shape.size() != 3 || shape[0] != 64 || shape[2] != k || shape[1] < 8 || shape[1] > 256 || shape[1] % 8 != 0)
    return d.error(op.loc()) << "'kern.wgmma' of " << ab << " supports {shape = [64, N, " << k
                             << "]} with N a multiple of 8 up to 256";
  const Attribute* tb = op.attr("trans_b");
  if (!tb || !tb->isBool()) return d.error(op.loc()) << "'kern.wgmma' needs {trans_b = true|false}";
  const Attribute* ta = op.attr("trans_a");
  if (ta && !ta->isBool()) return d.error(op.loc()) << "'kern.wgmma' {trans_a} is true or false (A MN-major)";
  // The 8-bit forms have no transpose: both operands K-major.
  if (fp8 && (tb->asBool() || (ta && ta->asBool())))
    return d.error(op.loc()) << "'kern.wgmma' of FP8 operands reads both K-major: {trans_a} and {trans_b} must be false";
  // {accumulate}: the program's FP8 numerics (fp8_accum), which sm90-promote-fp8 writes into the
  // K loop and removes; only FP8 sums accumulate in the tensor cores' narrow accumulator.
  if (const Attribute* acc = op.attr("accumulate")) {
    if (!acc->isString() || (acc->asString() != "promote" && acc->asString() != "promote_pairs"))
      return d.error(op.loc()) << "'kern.wgmma' {accumulate} is \"promote\" or \"promote_pairs\" (FP8 sums added "
                                  "to f32 registers per K step, or per pair of steps)";
    if (!fp8)
      return d.error(op.loc()) << "'kern.wgmma' {accumulate} promotes FP8 sums; wgmma of " << ab
                               << " sums in f32 already";
  }
  size_t nacc = size_t(shape[1] / 2);
  bool ok = op.numOperands() == 3 + nacc && op.numResults() == nacc && op.operand(0)->type().isScalar(ScalarType::I1) &&
            op.operand(1)->type().isScalar(ScalarType::I64) && op.operand(2)->type().isScalar(ScalarType::I64);
  for (size_t i = 0; ok && i < nacc; ++i)
    ok = op.operand(unsigned(3 + i))->type().isScalar(ScalarType::F32) && op.result(unsigned(i))->type().isScalar(ScalarType::F32);
  if (!ok)
    return d.error(op.loc()) << "'kern.wgmma' with N = " << shape[1] << " takes (i1 scale_d, i64 descA, i64 descB) and "
                             << nacc << " f32 accumulators, and produces " << nacc << " f32";
  for (size_t i = 0; i < nacc; ++i) {
    const Value* a = op.operand(unsigned(3 + i));
    if (a->uses().size() != 1)
      return d.error(op.loc()) << "'kern.wgmma' accumulator #" << i
                               << " has other uses: wgmma overwrites its accumulators in place";
  }
  return true;
}

bool verifyWgmmaWait(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  const Attribute* p = op.attr("pending");
  if (!p || !p->isInt() || p->asInt() < 0 || p->asInt() > 7)
    return d.error(op.loc()) << "'kern.wgmma_wait' needs {pending = N} with 0 <= N <= 7";
  return true;
}

// ---- types ----

int64_t TensorMapType::boxBytes() const {
  int64_t n = ir::bitWidth(elem) / 8;
  for (int64_t b : box) n *= b;
  return n;
}

std::optional<TensorMapType> tensorMapType(const Type& t, std::string* why) {
  auto fail = [&](std::string m) -> std::optional<TensorMapType> {
    if (why) *why = std::move(m);
    return std::nullopt;
  };
  if (!t.isKind("tmap") || !t.hasElem() || !t.hasShape() || t.rank() < 2 || t.rank() > 3)
    return fail("expected tmap<elem, [box0, box1(, box2)], tensor = \"name\", swizzle = 128>, got " + t.str());
  TensorMapType r;
  r.elem = t.elem();
  for (const auto& e : t.shape()) {
    // cuTensorMapEncodeTiled: every box dim is 1..256 elements.
    if (e.isSymbolic() || e.value < 1 || e.value > 256) return fail("tmap box dims are 1 to 256 elements, got " + shapeStr(t.shape()));
    r.box.push_back(e.value);
  }
  const Attribute* tensor = t.param("tensor");
  const Attribute* sw = t.param("swizzle");
  if (!tensor || !tensor->isString() || tensor->asString().empty())
    return fail("tmap needs tensor = \"name\" naming the tensor argument it describes");
  if (!sw || !sw->isInt() || (sw->asInt() != 128 && sw->asInt() != 0))
    return fail("tmap supports swizzle = 128, or 0 (none)");
  r.tensor = tensor->asString();
  r.swizzle = sw->asInt();
  if (const Attribute* flat = t.param("flat")) {
    if (!flat->isBool() || r.box.size() != 2 || r.box[1] != 1 || r.swizzle != 0)
      return fail("tmap {flat = true} views the tensor as one row: an unswizzled box [n, 1]");
    r.flat = flat->asBool();
  }
  // cuTensorMapEncodeTiled: an unswizzled box row is a multiple of 16 bytes.
  if (r.swizzle == 0 && r.box[0] * (ir::bitWidth(r.elem) / 8) % 16 != 0)
    return fail("an unswizzled tmap box row is a multiple of 16 bytes, got " +
                std::to_string(r.box[0] * (ir::bitWidth(r.elem) / 8)));
  if (r.swizzle == 128 && r.box[0] * (ir::bitWidth(r.elem) / 8) != 128)
    return fail("a 128-byte-swizzled tmap box row is 128 bytes (the swizzle span), got " +
                std::to_string(r.box[0] * (ir::bitWidth(r.elem) / 8)));
  return r;
}

Type tmapType(ScalarType elem, const std::vector<int64_t>& box, const std::string& tensor, int64_t swizzle, bool flat) {
  Shape s;
  for (int64_t b : box) s.push_back(Extent::of(b));
  if (flat)
    return Type::make("tmap", elem, s,
                      {{"tensor", Attribute(tensor)}, {"swizzle", Attribute(swizzle)}, {"flat", Attribute(true)}});
  return Type::make("tmap", elem, s, {{"tensor", Attribute(tensor)}, {"swizzle", Attribute(swizzle)}});
}

int64_t mbarrierCount(const Type& t) {
  if (!t.isKind("mbarrier") || t.hasElem() || !t.hasShape() || t.rank() != 1 || t.shape()[0].isSymbolic()) return 0;
  return std::max<int64_t>(0, t.shape()[0].value);
}

}  // namespace kiln::kern

namespace kiln::kern {
using namespace kiln::ir;

// ---- the TMA-store epilogue ----

bool verifyStShared(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  if (op.numOperands() != 4 && op.numOperands() != 5)
    return d.error(op.loc()) << "'kern.st_shared' takes (buf, slot, off) and one value, or two 32-bit elements";
  auto layout = stageAddress(op, d);
  if (!layout) return false;
  const Type& v = op.operand(3)->type();
  if (op.numOperands() == 5) {  // st.shared.v2: two adjacent 32-bit elements (an f32 accumulator pair)
    if (layout->elemBytes() != 4 || v != Type::scalar(layout->elem) || op.operand(4)->type() != v)
      return d.error(op.loc()) << "'kern.st_shared' stores two values only as two 32-bit elements of its buffer, not "
                               << v.str() << " and " << op.operand(4)->type().str() << " into " << scalarName(layout->elem);
    return true;
  }
  if (v != Type::scalar(layout->elem) && v != fragType(layout->elem))
    return d.error(op.loc()) << "'kern.st_shared' stores " << scalarName(layout->elem) << " or "
                             << fragType(layout->elem).str() << " into this buffer, not " << v.str();
  return true;
}

bool verifyStmatrix(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  if (op.numOperands() != 5 && op.numOperands() != 7)
    return d.error(op.loc()) << "'kern.stmatrix' takes (buf, slot, off) and two matrices (.x2) or four (.x4)";
  auto layout = stageAddress(op, d);
  if (!layout) return false;
  bool ok = layout->elemBytes() == 2;
  for (unsigned i = 3; ok && i < op.numOperands(); ++i) ok = op.operand(i)->type() == fragType(layout->elem);
  if (!ok)
    return d.error(op.loc()) << "'kern.stmatrix' needs a buffer of 16-bit elements and frags of two of its "
                                "elements";
  if (const Attribute* t = op.attr("trans"); t && !t->isBool())
    return d.error(op.loc()) << "'kern.stmatrix' {trans} is true or false (each 8x8 matrix stored transposed)";
  return true;
}

bool verifyTmaStoreOperands(const Operation& op, unsigned n, DiagnosticEngine& d) {
  const std::string who = "'" + op.name() + "'";
  auto tm = tensorMapType(op.operand(0)->type());
  if (!tm) return d.error(op.loc()) << who << " needs a tmap<...> kernel parameter as its map";
  auto layout = smemLayout(op.operand(1)->type());
  const Operation* alloc = op.operand(1)->definingOp();
  if (!layout || layout->rowBytes() != 128 || layout->swizzle.bits != 3 || layout->stageBytes() % 1024 != 0 || !alloc ||
      alloc->intAttr("offset", 1) % 1024 != 0)
    return d.error(op.loc()) << who << " needs a kern.smem_alloc ring with 128-byte rows, swizzle = [3, 4, 3] "
                                "and stages on 1024-byte boundaries (the 128B swizzle atom)";
  bool ok = true;
  for (unsigned i = 2; i < 3 + n; ++i) ok = ok && op.operand(i)->type().isScalar(ScalarType::I32);
  if (!ok) return d.error(op.loc()) << who << " needs an i32 slot and i32 coordinates";
  if (n != tm->box.size())
    return d.error(op.loc()) << who << " gives " << n << " coordinates for a rank-" << tm->box.size() << " tensor map";
  if (tm->elem != layout->elem || tm->box[0] * layout->elemBytes() != layout->rowBytes())
    return d.error(op.loc()) << who << " box rows must be the buffer's rows";
  int64_t rows = tm->boxBytes() / layout->rowBytes(), row = op.intAttr("row", -1);
  if (row < 0 || row % 8 != 0 || row + rows > layout->rows)
    return d.error(op.loc()) << who << " {row = " << row << "}: the box's " << rows
                             << " rows must start at a multiple of 8 and fit in the stage's " << layout->rows
                             << " rows";
  return true;
}

bool verifyTmaStore(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  if (op.numOperands() < 5 || op.numOperands() > 6)
    return d.error(op.loc()) << "'kern.tma_store' takes (map, buf, slot) and 2 or 3 coordinates";
  return verifyTmaStoreOperands(op, op.numOperands() - 3, d);
}

bool verifyBulkWait(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  const Attribute* p = op.attr("pending");
  const Attribute* r = op.attr("read");
  if (!p || !p->isInt() || p->asInt() < 0 || p->asInt() > 7 || !r || !r->isBool())
    return d.error(op.loc()) << "'kern.bulk_wait' needs {pending = N, read = true|false} with 0 <= N <= 7";
  return true;
}

bool verifyNamedBarrier(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  if (!op.operand(0)->type().isScalar(ScalarType::I32))
    return d.error(op.loc()) << "'kern.named_barrier' takes an i32 barrier id (1 to 15; 0 is kern.barrier's)";
  // PTX ISA, "bar.sync": the thread count is a multiple of the warp size.
  int64_t n = op.intAttr("threads", 0);
  int64_t threads = op.enclosing("kern.kernel")->intAttr("threads", 0);
  if (n < 32 || n % 32 != 0 || n > threads)
    return d.error(op.loc()) << "'kern.named_barrier' needs {threads = N}: whole warps, at most the kernel's "
                             << threads;
  return true;
}

bool verifyUndef(const Operation& op, DiagnosticEngine& d) {
  if (!requireInKernel(op, d)) return false;
  if (!op.result()->type().isScalar())
    return d.error(op.loc()) << "'kern.undef' makes a scalar, not " << op.result()->type().str();
  return true;
}

}  // namespace kiln::kern
