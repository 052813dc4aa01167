// Row program recognition and pass planning (the accepted shape is drawn in row_program.h).
#include "schedule/rowwise/row_program.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "dialects/kern/kern_ops.h"
#include "dialects/tile/tile_ops.h"
#include "schedule/gemm_analysis.h"

namespace kiln::rowwise {
using namespace ir;
using tile::OpKind;

namespace {

const char* kWho = "rowwise";

// The tensor argument a value is (its tile.input / tile.output), or null.
const Operation* tensorDecl(const Value* v) {
  const Operation* d = v->definingOp();
  return d && (d->is("tile.input") || d->is("tile.output")) ? d : nullptr;
}

class Analysis {
 public:
  Analysis(const Operation& program, const Target& t, DiagnosticEngine& d) : t_(t), d_(d) { rp_.program = &program; }

  std::optional<RowProgram> run() {
    if (!findLoop() || !walkBody() || !plan() || !collectParams()) return std::nullopt;
    return std::move(rp_);
  }

 private:
  InFlightDiagnostic fail(const Operation& op) { return d_.error(op.loc()); }

  bool findLoop() {
    const Operation& p = *rp_.program;
    const Operation* dot = nullptr;
    p.walk([&](const Operation& op) { dot = dot ? dot : op.is("tile.dot") || op.is("tile.dot_scaled") ? &op : nullptr; });
    if (dot)
      return fail(*dot) << kWho << " lowers programs without a matrix product; this '" << dot->name()
                        << "' is a GEMM, which sm80_multistage and sm90_ws_persistent lower";
    for (const auto& op : p.body().operations()) {
      if (op->is("tile.scalar")) rp_.space[op->result()] = Space::Scalar;
      if (op->is("tile.input") || op->is("tile.output") || op->is("tile.scalar")) continue;
      if (!op->is("tile.for_tiles"))
        return fail(*op) << kWho << " lowers the ops inside the program's tile.for_tiles; move '" << op->name()
                         << "' into the loop";
      if (rp_.forTiles)
        return fail(*op) << kWho << " lowers one tile.for_tiles per program; this program has two: write each as its "
                                    "own program";
      rp_.forTiles = op.get();
    }
    if (!rp_.forTiles) return fail(p) << kWho << " lowers a program's tile.for_tiles, and this program has none";
    const Operation& ft = *rp_.forTiles;
    if (!ft.stringAttr("batch").empty())
      return fail(ft) << kWho << " does not lower a batched tile.for_tiles {batch = \"" << ft.stringAttr("batch")
                      << "\"}: fold the batch into the row dim (a [B * M, N] tensor)";
    auto dims = ft.stringsAttr("dims");
    if (dims.size() > 2)
      return fail(ft) << kWho << " lowers tile loops over rows ([R]) or over rows and columns ([R, C]); this one tiles "
                      << dims.size() << " dims";
    rp_.dimR = dims[0];
    rp_.rowCoord = ft.body().argument(0);
    if (dims.size() == 2) {
      rp_.dimC = dims[1];
      rp_.colCoord = ft.body().argument(1);
    }
    return true;
  }

  // The space of a value's type; false after a diagnostic naming `op` for a shape rowwise has no
  // space for.
  bool classify(const Operation& op, const Value* v) {
    const Type& t = v->type();
    if (t.isKind("coord")) return true;
    Space s;
    if (t.isScalar()) {
      s = Space::Scalar;
    } else if (t.rank() == 1 && t.shape()[0] == Extent::of(rp_.dimR)) {
      s = Space::Row;
    } else if (t.rank() == 1 && !rp_.dimC.empty() && t.shape()[0] == Extent::of(rp_.dimC)) {
      s = Space::Col;
    } else if (t.rank() == 2 && !rp_.dimC.empty() && t.shape() == Shape{Extent::of(rp_.dimR), Extent::of(rp_.dimC)}) {
      s = Space::Elem;
    } else {
      std::string c = rp_.dimC.empty() ? "C" : rp_.dimC;
      return fail(op) << kWho << " works on tiles over [" << rp_.dimR << "], [" << c << "] and [" << rp_.dimR << ", "
                      << c << "] (the rows and the spanned dim); '" << op.name() << "' makes a " << t.str();
    }
    rp_.space[v] = s;
    return true;
  }

  bool walkBody() {
    for (const auto& opPtr : rp_.forTiles->body().operations()) {
      const Operation& op = *opPtr;
      if (op.is("tile.yield")) continue;
      if (op.is("tile.span")) {
        std::string dim = op.stringAttr("dim");
        if (!rp_.dimC.empty())
          return fail(op) << kWho << " spans one dim of a row; this program's rows are along '" << rp_.dimC
                          << "', and 'tile.span' spans '" << dim << "' too";
        rp_.dimC = dim;
        rp_.colCoord = op.result();
        continue;
      }
      if (!checkOp(op)) return false;
      for (const auto& r : op.results())
        if (!classify(op, r.get())) return false;
      rp_.ops.push_back(&op);
    }
    return true;
  }

  bool checkOp(const Operation& op) {
    auto k = tile::kindOf(op);
    if (!k) return fail(op) << kWho << " cannot lower '" << op.name() << "' inside a tile loop";
    switch (*k) {
      case OpKind::Reduce:
        return fail(op) << kWho << " does not lower a 'tile.reduce' loop over '" << op.stringAttr("dim")
                        << "': reduce along a whole dim with tile.reduce_axis (p.span and kiln::sum in the DSL), and "
                        << kWho << " picks how many passes each row takes";
      case OpKind::GroupIndex:
      case OpKind::LoadScalar:
        return fail(op) << kWho << " cannot lower '" << op.name()
                        << "': load a [" << rp_.dimR << "] tile with tile.load instead";
      case OpKind::Load:
      case OpKind::Store: return checkAccess(op);
      case OpKind::Cast: return checkCast(op);
      case OpKind::ReduceAxis: {
        const Type& x = op.operand(0)->type();
        if (x.rank() != 2)
          return fail(op) << kWho << " reduces [" << rp_.dimR << ", " << op.stringAttr("dim") << "] tiles along '"
                          << op.stringAttr("dim") << "' (one value per row); this one reduces a " << x.str();
        return true;
      }
      case OpKind::Iota: {
        const Value* c = op.operand(0);
        if (c != rp_.rowCoord && c != rp_.colCoord)
          return fail(op) << kWho << " takes positions of the tile loop's coord or the span only";
        return true;
      }
      default: return true;
    }
  }

  bool fp8Ok(const Operation& op, ScalarType e) {
    if (!isFp8(e) || t_.cvtFp8) return true;
    return fail(op) << kWho << " converts " << scalarName(e) << " with cvt ..." << (e == ScalarType::F8E4M3 ? "e4m3x2" : "e5m2x2")
                    << " for '" << op.name() << "', which needs sm_89 or newer; " << t_.name
                    << " has none (compile for sm_89, sm_90a or sm_120)";
  }

  bool checkCast(const Operation& op) {
    ScalarType from = op.operand(0)->type().elem(), to = op.result()->type().elem();
    bool ok = (isFloat(from) && isFloat(to)) || ((from == ScalarType::I32 || from == ScalarType::Index) && to == ScalarType::F32);
    if (!ok)
      return fail(op) << kWho << " casts between float types and from i32 to f32; 'tile.cast' from "
                      << scalarName(from) << " to " << scalarName(to) << " is not lowered yet";
    return fp8Ok(op, from) && fp8Ok(op, to);
  }

  // tile.load / tile.store: a tensor argument [R], [C] or row-major [R, C] at the loop's coords.
  bool checkAccess(const Operation& op) {
    const Value* tensor = op.operand(0);
    const Operation* decl = tensorDecl(tensor);
    if (!decl) return fail(op) << kWho << " accesses tensor arguments only";
    std::string name = decl->stringAttr("name");
    const Type& t = tensor->type();
    size_t numIdx = op.numOperands() - 1 - (op.is("tile.store") ? 1 : 0);
    std::vector<const Value*> want;
    for (const auto& e : t.shape()) {
      if (e == Extent::of(rp_.dimR)) want.push_back(rp_.rowCoord);
      else if (!rp_.dimC.empty() && e == Extent::of(rp_.dimC)) want.push_back(rp_.colCoord);
      else want.push_back(nullptr);
    }
    bool ok = numIdx == t.rank() && t.rank() <= 2 && std::find(want.begin(), want.end(), nullptr) == want.end();
    for (size_t i = 0; ok && i < numIdx; ++i) ok = op.operand(unsigned(1 + i)) == want[i];
    if (!ok || (t.rank() == 2 && want[0] != rp_.rowCoord))
      return fail(op) << kWho << " reads and writes tensors [" << rp_.dimR << "], [C] and [" << rp_.dimR
                      << ", C] (C the spanned dim) at the tile loop's coords; '" << op.name() << "' of '" << name
                      << "' (" << t.str() << ") is not one of those";
    if (t.rank() == 2 && !isRowMajor2d(t))
      return fail(op) << kWho << " reads rows of [" << rp_.dimR << ", C] tensors with vector loads, so '" << name
                      << "' must be row-major (its last dim contiguous); it is " << t.str();
    int bytes = bitWidth(t.elem()) / 8;
    bool perElem = t.rank() == 2 || want[0] == rp_.colCoord;
    if (perElem && (bytes < 1 || bytes > 4 || t.elem() == ScalarType::Index))
      return fail(op) << kWho << " moves 8-, 16- and 32-bit elements along a row; '" << name << "' holds "
                      << scalarName(t.elem());
    if (!perElem && t.elem() == ScalarType::I1)
      return fail(op) << kWho << " does not load or store i1 tensors ('" << name << "')";
    if (op.is("tile.store") && want.size() == 1 && want[0] == rp_.colCoord)
      return fail(op) << kWho << " writes whole rows ([" << rp_.dimR << ", C]) or one value per row (["
                      << rp_.dimR << "]); 'tile.store' of a [C] tile into '" << name
                      << "' would be written by every row: store it from a program over C";
    if (perElem) rp_.elemBytes = std::min(rp_.elemBytes, bytes);
    return fp8Ok(op, t.elem());
  }

  // sum(exp(a - broadcast(max(a)))), both along C and in f32: the max's reduction and a.
  std::pair<int, const Value*> onlinePartner(const Operation& sum) const {
    auto def = [](const Value* v, const char* name) -> const Operation* {
      const Operation* d = v->definingOp();
      return d && d->is(name) ? d : nullptr;
    };
    if (sum.stringAttr("kind") != "sum" || sum.result()->type().elem() != ScalarType::F32) return {-1, nullptr};
    const Operation* e = def(sum.operand(0), "tile.exp");
    const Operation* sub = e ? def(e->operand(0), "tile.sub") : nullptr;
    const Operation* bc = sub ? def(sub->operand(1), "tile.broadcast") : nullptr;
    const Operation* mx = bc ? def(bc->operand(0), "tile.reduce_axis") : nullptr;
    if (!mx || mx->stringAttr("kind") != "max" || mx->operand(0) != sub->operand(0) ||
        mx->result()->type().elem() != ScalarType::F32)
      return {-1, nullptr};
    for (size_t i = 0; i < rp_.reductions.size(); ++i)
      if (rp_.reductions[i].op == mx) return {int(i), sub->operand(0)};
    return {-1, nullptr};
  }

  // sum(select(cmp eq (iota(C), c), x, +0)) in f32, c a row value and x a [R, C] tensor's f32
  // load or float cast of one (either side of the comparison): the load and c.
  std::pair<const Operation*, const Value*> pickOf(const Operation& sum) const {
    auto def = [](const Value* v, const char* name) -> const Operation* {
      while (const Operation* d = v->definingOp()) {
        if (!d->is("tile.broadcast")) return d->is(name) ? d : nullptr;
        v = d->operand(0);
      }
      return nullptr;
    };
    if (sum.stringAttr("kind") != "sum" || sum.result()->type().elem() != ScalarType::F32) return {nullptr, nullptr};
    const Operation* sel = def(sum.operand(0), "tile.select");
    const Operation* cmp = sel ? def(sel->operand(0), "tile.cmp") : nullptr;
    const Operation* zero = sel ? def(sel->operand(2), "tile.constant") : nullptr;
    if (!cmp || cmp->stringAttr("pred") != "eq" || !zero || zero->attr("value")->asNumber() != 0.0 ||
        std::signbit(zero->attr("value")->asNumber()))
      return {nullptr, nullptr};
    const Value* column = nullptr;
    for (unsigned i = 0; i < 2 && !column; ++i) {
      const Operation* iota = def(cmp->operand(i), "tile.iota");
      const Value* c = cmp->operand(1 - i);
      while (c->definingOp() && c->definingOp()->is("tile.broadcast")) c = c->definingOp()->operand(0);
      if (iota && iota->operand(0) == rp_.colCoord && iota->result()->type().elem() == ScalarType::I32 &&
          rp_.spaceOf(c) == Space::Row && c->type().elem() == ScalarType::I32)
        column = c;
    }
    const Value* x = sel->operand(1);
    const Operation* ld = x->definingOp();
    if (ld && ld->is("tile.cast") && isFloat(ld->operand(0)->type().elem())) ld = ld->operand(0)->definingOp();
    if (!column || x->type().elem() != ScalarType::F32 || !ld || !ld->is("tile.load") ||
        ld->operand(0)->type().rank() != 2 || !isFloat(ld->operand(0)->type().elem()))
      return {nullptr, nullptr};
    return {ld, column};
  }

  // The reductions, with the online partners they could have and the picks they are.
  bool plan() {
    for (const Operation* op : rp_.ops)
      if (op->is("tile.reduce_axis")) {
        Reduction r{op};
        auto [mx, a] = onlinePartner(*op);
        r.onlineMax = mx;
        r.onlineInput = a;
        std::tie(r.pickLoad, r.pickColumn) = pickOf(*op);
        rp_.reductions.push_back(r);
      }
    rp_.onChip = makePlan(false);
    rp_.streaming = makePlan(true);
    return true;
  }

  Plan makePlan(bool online) const {
    Plan pl;
    pl.online = online;
    size_t next = 0;  // the reductions come in program order
    for (const Operation* op : rp_.ops) {
      int lvl = 0;
      for (const Value* v : op->operands()) lvl = std::max(lvl, pl.levelOf(v));
      if (op->is("tile.reduce_axis") && rp_.reductions[next].pickLoad) {
        const Reduction& r = rp_.reductions[next++];
        pl.pass.push_back(-1);
        pl.onlineMax.push_back(-1);
        lvl = pl.levelOf(r.pickColumn);
      } else if (op->is("tile.reduce_axis")) {
        const Reduction& r = rp_.reductions[next++];
        int pass = lvl, partner = -1;
        if (online && r.onlineMax >= 0 && pl.pass[size_t(r.onlineMax)] == pl.levelOf(r.onlineInput)) {
          partner = r.onlineMax;
          pass = pl.pass[size_t(r.onlineMax)];
        }
        pl.pass.push_back(pass);
        pl.onlineMax.push_back(partner);
        lvl = pass + 1;
      }
      for (const auto& res : op->results()) pl.level[res.get()] = lvl;
      if (op->is("tile.store") && rp_.spaceOf(op->operand(op->numOperands() - 1)) == Space::Elem)
        pl.passes = std::max(pl.passes, lvl + 1);
    }
    for (int p : pl.pass) pl.passes = std::max(pl.passes, p + 1);
    return pl;
  }

  bool collectParams() {
    const Operation& p = *rp_.program;
    for (const auto& op : p.body().operations())
      if (op->is("tile.input") || op->is("tile.output"))
        rp_.params.push_back({op->stringAttr("name"), op.get(), kern::ptrType(op->result()->type().elem())});
    for (const auto& op : p.body().operations())
      if (op->is("tile.scalar")) {
        const Type& t = op->result()->type();
        if (!t.isScalar(ScalarType::F32) && !t.isScalar(ScalarType::I32))
          return fail(*op) << kWho << " passes f32 and i32 scalar arguments, not " << t.str();
        rp_.params.push_back({op->stringAttr("name"), op.get(), t});
      }
    for (const auto& d : p.stringsAttr("dims")) rp_.params.push_back({d, nullptr, types::i32()});
    return true;
  }

  const Target& t_;
  DiagnosticEngine& d_;
  RowProgram rp_;
};

}  // namespace

std::optional<RowProgram> analyzeRows(const Operation& program, const Target& target, DiagnosticEngine& diag) {
  return Analysis(program, target, diag).run();
}

}  // namespace kiln::rowwise
