// Global -> shared copies of the sm80 main loop (contract and paths in sm80_copies.h; PTX ISA
// "cp.async": both addresses aligned to the copy's size, bytes past src-size zero-filled).
#include "schedule/sm80_copies.h"

#include <algorithm>

namespace kiln::sm80 {
using namespace ir;

CopyPlan planCopies(Context& cx, Value* buf, Value* base, bool kAlongRows, Value* outer0, Value* outerDim,
                    Value* rowStride, int alignBytes, bool strided, const Location& loc) {
  KernBuilder& b = cx.b;
  b.setLoc(loc);
  CopyPlan p;
  p.buf = buf;
  p.layout = *kern::smemLayout(buf->type());
  p.base = base;
  p.kAlongRows = kAlongRows;
  int64_t cpr = p.layout.rowBytes() / 16;  // chunks per stage row
  int64_t perChunk = 16 / p.layout.elemBytes();
  int threads = cx.cfg.threads();
  p.rowsPerPass = threads / cpr;
  int64_t passes = p.layout.rows / p.rowsPerPass;
  p.rowT = b.named(b.div(cx.tid, b.i32(cpr)), "crow");
  p.colT = b.named(b.mulConst(b.rem(cx.tid, b.i32(cpr)), perChunk), "ccol");
  p.rowStride64 = b.cast(rowStride, types::i64());
  int64_t period = std::max<int64_t>(1, p.layout.swizzle.periodBytes() / p.layout.rowBytes());
  std::map<int64_t, Value*> byResidue;
  for (int64_t pass = 0; pass < passes; ++pass) {
    int64_t dr = pass * p.rowsPerPass;
    int64_t res = dr % period;
    if (!byResidue.count(res))
      byResidue[res] = b.named(b.op1("kern.smem_offset", {buf, b.addConst(p.rowT, res), p.colT}, types::i32()), "coff");
    p.offsets.push_back(byResidue[res]);
    p.dispRows.push_back(dr - res);
    Value* row = b.addConst(p.rowT, dr);
    if (kAlongRows) {
      // Stage row = k (added per K tile), column = n (or m): element (k, n0 + col) at k * ld + n0 + col.
      Value* col = b.add(outer0, p.colT);
      p.valid.push_back(b.cmp("slt", col, outerDim));
      Value* off = b.add(b.mul(b.cast(row, types::i64()), p.rowStride64), b.cast(col, types::i64()));
      p.ptrs.push_back(b.ptrAdd(base, off));
    } else {
      // Stage row = m (or n for K-major B), column = k: element (outer0 + row, k) at (outer0 + row) * ld + k.
      Value* outer = b.add(outer0, row);
      p.valid.push_back(b.cmp("slt", outer, outerDim));
      Value* off = b.add(b.mul(b.cast(outer, types::i64()), p.rowStride64), b.cast(p.colT, types::i64()));
      p.ptrs.push_back(b.ptrAdd(base, off));
    }
  }
  const int align = std::min(alignBytes, 16);
  p.regs = align < 4;
  p.pieceBytes = p.regs ? int(p.layout.elemBytes()) : align;
  p.partial = strided && !p.regs;
  p.outer0 = outer0;
  p.contigLen = kAlongRows ? outerDim : cx.dimK;
  return p;
}

namespace {

// Whole 16-byte chunks, all or nothing: the row's length is a multiple of a chunk.
void copyWholeChunks(Context& cx, const CopyPlan& p, Value* kt, Value* slot) {
  KernBuilder& b = cx.b;
  Value* k0 = b.mulConst(kt, cx.cfg.bk);
  Value* zero = b.i32(0);
  Value* sixteen = b.i32(16);
  // Row-major B: the K tile moves down the rows; A and K-major B: along the row.
  Value* kOff = p.kAlongRows ? b.mul(b.cast(k0, types::i64()), p.rowStride64) : b.cast(k0, types::i64());
  Value* kColOk = p.kAlongRows ? nullptr : b.cmp("slt", b.add(k0, p.colT), cx.dimK);
  for (size_t pass = 0; pass < p.ptrs.size(); ++pass) {
    Value* ok;
    if (p.kAlongRows) {
      Value* krow = b.addConst(b.add(k0, p.rowT), int64_t(pass) * p.rowsPerPass);
      ok = b.andi(p.valid[pass], b.cmp("slt", krow, cx.dimK));
    } else {
      ok = b.andi(p.valid[pass], kColOk);
    }
    Value* src = b.select(ok, b.ptrAdd(p.ptrs[pass], kOff), p.base);
    Value* bytes = b.select(ok, sixteen, zero);
    b.create("kern.cp_async", {p.buf, slot, p.offsets[pass], src, bytes}, {},
             {{"row", p.dispRows[pass]}, {"col", int64_t{0}}, {"bytes", int64_t{16}}});
  }
}

// A chunk in pieces (narrower cp.async, or elements through registers), or with a partial end.
std::vector<Value*> copyPieces(Context& cx, const CopyPlan& p, Value* kt, Value* slot) {
  KernBuilder& b = cx.b;
  const int eb = int(p.layout.elemBytes());
  const int64_t elems = p.pieceBytes / eb, pieces = 16 / p.pieceBytes;
  Value* k0 = b.mulConst(kt, cx.cfg.bk);
  Value* kOff = p.kAlongRows ? b.mul(b.cast(k0, types::i64()), p.rowStride64) : b.cast(k0, types::i64());
  // The chunk's first position along the row (the contiguous axis), the same in every pass.
  Value* c0 = p.kAlongRows ? b.add(p.outer0, p.colT) : b.add(k0, p.colT);
  std::vector<Value*> loaded;
  for (size_t pass = 0; pass < p.ptrs.size(); ++pass) {
    // Whether the chunk's row (k for row-major stages along K, the outer position otherwise) is in.
    Value* rowIn = p.kAlongRows ? b.cmp("slt", b.addConst(b.add(k0, p.rowT), int64_t(pass) * p.rowsPerPass), cx.dimK)
                                : p.valid[pass];
    if (p.kAlongRows && p.allowed) rowIn = b.andi(rowIn, p.allowed);
    Value* chunk = b.ptrAdd(p.ptrs[pass], kOff);
    for (int64_t q = 0; q < pieces; ++q) {
      Value* pos = b.addConst(c0, q * elems);
      Value* src = q ? b.ptrAdd(chunk, b.i64(q * elems)) : chunk;
      std::vector<NamedAttr> at = {{"row", p.dispRows[pass]}, {"col", q * elems}};
      if (p.regs) {
        Value* in = b.andi(rowIn, b.cmp("slt", pos, p.contigLen));
        loaded.push_back(b.op1("kern.ld_global", {src, in}, Type::scalar(p.layout.elem)));
        continue;
      }
      Value* bytes;
      if (p.partial) {
        // What is left of the row from here, in bytes, up to the piece.
        Value* left = b.sub(p.contigLen, pos);
        bytes = b.select(b.cmp("sle", b.i32(elems), left), b.i32(p.pieceBytes), b.mulConst(left, eb));
        bytes = b.select(b.andi(rowIn, b.cmp("slt", b.i32(0), left)), bytes, b.i32(0));
      } else {
        bytes = b.select(b.andi(rowIn, b.cmp("slt", pos, p.contigLen)), b.i32(p.pieceBytes), b.i32(0));
      }
      src = b.select(b.cmp("slt", b.i32(0), bytes), src, p.base);
      at.push_back({"bytes", int64_t(p.pieceBytes)});
      b.create("kern.cp_async", {p.buf, slot, p.offsets[pass], src, bytes}, {}, at);
    }
  }
  return loaded;
}

}  // namespace

std::vector<Value*> copyTile(Context& cx, const CopyPlan& p, Value* kt, Value* slot) {
  if (p.wholeChunks()) {
    copyWholeChunks(cx, p, kt, slot);
    return {};
  }
  return copyPieces(cx, p, kt, slot);
}

void storeLoaded(Context& cx, const CopyPlan& p, Value* slot, const std::vector<Value*>& loaded) {
  const int64_t perChunk = 16 / p.layout.elemBytes();
  size_t i = 0;
  for (size_t pass = 0; pass < p.ptrs.size(); ++pass)
    for (int64_t e = 0; e < perChunk; ++e)
      cx.b.create("kern.st_shared", {p.buf, slot, p.offsets[pass], loaded.at(i++)}, {},
                  {{"row", p.dispRows[pass]}, {"col", e}});
}

}  // namespace kiln::sm80
