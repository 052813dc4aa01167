// The sm80 epilogue: the program's elementwise tail, lowered per accumulator element, ending in
// masked stores straight from registers.
//
// Each thread owns, for MMA tile (i, j) of its warp, the four accumulator elements of the m16n8
// fragment (fragment_layout.h): rows g and g + 8, columns 2t and 2t + 1 (g = lane / 4, t = lane %
// 4). The fragment's rows are the output's rows (M) and its columns the output's columns (N), or,
// for a transposed fragment (sm90 swap_ab), the other way round. Every tile value of the epilogue
// is kept per thread in the cheapest form its shape allows:
//   Full    [M, N]: one value per accumulator element
//   Row:            one value per owned fragment column (2 per n8 tile): a [N] value, or a [M]
//                   value of a transposed fragment
//   Col:            one value per owned fragment row (2 per m16 tile): a [M] value, or a [N] value
//                   of a transposed fragment
//   Scalar:         one value
// tile.broadcast only changes the shape, never the storage: a Row value at (i, j, e) is fragment
// column (j, e % 2)'s. Narrow-float math is done in f32 and rounded once to the op's element type.
// Loads and stores are predicated on the element being inside the tensor; a pair of adjacent
// columns is stored with one 4-byte (bf16/f16) or 8-byte (f32) store, which needs rows aligned to
// a pair (compile.h), or with align_c below a pair (an odd N) one element at a time; and loaded so
// where the tensor's rows allow (pairLoadBytes, sm80_epilogue_address.h). Dense or strided.
#include <map>

#include "dialects/tile/tensor_layout.h"
#include "dialects/tile/tile_ops.h"
#include "schedule/sm80_context.h"
#include "schedule/sm80_epilogue_address.h"
#include "schedule/elementwise_lowering.h"

namespace kiln::sm80 {
using namespace ir;

namespace {

enum class Kind { Full, Row, Col, Scalar };

struct EpiValue {
  Kind kind = Kind::Scalar;
  ScalarType elem = ScalarType::F32;
  std::vector<Value*> v;
};

class Epilogue {
 public:
  Epilogue(Context& cx) : cx_(cx), b_(cx.b) {}

  bool run(const std::vector<Value*>& acc) {
    start();
    values_[cx_.g.reduce->result(0)] = EpiValue{Kind::Full, ScalarType::F32, acc};
    for (const Operation* op : cx_.g.epilogue) {
      b_.setLoc(op->loc());
      if (!lower(*op)) return false;
    }
    return true;
  }

  // preloadEpilogue: the loads that are not whole tiles, or (wholeTiles) those that are, recorded in
  // *cx.earlyLoads.
  bool preload(bool wholeTiles) {
    KILN_ASSERT(cx_.earlyLoads, "preloadEpilogue records into cx.earlyLoads");
    findCoords();
    std::vector<const Operation*> loads = vectorLoads(wholeTiles);
    if (loads.empty()) return true;  // nothing to load early: no positions made either
    start();
    for (const Operation* op : loads) {
      bool scalar = tile::kindOf(*op) == tile::OpKind::LoadScalar;
      b_.setLoc(op->loc());
      if (!lowerLoad(*op, scalar)) return false;
      (*cx_.earlyLoads)[op] = values_.at(op->result()).v;
    }
    return true;
  }

  // prefetchEpilogue: the 128-byte lines the block tile's vector and scalar loads will read, into
  // L1. Each load's span (bm rows or bn columns from the tile's start, or one element) is covered
  // by prefetching its elements 0, L, 2L, ... and the last inside the tensor (L elements to a
  // line), one line per thread `slot` of `slots`, the loads' lines dealt out in turn. A span
  // strided in memory (not the tensor's fastest axis) is left to the loads.
  bool prefetch(Value* slot, int slots) {
    findCoords();
    b_.setLoc(cx_.g.reduce->loc());
    int64_t next = 0;  // the slot that takes the next line
    for (const Operation* op : vectorLoads()) {
      const Type& t = op->operand(0)->type();
      unsigned n = unsigned(op->numOperands()) - 1;
      int axis = -1;
      int64_t span = 1;
      for (unsigned a = 0; a < n; ++a) {
        if (op->operand(1 + a) == coordM_) axis = int(a), span = cx_.cfg.bm;
        if (op->operand(1 + a) == coordN_) axis = int(a), span = cx_.cfg.bn;
      }
      if (axis >= 0 && tile::tensorLayout(t).contiguousAxis() != axis) continue;
      std::vector<Value*> pos;
      Value* ok = nullptr;
      if (!position(*op, 1, n, 0, 0, 0, /*blockStart=*/true, pos, ok)) return false;
      const int64_t perLine = 1024 / bitWidth(t.elem()), lines = axis < 0 ? 1 : (span - 1) / perLine + 2;
      Value* base = cx_.args.at(op->operand(0)->definingOp()->stringAttr("name"));
      for (int64_t first = -next; first < lines; first += slots) {
        Value* r = b_.addConst(slot, first);  // this thread's line of the span
        Value* pred = b_.andi(b_.cmp("sle", b_.i32(0), r), b_.cmp("slt", r, b_.i32(lines)));
        if (ok) pred = b_.andi(pred, ok);
        std::vector<Value*> at = pos;
        if (axis >= 0) {
          // Element r L of the span, or its last inside the tensor (the block start is: `ok`).
          Value* from = pos[size_t(axis)];
          Value* last = b_.addConst(from, span - 1);
          Value* end = b_.addConst(extent(t.shape()[size_t(axis)]), -1);
          last = b_.select(b_.cmp("slt", last, end), last, end);
          Value* e = b_.add(from, b_.mulConst(r, perLine));
          at[size_t(axis)] = b_.select(b_.cmp("slt", e, last), e, last);
        }
        b_.create("kern.prefetch_global", {b_.ptrAdd(base, elementOffset(t, at)), pred}, {}, {{"level", "L1"}});
      }
      next = (next + lines) % slots;
    }
    return true;
  }

 private:
  // The epilogue's loads that one value per fragment row or column or per thread covers (a [M] or
  // [N] slice, a scalar): what preload makes early and prefetch covers; or (wholeTiles) the others,
  // each element's own ([M, N], as a residual); findCoords first.
  std::vector<const Operation*> vectorLoads(bool wholeTiles = false) const {
    std::vector<const Operation*> loads;
    for (const Operation* op : cx_.g.epilogue) {
      auto k = tile::kindOf(*op);
      bool scalar = k == tile::OpKind::LoadScalar;
      if ((scalar || k == tile::OpKind::Load) && (loadKind(*op, scalar) == Kind::Full) == wholeTiles) loads.push_back(op);
    }
    return loads;
  }

  // The tile loop's M and N coordinates, which the epilogue's loads and stores index by.
  void findCoords() {
    coordM_ = coordArgM(cx_.g);
    coordN_ = coordArgN(cx_.g);
  }
  void start() {
    findCoords();
    b_.setLoc(cx_.g.reduce->loc());
    buildPositions();
  }

  // ---- positions and masks ----
  void buildPositions() {
    Value* g = b_.div(cx_.lane, b_.i32(4));
    Value* t = b_.rem(cx_.lane, b_.i32(4));
    Value* row0 = cx_.warpRow0 ? cx_.warpRow0 : b_.add(cx_.m0, b_.mulConst(cx_.warpM, cx_.warpTileM()));
    Value* col0 = cx_.warpCol0 ? cx_.warpCol0 : b_.add(cx_.n0, b_.mulConst(cx_.warpN, cx_.warpTileN()));
    rowBase_ = b_.named(b_.add(row0, g), "erow");
    colBase_ = b_.named(b_.add(col0, b_.mulConst(t, 2)), "ecol");
    Value* rowDim = cx_.transposed ? cx_.dimN : cx_.rowEnd ? cx_.rowEnd : cx_.dimM;
    Value* colDim = cx_.transposed ? cx_.dimM : cx_.dimN;
    for (int i = 0; i < cx_.mTiles(); ++i)
      for (int h = 0; h < 2; ++h) {
        Value* r = b_.addConst(rowBase_, cx_.mTileStride * i + 8 * h);
        rows_.push_back(r);
        rowOk_.push_back(b_.cmp("slt", r, rowDim));
      }
    for (int j = 0; j < cx_.nTiles(); ++j)
      for (int e = 0; e < 2; ++e) {
        Value* c = b_.addConst(colBase_, 8 * j + e);
        cols_.push_back(c);
        colOk_.push_back(b_.cmp("slt", c, colDim));
      }
  }
  // The output row (M) and column (N) of accumulator element (i, j, e), and whether each is inside.
  Value* rowAt(int i, int j, int e) const { return cx_.transposed ? cols_[colSlot(j, e)] : rows_[rowSlot(i, e)]; }
  Value* rowOkAt(int i, int j, int e) const { return cx_.transposed ? colOk_[colSlot(j, e)] : rowOk_[rowSlot(i, e)]; }
  Value* colAt(int i, int j, int e) const { return cx_.transposed ? rows_[rowSlot(i, e)] : cols_[colSlot(j, e)]; }
  Value* colOkAt(int i, int j, int e) const { return cx_.transposed ? rowOk_[rowSlot(i, e)] : colOk_[colSlot(j, e)]; }
  int rowSlot(int i, int e) const { return 2 * i + (e >= 2 ? 1 : 0); }
  int colSlot(int j, int e) const { return 2 * j + (e & 1); }

  // The value of `x` at accumulator element (i, j, e).
  Value* at(const EpiValue& x, int i, int j, int e) const {
    switch (x.kind) {
      case Kind::Full: return x.v[cx_.accIndex(i, j, e)];
      case Kind::Row: return x.v[colSlot(j, e)];
      case Kind::Col: return x.v[rowSlot(i, e)];
      case Kind::Scalar: return x.v[0];
    }
    return nullptr;
  }

  // Applies f to every element of the combined shape of the inputs.
  EpiValue map(const std::vector<const EpiValue*>& in, ScalarType elem,
               const std::function<Value*(const std::vector<Value*>&)>& f) {
    Kind k = Kind::Scalar;
    bool row = false, col = false;
    for (const EpiValue* x : in) {
      row |= x->kind == Kind::Row || x->kind == Kind::Full;
      col |= x->kind == Kind::Col || x->kind == Kind::Full;
    }
    k = row && col ? Kind::Full : row ? Kind::Row : col ? Kind::Col : Kind::Scalar;
    EpiValue r{k, elem, {}};
    forEach(k, [&](int i, int j, int e) {
      std::vector<Value*> args;
      for (const EpiValue* x : in) args.push_back(at(*x, i, j, e));
      r.v.push_back(f(args));
    });
    return r;
  }
  // Calls f(i, j, e) for each element a value of kind k holds, in its storage order.
  void forEach(Kind k, const std::function<void(int, int, int)>& f) const {
    switch (k) {
      case Kind::Full:
        for (int i = 0; i < cx_.mTiles(); ++i)
          for (int j = 0; j < cx_.nTiles(); ++j)
            for (int e = 0; e < 4; ++e) f(i, j, e);
        break;
      case Kind::Row:
        for (int j = 0; j < cx_.nTiles(); ++j)
          for (int e = 0; e < 2; ++e) f(0, j, e);
        break;
      case Kind::Col:
        for (int i = 0; i < cx_.mTiles(); ++i)
          for (int e = 0; e < 4; e += 2) f(i, 0, e);
        break;
      case Kind::Scalar: f(0, 0, 0); break;
    }
  }

  Value* toF32(Value* v) { return b_.cast(v, types::f32()); }
  // The f32 value a store of `elem` may round instead of v: v itself widened, or, when v is already
  // the rounding of an f32 to elem, that f32 (rounding it again gives the same value).
  Value* storeSource(Value* v, ScalarType elem) {
    const Operation* d = v->definingOp();
    if (d && d->is("arith.cast") && v->type().isScalar(elem) && d->operand(0)->type().isScalar(ScalarType::F32))
      return d->operand(0);
    return toF32(v);
  }
  Value* round(Value* f, ScalarType elem) { return b_.cast(f, Type::scalar(elem)); }

  // ---- memory ----
  Value* elementOffset(const Type& t, const std::vector<Value*>& pos) {
    return sm80::elementOffset(b_, t, pos, [this](const Extent& e) { return extent(e); });
  }
  Value* loadAddress(Value* base, const Type& t, const std::vector<Value*>& pos) {
    return sm80::loadAddress(b_, base, t, pos, [this](const Extent& e) { return extent(e); });
  }
  Value* extent(const Extent& e) { return e.isSymbolic() ? cx_.dims.at(e.sym) : b_.i32(e.value); }

  // Per-axis positions and the in-bounds predicate of a load at element (i, j, e) (or, with
  // blockStart, at the first element of the block); false after a diagnostic for an index this
  // strategy cannot address.
  bool position(const Operation& op, unsigned firstIndex, unsigned numIndices, int i, int j, int e, bool blockStart,
                std::vector<Value*>& pos, Value*& ok) {
    const Type& t = op.operand(0)->type();
    ok = nullptr;
    for (unsigned a = 0; a < numIndices; ++a) {
      const Value* idx = op.operand(firstIndex + a);
      Value* p = nullptr;
      Value* inb = nullptr;
      if (idx == cx_.g.batchArg) {
        p = cx_.batch;
        inb = b_.cmp("slt", p, extent(t.shape()[a]));
      } else if (cx_.g.groupValue && idx == cx_.g.groupValue) {
        // The block's group (i64), e.g. a per-group bias [G, N]; an id outside the axis reads {other}.
        p = cx_.group;
        Value* n = b_.cast(extent(t.shape()[a]), types::i64());
        inb = b_.andi(b_.cmp("sle", b_.i64(0), p), b_.cmp("slt", p, n));
      } else if (idx == coordM_) {
        p = blockStart ? cx_.m0 : rowAt(i, j, e);
        inb = blockStart ? b_.cmp("slt", p, cx_.dimM) : rowOkAt(i, j, e);
      } else if (idx == coordN_) {
        p = blockStart ? cx_.n0 : colAt(i, j, e);
        inb = blockStart ? b_.cmp("slt", p, cx_.dimN) : colOkAt(i, j, e);
      } else if (const Operation* d = idx->definingOp(); d && d->is("arith.constant") && d->attr("value")->isInt()) {
        int64_t v = d->attr("value")->asInt();
        p = b_.i32(v);
        inb = b_.andi(b_.cmp("sle", b_.i32(0), p), b_.cmp("slt", p, extent(t.shape()[a])));
      } else {
        diag() << cx_.cfg.strategy << " addresses epilogue tensors by the tile coordinates and integer "
                                      "constants only";
        return false;
      }
      pos.push_back(p);
      ok = ok ? b_.andi(ok, inb) : inb;
    }
    return true;
  }

  // How a load's values are kept: in fragment terms, varying along its rows (Col), its columns
  // (Row), both (Full), or neither.
  Kind loadKind(const Operation& op, bool scalar) const {
    if (scalar) return Kind::Scalar;
    bool usesM = false, usesN = false;
    for (unsigned a = 1; a < op.numOperands(); ++a) {
      usesM |= op.operand(a) == coordM_;
      usesN |= op.operand(a) == coordN_;
    }
    bool alongRows = cx_.transposed ? usesN : usesM, alongCols = cx_.transposed ? usesM : usesN;
    return alongRows && alongCols ? Kind::Full : alongRows ? Kind::Col : alongCols ? Kind::Row : Kind::Scalar;
  }

  bool lowerLoad(const Operation& op, bool scalar) {
    const Type& t = op.operand(0)->type();
    Value* base = cx_.args.at(op.operand(0)->definingOp()->stringAttr("name"));
    ScalarType elem = t.elem();
    double other = op.attr("other") ? op.attr("other")->asNumber() : 0.0;
    unsigned n = unsigned(op.numOperands()) - 1;
    std::vector<Value*> out;
    auto loadAt = [&](int i, int j, int e) -> Value* {
      std::vector<Value*> pos;
      Value* ok = nullptr;
      if (!position(op, 1, n, i, j, e, scalar, pos, ok)) return nullptr;
      Value* p = loadAddress(base, t, pos);
      std::vector<NamedAttr> attrs;
      if (other != 0.0) attrs.push_back({"other", other});
      return b_.op1("kern.ld_global", {p, ok ? ok : b_.i1(true)}, Type::scalar(elem), attrs);
    };
    EpiValue r{loadKind(op, scalar), elem, {}};
    if (cx_.earlyLoads) {
      if (auto it = cx_.earlyLoads->find(&op); it != cx_.earlyLoads->end()) {
        r.v = it->second;
        values_[op.result()] = r;
        return true;
      }
    }
    bool failed = false;
    EpiValue loaded{r.kind, elem, {}};
    // Two adjacent columns in one access where they may (pairLoadBytes): element e loads e + 1 too,
    // both as f32 (exact: all the epilogue's math is f32).
    const bool pairs = (r.kind == Kind::Full || r.kind == Kind::Row) && !cx_.transposed &&
                       pairLoadBytes(cx_.g, cx_.cfg, op);
    forEach(r.kind, [&](int i, int j, int e) {
      if (failed || (pairs && e % 2)) return;
      if (!pairs) {
        Value* v = loadAt(i, j, e);
        failed = !v;
        loaded.v.push_back(v);
        return;
      }
      std::vector<Value*> pos;
      Value* ok = nullptr;
      if ((failed = !position(op, 1, n, i, j, e, false, pos, ok))) return;
      auto [lo, hi] = loadPair(b_, loadAddress(base, t, pos), ok, elem, other);
      loaded.v.insert(loaded.v.end(), {lo, hi});
    });
    if (failed) return false;
    values_[op.result()] = loaded;
    return true;
  }

  bool lowerStore(const Operation& op) {
    const Type& t = op.operand(0)->type();
    unsigned first = cx_.g.batchArg ? 2 : 1;
    bool batchOk = !cx_.g.batchArg || (op.numOperands() == 5 && op.operand(1) == cx_.g.batchArg);
    if (op.numOperands() != first + 3 || !batchOk || op.operand(first) != coordM_ || op.operand(first + 1) != coordN_ ||
        contiguousMatrixAxis(t) != 1) {
      diag() << cx_.cfg.strategy << " stores the output tile to a row-major [" << cx_.g.dimM << ", " << cx_.g.dimN
             << "] tensor (dense, or strided with rows of unit stride) indexed by the tile coordinates";
      return false;
    }
    const EpiValue& v = value(op.operand(first + 2));
    ScalarType elem = t.elem();
    if (elem != ScalarType::BF16 && elem != ScalarType::F16 && elem != ScalarType::F32) {
      diag() << cx_.cfg.strategy << " stores bf16, f16 or f32 outputs, not " << scalarName(elem);
      return false;
    }
    if (cx_.storeToSmem) {
      // Staged for a TMA store (sm90 epilogue=tma): pairs, no masks (TMA clips the tile at the
      // tensor's edges); a 16-bit pair packed in one register, an f32 pair as its two values.
      for (int i = 0; i < cx_.mTiles(); ++i)
        for (int h = 0; h < 2; ++h)
          for (int j = 0; j < cx_.nTiles(); ++j) {
            int e = 2 * h;
            if (elem == ScalarType::F32) {
              cx_.storeToSmem(i, h, j, toF32(at(v, i, j, e)), toF32(at(v, i, j, e + 1)));
              continue;
            }
            Value* packed = b_.op1("kern.cvt_pack", {storeSource(at(v, i, j, e), elem), storeSource(at(v, i, j, e + 1), elem)},
                                   kern::fragType(elem));
            cx_.storeToSmem(i, h, j, packed, nullptr);
          }
      return true;
    }
    if (cx_.transposed) {  // a transposed fragment's pairs lie along M, not along a row of C
      diag() << cx_.cfg.strategy << " stores a transposed tile (swap_ab) through shared memory only";
      return false;
    }
    Value* base = cx_.matrixBase(op.operand(0));
    // The row stride: a dense output's row length, or a strided one's leading dimension.
    Value* ld = b_.cast(extent(matrixAccess(t).ld), types::i64());
    // Pairs of adjacent columns in one store need rows aligned to a pair (align_c); else one element each.
    const bool pairs = std::min(cx_.cfg.alignC, 16) >= 2 * bitWidth(elem) / 8;
    for (int i = 0; i < cx_.mTiles(); ++i)
      for (int h = 0; h < 2; ++h) {
        Value* rowPtr = b_.ptrAdd(base, b_.mul(b_.cast(rows_[2 * i + h], types::i64()), ld));
        for (int j = 0; j < cx_.nTiles(); ++j) {
          int e = 2 * h;
          Value* p = b_.ptrAdd(rowPtr, b_.cast(cols_[colSlot(j, e)], types::i64()));
          Value* ok = b_.andi(rowOk_[rowSlot(i, e)], colOk_[colSlot(j, e)]);
          Value* lo = at(v, i, j, e);
          Value* hi = at(v, i, j, e + 1);
          if (!pairs) {  // each element alone, the second column checked on its own
            b_.create("kern.st_global", {p, ok, single(lo, elem)}, {});
            Value* okHi = b_.andi(rowOk_[rowSlot(i, e)], colOk_[colSlot(j, e + 1)]);
            b_.create("kern.st_global", {b_.ptrAdd(p, b_.i64(1)), okHi, single(hi, elem)}, {});
          } else if (elem == ScalarType::F32) {
            b_.create("kern.st_global", {p, ok, toF32(lo), toF32(hi)}, {});
          } else {
            Value* packed = b_.op1("kern.cvt_pack", {storeSource(lo, elem), storeSource(hi, elem)}, kern::fragType(elem));
            b_.create("kern.st_global", {p, ok, packed}, {});
          }
        }
      }
    return true;
  }
  Value* single(Value* v, ScalarType elem) {
    return elem == ScalarType::F32 ? toF32(v) : b_.op1("kern.cvt_pack", {storeSource(v, elem)}, Type::scalar(elem));
  }

  bool lower(const Operation& op) {
    if (op.is("arith.constant")) return true;  // an index of a load (position) or a scalar operand (value)
    auto k = tile::kindOf(op);
    if (!k) return unsupported(op);
    ScalarType relem = op.numResults() ? op.result()->type().elem() : ScalarType::F32;
    switch (*k) {
      case tile::OpKind::Constant: {
        Value* c = b_.f32(op.attr("value")->asNumber());
        values_[op.result()] = EpiValue{Kind::Scalar, relem, {round(c, relem)}};
        return true;
      }
      case tile::OpKind::Load: return lowerLoad(op, false);
      case tile::OpKind::LoadScalar: return lowerLoad(op, true);
      case tile::OpKind::Store: return lowerStore(op);
      case tile::OpKind::Broadcast: values_[op.result()] = value(op.operand(0)); return true;
      case tile::OpKind::Cast: {
        if (isFp8(relem) || !isFloat(relem)) return unsupported(op);
        const EpiValue& x = value(op.operand(0));
        values_[op.result()] = map({&x}, relem, [&](const std::vector<Value*>& a) { return round(toF32(a[0]), relem); });
        return true;
      }
      case tile::OpKind::Scale:
      case tile::OpKind::Add:
      case tile::OpKind::Sub:
      case tile::OpKind::Mul:
      case tile::OpKind::Div:
      case tile::OpKind::Max:
      case tile::OpKind::Min: {
        tile::OpKind bin = *k == tile::OpKind::Scale ? tile::OpKind::Mul : *k;
        const EpiValue& x = value(op.operand(0));
        const EpiValue& y = value(op.operand(1));
        values_[op.result()] = map({&x, &y}, relem, [&](const std::vector<Value*>& a) {
          return round(lowerBinary(b_, bin, toF32(a[0]), toF32(a[1])), relem);
        });
        return true;
      }
      case tile::OpKind::Pow: {
        const EpiValue& x = value(op.operand(0));
        double e = op.attr("exponent")->asNumber();
        values_[op.result()] = map({&x}, relem, [&](const std::vector<Value*>& a) { return round(lowerPow(b_, toF32(a[0]), e), relem); });
        return true;
      }
      default:
        if (tile::isElementwiseUnary(*k)) {
          const EpiValue& x = value(op.operand(0));
          values_[op.result()] = map({&x}, relem, [&](const std::vector<Value*>& a) {
            return round(lowerUnary(b_, *k, toF32(a[0])), relem);
          });
          return true;
        }
        return unsupported(op);
    }
  }

  // A value of the epilogue; tile.scalar arguments are kernel parameters.
  const EpiValue& value(const Value* v) {
    auto it = values_.find(v);
    if (it != values_.end()) return it->second;
    const Operation* d = v->definingOp();
    if (d && (d->is("tile.constant") || d->is("arith.constant"))) {  // defined before the K loop, or a scalar
      ScalarType e = v->type().elem();
      return values_[v] = EpiValue{Kind::Scalar, e, {round(b_.f32(d->attr("value")->asNumber()), e)}};
    }
    KILN_ASSERT(d && d->is("tile.scalar"), "epilogue operand with no lowering");
    return values_[v] = EpiValue{Kind::Scalar, v->type().elem(), {cx_.args.at(d->stringAttr("name"))}};
  }

  bool unsupported(const Operation& op) {
    return cx_.diag.error(op.loc()) << cx_.cfg.strategy << " cannot lower '" << op.name() << "' in the epilogue";
  }
  InFlightDiagnostic diag() { return cx_.diag.error(b_.loc()); }

  Context& cx_;
  KernBuilder& b_;
  const Value *coordM_ = nullptr, *coordN_ = nullptr;
  Value *rowBase_ = nullptr, *colBase_ = nullptr;
  std::vector<Value*> rows_, rowOk_, cols_, colOk_;
  std::map<const Value*, EpiValue> values_;
};

}  // namespace

bool buildEpilogue(Context& cx, const std::vector<Value*>& acc) { return Epilogue(cx).run(acc); }
bool preloadEpilogue(Context& cx, bool wholeTiles) { return Epilogue(cx).preload(wholeTiles); }
bool prefetchEpilogue(Context& cx, Value* slot, int slots) { return Epilogue(cx).prefetch(slot, slots); }

}  // namespace kiln::sm80
