// The rowwise strategy entry (contract in rowwise.h): the kernel and its signature, the loop over
// row groups, and the passes over each row, on chip or streaming. The program's values are
// lowered by row_values.cpp, the reductions combined by row_reduce.cpp.
//
//   kern.kernel @softmax(%X, %Y, %M, %N) {threads = T, grid = [["M", rows_per_block]], ...}
//     scalars; thread indices; pointers of the [C] tensors
//     scf.for %rb = blockIdx.x to ceil(M / rows_per_block) step gridDim.x {
//       %row = %rb * rows_per_block + tid / G        (%ok = %row < M masks every access)
//       row pointers; row values of level 0
//       scf.if (N <= capacity) {                      the row fits: one read
//         loads of every vector; pass 0 (partials, shuffles); row values of level 1; pass 1; ...
//       } else {                                      it streams: a read per pass
//         scf.for %s = 0 to ceil(N / capacity) (partials) { loads, updates, stores }; ...
//       }
//       row stores (the row's first thread)
//     }
#include "schedule/rowwise/rowwise.h"

#include <functional>
#include <set>

#include "dialects/kern/kern_ops.h"
#include "dialects/kern/kernel_launch.h"
#include "schedule/lower_programs.h"
#include "schedule/rowwise/row_reduce.h"

namespace kiln {
using namespace ir;

namespace rowwise {

Geometry geometryOf(const Config& c, const RowProgram& rp) {
  Geometry g;
  g.G = c.rowThreads;
  g.T = c.blockThreads;
  g.V = c.scalar || rp.dimC.empty() ? 1 : 16 / rp.elemBytes;
  g.vectors = c.vectors;
  return g;
}

namespace {

class Lowering {
 public:
  explicit Lowering(Context& cx) : cx_(cx), b_(cx.b), vals_(cx) {}

  void build() {
    emitTop();
    Value* rowsRoundedUp = b_.addConst(cx_.dimR, cx_.geo.rowsPerBlock() - 1);
    Value* rowBlocks = b_.div(rowsRoundedUp, b_.i32(cx_.geo.rowsPerBlock()));
    Value* bx = b_.op1("kern.block_id", {}, types::i32(), {{"dim", "x"}});
    Value* nb = b_.op1("kern.grid_dim", {}, types::i32(), {{"dim", "x"}});
    forLoop(bx, rowBlocks, nb, {}, [&](Value* rb, const std::vector<Value*>&) {
      rowBody(rb);
      return std::vector<Value*>{};
    });
  }

 private:
  // scf.for (lb, ub, step) carrying `inits`; `body` gets the induction variable and the carried
  // values and returns the next ones. Returns the loop's results.
  std::vector<Value*> forLoop(Value* lb, Value* ub, Value* step, const std::vector<Value*>& inits,
                              const std::function<std::vector<Value*>(Value*, const std::vector<Value*>&)>& body) {
    std::vector<Value*> operands{lb, ub, step};
    std::vector<Type> types;
    for (Value* v : inits) {
      operands.push_back(v);
      types.push_back(v->type());
    }
    Operation* loop = b_.create("scf.for", operands, types, {}, 1);
    Block* blk = loop->region(0).addBlock();
    Value* iv = blk->addArgument(types::i32(), "i");
    std::vector<Value*> carried;
    for (Value* v : inits) carried.push_back(blk->addArgument(v->type()));
    {
      InsertionGuard guard(b_);
      b_.setInsertionPointToEnd(blk);
      std::vector<Value*> next = body(iv, carried);
      b_.create("scf.yield", next, {});
    }
    std::vector<Value*> results;
    for (unsigned i = 0; i < loop->numResults(); ++i) results.push_back(loop->result(i));
    return results;
  }

  // Thread indices, the scalars, the pointers of the [C] tensors, the reduction buffer.
  void emitTop() {
    const Geometry& g = cx_.geo;
    cx_.tid = b_.named(b_.op1("kern.thread_id", {}, types::i32()), "tid");
    cx_.gt = b_.named(b_.rem(cx_.tid, b_.i32(g.G)), "gt");
    cx_.rowInBlock = b_.named(b_.div(cx_.tid, b_.i32(g.G)), "rg");
    if (g.warpsPerRow() > 1) cx_.warpInRow = b_.named(b_.div(cx_.gt, b_.i32(32)), "wr");
    cx_.threadCol = b_.named(b_.mulConst(cx_.gt, g.V), "col");
    for (const Operation* op : cx_.rp.ops)
      if (op->numResults() && cx_.rp.spaceOf(op->result()) == rowwise::Space::Scalar) vals_.emitScalar(*op);
    Value* first = b_.cast(cx_.threadCol, types::i64());
    for (const Operation* op : cx_.rp.ops)
      if ((op->is("tile.load") || op->is("tile.store")) && op->operand(0)->type().rank() == 1 &&
          op->operand(0)->type().shape()[0] == Extent::of(cx_.rp.dimC) && !cx_.threadPtr.count(op->operand(0)))
        cx_.threadPtr[op->operand(0)] = b_.ptrAdd(tensorArg(op->operand(0)), first);
    if (reduceSmemBytes(cx_.rp, g) > 0)
      cx_.reduceBuf = b_.op1("kern.smem_alloc", {},
                             kern::smemType(ScalarType::F32, 1, mostPartials(cx_.rp), reduceSlots(g), Swizzle{}),
                             {{"offset", int64_t(0)}});
  }

  Value* tensorArg(const Value* tensor) { return cx_.params.at(tensor->definingOp()->stringAttr("name")); }

  void rowBody(Value* rb) {
    const Geometry& g = cx_.geo;
    b_.setLoc(cx_.rp.forTiles->loc());
    cx_.row = b_.named(b_.add(b_.mulConst(rb, g.rowsPerBlock()), cx_.rowInBlock), "row");
    cx_.rowOk = b_.named(b_.cmp("slt", cx_.row, cx_.dimR), "row_ok");
    cx_.rowVals.clear();
    // The [R, C] tensors' pointers to this row, at the thread's first column.
    Value* rowOff = nullptr;
    for (const Operation* op : cx_.rp.ops) {
      const Value* t = op->is("tile.load") || op->is("tile.store") ? op->operand(0) : nullptr;
      if (!t || t->type().rank() != 2 || cx_.threadPtr.count(t)) continue;
      if (!rowOff) {
        Value* row64 = b_.cast(cx_.row, types::i64());
        Value* rowStart = b_.mul(row64, b_.cast(cx_.dimC, types::i64()));
        rowOff = b_.add(rowStart, b_.cast(cx_.threadCol, types::i64()));
      }
      cx_.threadPtr[t] = b_.ptrAdd(tensorArg(t), rowOff);
    }
    cx_.plan = &cx_.rp.streaming;
    emitRowOps(0);  // the same in both plans: nothing of level 0 waits for a reduction
    int passes = cx_.rp.streaming.passes;
    if (passes >= 2) {
      auto before = cx_.rowVals;
      Value* fits = b_.cmp("sle", cx_.dimC, b_.i32(g.capacity()));
      Operation* branch = b_.create("scf.if", {fits}, {}, {}, 2);
      for (unsigned arm = 0; arm < 2; ++arm) {
        InsertionGuard guard(b_);
        b_.setInsertionPointToEnd(branch->region(arm).addBlock());
        cx_.rowVals = before;
        arm == 0 ? onChip() : streaming();
        b_.create("scf.yield", {}, {});
      }
    } else {
      if (passes == 1) streaming();
      finishRow(passes);
    }
  }

  // The row values of `level` (computed once the reductions before it are known).
  void emitRowOps(int level) {
    for (const Operation* op : cx_.rp.ops)
      if (op->numResults() && cx_.rp.spaceOf(op->result()) == rowwise::Space::Row && !op->is("tile.reduce_axis") &&
          cx_.plan->levelOf(op->result()) == level)
        vals_.emitRow(*op);
  }

  // After the last pass: the remaining row values, then the row stores.
  void finishRow(int passes) {
    for (int l = std::max(passes, 1); l <= maxLevel(); ++l) emitRowOps(l);
    for (const Operation* op : cx_.rp.ops)
      if (op->is("tile.store") && cx_.rp.spaceOf(op->operand(op->numOperands() - 1)) == rowwise::Space::Row)
        vals_.store(*op, nullptr);
  }

  int maxLevel() const {
    int m = 0;
    for (const auto& [v, l] : cx_.plan->level) m = std::max(m, l);
    return m;
  }

  // Vector j of the step starting at `stepCol` (i32, null for the first step) / `stepOffset` (i64).
  Chunk chunk(int j, Value* stepCol, Value* stepOffset) {
    const Geometry& g = cx_.geo;
    Chunk ch;
    ch.stepOffset = stepOffset;
    ch.offset = int64_t(j) * g.stride();
    Value* col = b_.addConst(cx_.threadCol, ch.offset);
    ch.col0 = stepCol ? b_.add(stepCol, col) : col;
    ch.colOk = b_.cmp("slt", ch.col0, cx_.dimC);
    ch.ok = b_.andi(cx_.rowOk, ch.colOk);
    return ch;
  }

  // The element stores pass p makes, and the loads its consumers read.
  std::vector<const Operation*> storesOf(int p) const {
    std::vector<const Operation*> r;
    for (const Operation* op : cx_.rp.ops)
      if (op->is("tile.store") && cx_.rp.spaceOf(op->operand(op->numOperands() - 1)) == rowwise::Space::Elem &&
          cx_.plan->levelOf(op->operand(op->numOperands() - 1)) == p)
        r.push_back(op);
    return r;
  }
  std::vector<const Operation*> loadsOf(int p) const {
    std::set<const Operation*> seen;
    std::vector<const Operation*> loads;
    std::function<void(const Value*)> visit = [&](const Value* v) {
      const Operation* d = v->definingOp();
      if (!d || !seen.insert(d).second || d->parentOp() != cx_.rp.forTiles) return;
      if (d->is("tile.load") && cx_.rp.spaceOf(d->result()) >= rowwise::Space::Col) loads.push_back(d);
      for (const Value* o : d->operands()) visit(o);
    };
    for (size_t i = 0; i < cx_.rp.reductions.size(); ++i) {
      const Reduction& r = cx_.rp.reductions[i];
      if (cx_.plan->pass[i] == p) visit(cx_.plan->onlineMax[i] >= 0 ? r.onlineInput : r.op->operand(0));
    }
    for (const Operation* st : storesOf(p)) visit(st->operand(st->numOperands() - 1));
    return loads;
  }

  // One pass over the vectors `chunks` of a step: loads first (all in flight at once), then the
  // partials' updates and the stores.
  std::vector<Value*> passStep(int p, std::vector<Chunk>& chunks, PassReductions& red, std::vector<Value*> acc) {
    auto loads = loadsOf(p);
    for (Chunk& ch : chunks)
      for (const Operation* ld : loads) vals_.prefetch(*ld, &ch);
    auto stores = storesOf(p);
    for (Chunk& ch : chunks) {
      if (!red.empty()) acc = red.update(acc, ch);
      for (const Operation* st : stores) vals_.store(*st, &ch);
    }
    return acc;
  }

  // The row fits on chip: its vectors are read once and kept through every pass (the plain forms:
  // passes cost no memory here, and each element's exp is computed once).
  void onChip() {
    cx_.plan = &cx_.rp.onChip;
    std::vector<Chunk> chunks;
    for (int j = 0; j < cx_.geo.vectors; ++j) chunks.push_back(chunk(j, nullptr, nullptr));
    for (int p = 0; p < cx_.plan->passes; ++p) {
      if (p > 0) emitRowOps(p);
      PassReductions red(cx_, vals_, p);
      auto acc = passStep(p, chunks, red, red.init());
      if (!red.empty()) red.finish(acc);
    }
    finishRow(cx_.plan->passes);
  }

  // The vectors of step s (i32) of the row.
  std::vector<Chunk> stepChunks(Value* s) {
    const Geometry& g = cx_.geo;
    Value* stepCol = b_.mulConst(s, g.capacity());
    Value* stepOffset = b_.cast(stepCol, types::i64());
    std::vector<Chunk> chunks;
    for (int j = 0; j < g.vectors; ++j) chunks.push_back(chunk(j, stepCol, stepOffset));
    return chunks;
  }

  // The raw words of `loads` at every vector of `chunks`, in (vector, load, word) order.
  std::vector<Value*> issueLoads(const std::vector<const Operation*>& loads, std::vector<Chunk>& chunks) {
    std::vector<Value*> words;
    for (Chunk& ch : chunks)
      for (const Operation* ld : loads)
        for (Value* w : vals_.loadWords(*ld, &ch)) words.push_back(w);
    return words;
  }

  // The row streams: each pass reads it, `vectors` vectors per thread and step. When streaming is
  // the kernel's only path (a program of one pass), the steps are software-pipelined: the loop
  // carries the next step's loads, issued before the current step's math, so a step's memory
  // latency hides behind the previous step's work (past the row's end they are masked off). A
  // kernel that also holds rows on chip does not: the carried words would raise the register
  // count of both paths, and the on-chip one is what rows that fit run.
  void streaming() {
    cx_.plan = &cx_.rp.streaming;
    const Geometry& g = cx_.geo;
    bool pipelined = cx_.plan->passes <= 1;
    Value* colsRoundedUp = b_.addConst(cx_.dimC, g.capacity() - 1);
    Value* steps = b_.div(colsRoundedUp, b_.i32(g.capacity()));
    for (int p = 0; p < cx_.plan->passes; ++p) {
      if (p > 0) emitRowOps(p);
      PassReductions red(cx_, vals_, p);
      auto loads = pipelined ? loadsOf(p) : std::vector<const Operation*>{};
      std::vector<Value*> inits = red.init();
      size_t nAcc = inits.size();
      if (pipelined) {
        std::vector<Chunk> first = stepChunks(b_.i32(0));
        for (Value* w : issueLoads(loads, first)) inits.push_back(w);
      }
      Value* zero = b_.i32(0);
      Value* one = b_.i32(1);
      auto out = forLoop(zero, steps, one, inits, [&](Value* s, const std::vector<Value*>& carried) {
        std::vector<Value*> ahead;
        if (pipelined) {
          std::vector<Chunk> next = stepChunks(b_.addConst(s, 1));
          ahead = issueLoads(loads, next);
        }
        std::vector<Chunk> chunks = stepChunks(s);
        size_t at = nAcc;
        for (Chunk& ch : chunks)
          for (const Operation* ld : loads) {
            size_t n = vals_.wordsOf(*ld);
            ch.words[ld->result()] = Elems(carried.begin() + long(at), carried.begin() + long(at + n));
            at += n;
          }
        std::vector<Value*> acc = passStep(p, chunks, red, std::vector<Value*>(carried.begin(), carried.begin() + long(nAcc)));
        acc.insert(acc.end(), ahead.begin(), ahead.end());
        return acc;
      });
      if (!red.empty()) red.finish(std::vector<Value*>(out.begin(), out.begin() + long(nAcc)));
    }
    if (cx_.plan->passes >= 2) finishRow(cx_.plan->passes);
  }

  Context& cx_;
  KernBuilder& b_;
  Values vals_;
};

}  // namespace
}  // namespace rowwise

std::unique_ptr<Operation> lowerRowwise(const Operation& program, const Target& target, const Config& config,
                                        DiagnosticEngine& diag) {
  auto rp = rowwise::analyzeRows(program, target, diag);
  if (!rp) return nullptr;
  if (!validate(config, target, OperandInfo{rp->elemBytes, rp->elemBytes}, diag, program.loc())) return nullptr;
  rowwise::Geometry geo = rowwise::geometryOf(config, *rp);
  kern::KernelLaunch launch;
  launch.name = program.stringAttr("sym_name");
  for (const auto& p : rp->params) launch.params.push_back(p.name);
  launch.threads = geo.T;
  launch.smemBytes = rowwise::reduceSmemBytes(*rp, geo);
  launch.grid = {kern::KernelLaunch::Axis{1, {{rp->dimR, geo.rowsPerBlock()}}}};
  if (geo.V > 1) launch.divisibility.push_back({rp->dimC, geo.V});
  // Tensors read in 16-byte vectors ([C], [R, C]) start 16-byte aligned; [R] ones, element-aligned.
  for (const auto& p : rp->params) {
    if (!p.decl || p.decl->is("tile.scalar")) continue;
    const Type& t = p.decl->result()->type();
    bool vectors = geo.V > 1 && (t.rank() == 2 || t.shape()[0] == Extent::of(rp->dimC));
    launch.alignment.push_back({p.name, vectors ? 16 : bitWidth(p.type.elem()) / 8});
  }
  launch.persistent = config.blocksPerSm > 0;
  launch.persistentPerSm = std::max(1, config.blocksPerSm);
  std::vector<NamedAttr> attrs = kern::kernelAttributes(launch, {{"target", target.name}, {"config", config.str()}});
  auto kernel = Operation::create(program.loc(), "kern.kernel", {}, {}, attrs, 1);
  Block* body = kernel->region(0).addBlock();
  KernBuilder b(body);
  b.setLoc(program.loc());
  rowwise::Context cx{*rp, config, target, b, diag, geo};
  for (const auto& p : rp->params) cx.params[p.name] = body->addArgument(p.type, p.name);
  cx.dimR = cx.params.at(rp->dimR);
  cx.dimC = rp->dimC.empty() ? b.i32(1) : cx.params.at(rp->dimC);
  rowwise::Lowering(cx).build();
  return kernel;
}

// The pass: every tile.program becomes a kern.kernel of the rowwise strategy ({target, config}
// attributes of the program choose; defaults: sm_80, the default rowwise config).
bool lowerRowwisePass(Module& m, DiagnosticEngine& diag) {
  return lowerPrograms(m, *findLowering("lower-rowwise"), diag);
}

}  // namespace kiln
