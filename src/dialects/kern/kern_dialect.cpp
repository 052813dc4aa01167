// Verify hooks and registration of the kern dialect (ops declared in kern_ops.def, semantics in
// kern_ops.h). Each hook checks the op's own rules; the generic verifier has already checked
// counts, SSA visibility and isolation.
#include <algorithm>

#include "dialects/kern/kern_ops.h"
#include "dialects/ptx_name.h"
#include "dialects/kern/kern_verify.h"
#include "kiln/ir/op_registry.h"

namespace kiln::kern {
using namespace kiln::ir;

namespace {

bool isI32(const Type& t) { return t.isScalar(ScalarType::I32); }
bool is16Bit(ScalarType e) { return e == ScalarType::BF16 || e == ScalarType::F16; }
// Element types ldmatrix can move: 16-bit ones, and FP8 bytes in pairs.
bool isLdsmElem(ScalarType e) { return is16Bit(e) || isFp8(e); }

bool inKernel(const Operation& op, DiagnosticEngine& d) { return requireInKernel(op, d); }

// ---- the kernel ----

bool verifyGridEntry(const Operation& op, const Attribute& e, DiagnosticEngine& d) {
  if (e.isInt()) return e.asInt() > 0 || (d.error(op.loc()) << "'kern.kernel' grid extents must be positive");
  const char* shape = "'kern.kernel' {grid} entries are positive integers or lists [dim, tile, ..., factor?] of "
                      "i32 parameter names and positive tile sizes, with an optional positive factor last";
  if (!e.isArray() || e.asArray().empty()) return d.error(op.loc()) << shape;
  auto params = op.stringsAttr("params");
  const auto& a = e.asArray();
  if (a.size() % 2 == 1 && (!a.back().isInt() || a.back().asInt() <= 0 || a.size() == 1))
    return d.error(op.loc()) << shape;
  for (size_t i = 0; i + 1 < a.size(); i += 2) {
    if (!a[i].isString() || !a[i + 1].isInt() || a[i + 1].asInt() <= 0) return d.error(op.loc()) << shape;
    bool found = false;
    for (size_t p = 0; p < params.size(); ++p)
      found |= params[p] == a[i].asString() && isI32(op.body().argument(unsigned(p))->type());
    if (!found)
      return d.error(op.loc()) << "'kern.kernel' grid entry names '" << a[i].asString()
                               << "', which is not an i32 parameter of the kernel";
  }
  return true;
}

bool verifyKernel(const Operation& op, DiagnosticEngine& d) {
  if (op.stringAttr("sym_name").empty())
    return d.error(op.loc()) << "'kern.kernel' needs a {sym_name = \"...\"} attribute naming the kernel";
  if (std::string bad = ptxNameProblem(op.stringAttr("sym_name")); !bad.empty()) return d.error(op.loc()) << bad;
  const Block& body = op.body();
  const Attribute* params = op.attr("params");
  if (!params || !params->asStrings() || params->asStrings()->size() != body.numArguments())
    return d.error(op.loc()) << "'kern.kernel' needs {params = [...]} naming each of its " << body.numArguments()
                             << " body arguments";
  auto names = *params->asStrings();
  for (unsigned i = 0; i < body.numArguments(); ++i) {
    const Type& t = body.argument(i)->type();
    bool ok = isPtr(t) || isTensorMap(t) || t.isScalar(ScalarType::I32) || t.isScalar(ScalarType::I64) ||
              t.isScalar(ScalarType::F32);
    if (!ok)
      return d.error(op.loc()) << "kernel parameter '" << names[i] << "' has type " << t.str()
                               << "; parameters are ptr<e>, tmap<...>, i32, i64 or f32";
    if (isTensorMap(t)) {
      std::string why;
      auto tm = tensorMapType(t, &why);
      if (!tm) return d.error(op.loc()) << "kernel parameter '" << names[i] << "': " << why;
      bool found = false;
      for (unsigned p = 0; p < names.size(); ++p)
        found |= names[p] == tm->tensor && isPtr(body.argument(p)->type()) && body.argument(p)->type().elem() == tm->elem;
      if (!found)
        return d.error(op.loc()) << "tensor map '" << names[i] << "' describes '" << tm->tensor
                                 << "', which is not a ptr<" << scalarName(tm->elem) << "> parameter of the kernel";
    }
  }
  if (const Attribute* mr = op.attr("max_regs"); mr && (!mr->isInt() || mr->asInt() < 24 || mr->asInt() > 255))
    return d.error(op.loc()) << "'kern.kernel' {max_regs = N} needs N from 24 to 255";
  if (const Attribute* pe = op.attr("persistent"); pe && !pe->isBool())
    return d.error(op.loc()) << "'kern.kernel' {persistent} must be true or false";
  if (const Attribute* ps = op.attr("persistent_per_sm");
      ps && (!ps->isInt() || ps->asInt() < 1 || !op.attr("persistent") || !op.attr("persistent")->asBool()))
    return d.error(op.loc()) << "'kern.kernel' {persistent_per_sm = N} needs N >= 1 and {persistent = true}: the "
                                "blocks per SM of a persistent grid";
  if (!verifyKernelCluster(op, d)) return false;
  int64_t threads = op.intAttr("threads", 0);
  if (threads < 32 || threads > 1024 || threads % 32 != 0)
    return d.error(op.loc()) << "'kern.kernel' needs {threads = N} with N a multiple of 32 from 32 to 1024, got "
                             << threads;
  const Attribute* smem = op.attr("smem_bytes");
  if (!smem || !smem->isInt() || smem->asInt() < 0)
    return d.error(op.loc()) << "'kern.kernel' needs {smem_bytes = N} with N >= 0";
  const Attribute* grid = op.attr("grid");
  if (!grid || !grid->isArray() || grid->asArray().empty() || grid->asArray().size() > 3)
    return d.error(op.loc()) << "'kern.kernel' needs {grid = [x, y?, z?]}: one to three grid extents";
  for (const auto& e : grid->asArray())
    if (!verifyGridEntry(op, e, d)) return false;
  // Optional launch requirements: {requires = [[dim, multiple], ...], align = [[pointer, bytes], ...]}.
  auto pairsOk = [&](const char* key, bool wantPtr) {
    const Attribute* a = op.attr(key);
    if (!a) return true;
    bool ok = a->isArray();
    for (size_t i = 0; ok && i < a->asArray().size(); ++i) {
      const Attribute& e = a->asArray()[i];
      ok = e.isArray() && e.asArray().size() == 2 && e.asArray()[0].isString() && e.asArray()[1].isInt() &&
           e.asArray()[1].asInt() > 0;
      bool found = false;
      for (unsigned p = 0; ok && p < names.size(); ++p)
        found |= names[p] == e.asArray()[0].asString() &&
                 (wantPtr ? isPtr(body.argument(p)->type()) : isI32(body.argument(p)->type()));
      ok = ok && found;
    }
    if (!ok)
      d.error(op.loc()) << "'kern.kernel' {" << key << "} must list [name, positive integer] pairs naming "
                        << (wantPtr ? "pointer" : "i32") << " parameters";
    return ok;
  };
  if (!pairsOk("requires", false) || !pairsOk("align", true)) return false;
  // Optional streaming rules for the runtime (KernelParam::stream): {streams = [[tensor map, bound
  // dim, bound, row dim, row multiple, fill bytes], ...]}.
  if (const Attribute* st = op.attr("streams")) {
    auto param = [&](const Attribute& a, bool map) {
      for (unsigned p = 0; a.isString() && p < names.size(); ++p)
        if (names[p] == a.asString() && (map ? isTensorMap(body.argument(p)->type()) : isI32(body.argument(p)->type())))
          return true;
      return false;
    };
    bool ok = st->isArray();
    for (size_t i = 0; ok && i < st->asArray().size(); ++i) {
      const Attribute& e = st->asArray()[i];
      ok = e.isArray() && e.asArray().size() == 6;
      if (!ok) break;
      const auto& f = e.asArray();
      ok = param(f[0], true) && param(f[1], false) && f[2].isInt() && f[2].asInt() > 0 && param(f[3], false) &&
           f[4].isInt() && f[4].asInt() > 0 && f[5].isInt() &&
           (f[5].asInt() == 0 || f[5].asInt() == 64 || f[5].asInt() == 128 || f[5].asInt() == 256);
    }
    if (!ok)
      return d.error(op.loc()) << "'kern.kernel' {streams} must list [tensor map, dim, bound > 0, dim, multiple > 0, "
                                  "fill bytes (0, 64, 128 or 256)] naming a tmap parameter and i32 dim parameters";
  }

  // Only GPU-level ops inside, and shared-memory buffers that fit and do not overlap; an alias
  // view lies wholly inside one of them.
  struct Range { int64_t begin, end; };
  std::vector<Range> ranges;
  std::vector<std::pair<Range, const Operation*>> aliases;
  bool ok = true;
  op.walk([&](const Operation& inner) {
    if (&inner == &op || !ok) return;
    std::string_view dialect = inner.dialect();
    if (dialect != "kern" && dialect != "arith" && dialect != "math" && dialect != "scf") {
      ok = d.error(inner.loc()) << "'" << inner.name() << "' cannot appear in a kern.kernel: lower "
                                << dialect << " ops first";
      return;
    }
    int64_t bytes = 0;
    if (inner.is("kern.smem_alloc")) {
      auto layout = smemLayout(inner.result()->type());
      if (!layout) return;  // reported by the op's own hook
      bytes = layout->totalBytes();
    } else if (inner.is("kern.mbarrier_alloc")) {
      bytes = 8 * mbarrierCount(inner.result()->type());
    } else {
      return;
    }
    Range r{inner.intAttr("offset", 0), inner.intAttr("offset", 0) + bytes};
    if (r.end > smem->asInt()) {
      ok = d.error(inner.loc()) << "shared-memory buffer at offset " << r.begin << " (" << bytes
                                << " bytes) ends past the kernel's smem_bytes = " << smem->asInt();
      return;
    }
    const Attribute* alias = inner.attr("alias");
    if (alias && alias->isBool() && alias->asBool()) {
      aliases.push_back({r, &inner});
      return;
    }
    for (const Range& o : ranges)
      if (r.begin < o.end && o.begin < r.end) {
        ok = d.error(inner.loc()) << "shared-memory buffer at offset " << r.begin << " (" << bytes
                                  << " bytes) overlaps the buffer at offset " << o.begin;
        return;
      }
    ranges.push_back(r);
  });
  for (const auto& view : aliases) {
    if (!ok) break;
    const Range a = view.first;  // a copy, not a structured binding: clang's lambdas cannot capture those
    bool inside = std::any_of(ranges.begin(), ranges.end(), [&](const Range& o) { return o.begin <= a.begin && a.end <= o.end; });
    if (!inside)
      ok = d.error(view.second->loc()) << "shared-memory view {alias} at offset " << a.begin << " (" << a.end - a.begin
                                       << " bytes) does not lie wholly inside one buffer of the kernel";
  }
  return ok;
}

// ---- indices ----

bool verifyThreadIndex(const Operation& op, DiagnosticEngine& d) {
  if (!inKernel(op, d)) return false;
  if (!isI32(op.result()->type())) return d.error(op.loc()) << "'" << op.name() << "' produces i32";
  return true;
}

// kern.warp_id broadcasts lane 0's value (emit_thread.cpp), so every lane of the warp must reach it:
// not inside an scf.if, whose condition may differ between the lanes.
bool verifyWarpId(const Operation& op, DiagnosticEngine& d) {
  if (!verifyThreadIndex(op, d)) return false;
  if (op.enclosing("scf.if"))
    return d.error(op.loc()) << "'kern.warp_id' is read by whole warps (it is broadcast from lane 0); move it out of "
                                "the enclosing 'scf.if'";
  return true;
}

bool verifyBlockId(const Operation& op, DiagnosticEngine& d) {
  if (!verifyThreadIndex(op, d)) return false;
  std::string dim = op.stringAttr("dim");
  if (dim != "x" && dim != "y" && dim != "z")
    return d.error(op.loc()) << "'kern.block_id' needs {dim = \"x\"|\"y\"|\"z\"}, got \"" << dim << "\"";
  return true;
}

// ---- shared memory ----

bool verifySmemAlloc(const Operation& op, DiagnosticEngine& d) {
  if (!inKernel(op, d)) return false;
  std::string why;
  if (!smemLayout(op.result()->type(), &why)) return d.error(op.loc()) << "'kern.smem_alloc': " << why;
  const Attribute* off = op.attr("offset");
  if (!off || !off->isInt() || off->asInt() < 0 || off->asInt() % 128 != 0)
    return d.error(op.loc()) << "'kern.smem_alloc' needs {offset = N}: a byte offset that is a multiple of 128";
  if (const Attribute* alias = op.attr("alias"); alias && !alias->isBool())
    return d.error(op.loc()) << "'kern.smem_alloc' {alias} is true or false";
  return true;
}

// (buf, row, col) operands shared by the two offset ops.
std::optional<SmemLayout> bufRowCol(const Operation& op, DiagnosticEngine& d) {
  if (!inKernel(op, d)) return std::nullopt;
  auto layout = smemLayout(op.operand(0)->type());
  if (!layout || !isI32(op.operand(1)->type()) || !isI32(op.operand(2)->type()) || !isI32(op.result()->type())) {
    d.error(op.loc()) << "'" << op.name() << "' needs (smem buffer, i32 row, i32 col) and produces i32";
    return std::nullopt;
  }
  return layout;
}

bool verifySmemOffset(const Operation& op, DiagnosticEngine& d) { return bufRowCol(op, d).has_value(); }

bool verifyLdsmOffset(const Operation& op, DiagnosticEngine& d) {
  auto layout = bufRowCol(op, d);
  if (!layout) return false;
  if (!isLdsmElem(layout->elem))
    return d.error(op.loc()) << "'kern.ldsm_offset' addresses 16-bit or FP8 elements for ldmatrix; the buffer holds "
                             << scalarName(layout->elem);
  // A matrix row is 16 bytes: 8 16-bit or 16 8-bit elements.
  int64_t rowElems = 16 / layout->elemBytes();
  auto q = op.intsAttr("quads");
  if (q.size() != 8 || q[0] != 0 || q[1] != 0 || q[6] != q[2] + q[4] || q[7] != q[3] + q[5])
    return d.error(op.loc()) << "'kern.ldsm_offset' needs {quads = [r0, c0, r1, c1, r2, c2, r3, c3]} with quad 0 "
                                "at [0, 0] and quad 3 = quad 1 + quad 2";
  for (int i = 0; i < 8; ++i) {
    if (q[i] < 0) return d.error(op.loc()) << "'kern.ldsm_offset' quads must not be negative";
    if (q[i] % (i % 2 ? rowElems : 8) != 0)
      return d.error(op.loc()) << "'kern.ldsm_offset' quads must be multiples of 8 rows and " << rowElems
                               << " columns (16-byte rows)";
  }
  auto stride = op.intsAttr("stride"), base = op.intsAttr("base");
  if (stride.size() != 2 || base.size() != 2 || stride[0] < 0 || stride[1] < 0 || base[0] < 0 || base[1] < 0 ||
      stride[1] % rowElems != 0 || base[1] % rowElems != 0)
    return d.error(op.loc()) << "'kern.ldsm_offset' needs {stride = [rows, cols], base = [rows, cols]}: "
                                "non-negative, columns in multiples of "
                             << rowElems << " elements";
  return true;
}

}  // namespace

// (buf, slot, off) + {row, col} addressing shared by cp_async, ldmatrix, st_shared and stmatrix.
std::optional<SmemLayout> stageAddress(const Operation& op, DiagnosticEngine& d) {
  auto layout = smemLayout(op.operand(0)->type());
  if (!layout || !isI32(op.operand(1)->type()) || !isI32(op.operand(2)->type())) {
    d.error(op.loc()) << "'" << op.name() << "' addresses a stage with (smem buffer, i32 slot, i32 offset)";
    return std::nullopt;
  }
  const Attribute* row = op.attr("row");
  const Attribute* col = op.attr("col");
  if (!row || !row->isInt() || !col || !col->isInt()) {
    d.error(op.loc()) << "'" << op.name() << "' needs a compile-time displacement {row = R, col = C}";
    return std::nullopt;
  }
  const Operation* def = op.operand(2)->definingOp();
  if (!def || !(def->is("kern.smem_offset") || def->is("kern.ldsm_offset")) || def->operand(0) != op.operand(0)) {
    d.error(op.loc()) << "'" << op.name() << "' offset must come from kern.smem_offset or kern.ldsm_offset of the same "
                         "buffer";
    return std::nullopt;
  }
  int quads = op.is("kern.ldmatrix") ? int(op.intAttr("num", 4)) : 4;  // ldsm_offset's lanes in use
  uint8_t chunks = runtimeChunks(*def, quads, layout->elemBytes());
  std::string why;
  // Inside a chunk, a displacement must keep the access aligned to its own size.
  const int64_t accessBytes = op.is("kern.cp_async")                                ? op.intAttr("bytes", 16)
                              : op.is("kern.st_shared") && op.numOperands() == 5     ? 2 * layout->elemBytes()
                              : op.is("kern.st_shared") && isFrag(op.operand(3)->type()) ? 4
                                                                                         : layout->elemBytes();
  const bool within = withinChunkDisplacement(op);
  if (within && (col->asInt() * layout->elemBytes()) % accessBytes != 0) {
    d.error(op.loc()) << "'" << op.name() << "' displacement {row = " << row->asInt() << ", col = " << col->asInt()
                      << "} leaves its " << accessBytes << "-byte access misaligned";
    return std::nullopt;
  }
  if (!displace(layout->swizzle, layout->rowBytes(), layout->elemBytes(), row->asInt(), col->asInt(), chunks, &why,
                within)) {
    d.error(op.loc()) << "'" << op.name() << "' displacement {row = " << row->asInt() << ", col = " << col->asInt()
                      << "} does not compose with " << layout->swizzle.str() << ": " << why;
    return std::nullopt;
  }
  return layout;
}

namespace {

bool verifyCpAsync(const Operation& op, DiagnosticEngine& d) {
  if (!inKernel(op, d)) return false;
  auto layout = stageAddress(op, d);
  if (!layout) return false;
  const Type& src = op.operand(3)->type();
  if (!isPtr(src) || !isI32(op.operand(4)->type()))
    return d.error(op.loc()) << "'kern.cp_async' needs a ptr<e> source and an i32 src_bytes after the address";
  if (src.elem() != layout->elem)
    return d.error(op.loc()) << "'kern.cp_async' copies " << scalarName(src.elem()) << " into a "
                             << scalarName(layout->elem) << " buffer";
  const int64_t bytes = op.intAttr("bytes", 0);
  if (bytes != 16 && bytes != 8 && bytes != 4)
    return d.error(op.loc()) << "'kern.cp_async' copies {bytes = 16} (cp.async.cg), 8 or 4 (cp.async.ca), got " << bytes;
  return true;
}

bool verifyCpAsyncWait(const Operation& op, DiagnosticEngine& d) {
  if (!inKernel(op, d)) return false;
  const Attribute* p = op.attr("pending");
  if (!p || !p->isInt() || p->asInt() < 0)
    return d.error(op.loc()) << "'kern.cp_async_wait' needs {pending = N} with N >= 0";
  return true;
}

bool verifyBarrier(const Operation& op, DiagnosticEngine& d) { return inKernel(op, d); }

// ---- tensor cores ----

bool verifyLdmatrix(const Operation& op, DiagnosticEngine& d) {
  if (!inKernel(op, d)) return false;
  auto layout = stageAddress(op, d);
  if (!layout) return false;
  if (!isLdsmElem(layout->elem))
    return d.error(op.loc()) << "'kern.ldmatrix' reads 16-bit or FP8 elements; the buffer holds "
                             << scalarName(layout->elem);
  int64_t num = op.intAttr("num", 0);
  if (num != 1 && num != 2 && num != 4) return d.error(op.loc()) << "'kern.ldmatrix' needs {num = 1, 2 or 4}, got " << num;
  const Attribute* trans = op.attr("trans");
  if (!trans || !trans->isBool()) return d.error(op.loc()) << "'kern.ldmatrix' needs {trans = true|false}";
  if (trans->asBool() && !is16Bit(layout->elem))
    return d.error(op.loc()) << "'kern.ldmatrix' {trans = true} transposes 16-bit elements; a "
                             << scalarName(layout->elem) << " buffer must be loaded without it (store it K-major)";
  Type frag = fragType(layout->elem);
  bool ok = op.numResults() == size_t(num);
  for (const auto& r : op.results()) ok = ok && r->type() == frag;
  if (!ok)
    return d.error(op.loc()) << "'kern.ldmatrix' with num = " << num << " has " << num << " results of type "
                             << frag.str();
  return true;
}

bool verifyMmaSync(const Operation& op, DiagnosticEngine& d) {
  if (!inKernel(op, d)) return false;
  std::string shape = op.stringAttr("shape");
  if (shape != "m16n8k16" && shape != "m16n8k32")
    return d.error(op.loc()) << "'kern.mma_sync' supports {shape = \"m16n8k16\"} (16-bit operands) and {shape = "
                                "\"m16n8k32\"} (FP8 operands), got \""
                             << shape << "\"";
  bool ok = true;
  for (unsigned i = 6; i < 10; ++i) ok = ok && op.operand(i)->type().isScalar(ScalarType::F32);
  for (const auto& r : op.results()) ok = ok && r->type().isScalar(ScalarType::F32);
  const Type& a = op.operand(0)->type();
  const Type& b = op.operand(4)->type();
  if (shape == "m16n8k16") {
    ok = ok && isFrag(a) && is16Bit(a.elem());
    for (unsigned i = 0; i < 6; ++i) ok = ok && op.operand(i)->type() == a;
    if (!ok)
      return d.error(op.loc()) << "'kern.mma_sync' takes 4 A and 2 B registers of one type frag<bf16|f16, [2]>, then "
                                  "4 f32 accumulators, and produces 4 f32";
    return true;
  }
  // m16n8k32: A and B may be different FP8 formats (e4m3 x e5m2 is a valid mma.sync).
  ok = ok && isFrag(a) && isFp8(a.elem()) && isFrag(b) && isFp8(b.elem());
  for (unsigned i = 0; i < 4; ++i) ok = ok && op.operand(i)->type() == a;
  ok = ok && op.operand(5)->type() == b;
  if (!ok)
    return d.error(op.loc()) << "'kern.mma_sync' {shape = \"m16n8k32\"} takes 4 A registers of one type and 2 B "
                                "registers of one type frag<f8e4m3|f8e5m2, [4]>, then 4 f32 accumulators, and "
                                "produces 4 f32";
  return true;
}

// ---- global memory ----

bool verifyPtrAdd(const Operation& op, DiagnosticEngine& d) {
  if (!inKernel(op, d)) return false;
  const Type& p = op.operand(0)->type();
  if (!isPtr(p) || !op.operand(1)->type().isScalar(ScalarType::I64) || op.result()->type() != p)
    return d.error(op.loc()) << "'kern.ptr_add' needs (ptr<e>, i64) and produces the same ptr<e>";
  return true;
}

bool verifyPrefetchGlobal(const Operation& op, DiagnosticEngine& d) {
  if (!inKernel(op, d)) return false;
  if (!isPtr(op.operand(0)->type()) || !op.operand(1)->type().isScalar(ScalarType::I1))
    return d.error(op.loc()) << "'kern.prefetch_global' needs (ptr<e>, i1 predicate)";
  const Attribute* level = op.attr("level");
  if (!level || !level->isString() || (level->asString() != "L1" && level->asString() != "L2"))
    return d.error(op.loc()) << "'kern.prefetch_global' needs {level = \"L1\"} or {level = \"L2\"}";
  return true;
}

}  // namespace

// Every kern op but the kernel lives inside one.
bool requireInKernel(const Operation& op, DiagnosticEngine& d) {
  if (op.enclosing("kern.kernel")) return true;
  return d.error(op.loc()) << "'" << op.name() << "' must be inside a kern.kernel";
}

std::optional<OpKind> kindOf(const Operation& op) {
  static const std::string_view names[] = {
#define KERN_OP(e, name, ...) name,
#include "kern_ops.def"
#undef KERN_OP
  };
  for (size_t i = 0; i < std::size(names); ++i)
    if (op.name() == names[i]) return static_cast<OpKind>(i);
  return std::nullopt;
}

}  // namespace kiln::kern

namespace kiln::ir {
void registerKernDialect(OpRegistry& r) {
  using namespace kiln::kern;
#define KERN_OP(e, name, nops, nres, nreg, traits, hook, summary, attrs) \
  r.add({name, nops, nres, nreg, traits, hook, summary, words(attrs)});
#include "kern_ops.def"
#undef KERN_OP
  r.addTypeKind("smem", {"swizzle"});
  r.addTypeKind("tmap", {"tensor", "swizzle", "flat"});
  for (const char* kind : {"ptr", "frag", "mbarrier"}) r.addTypeKind(kind, {});
}
}  // namespace kiln::ir
