// The sm90_ws_persistent strategy entry (contract in lower.h). It checks the program and the
// config, creates the kernel with its parameters, shared-memory rings and mbarriers (kernel.cpp),
// and the one CTA-wide persistent tile loop whose body holds the consumers' role (consumer.cpp),
// its K loop issuing the copies (producer.cpp) from one thread. The strategy's passes then give
// the copies a producer role, write the staged epilogue's protocol and FP8 promotion (sm90/);
// partition-roles splits the loop into one loop per role, expand-tile-loop writes the tile
// scheduler, set-role-registers gives each role its registers (docs/sm90-passes.md).
//
//   kern.kernel {...} {                       kernel.cpp: rings, barriers, their initialization
//     kern.tile_loop(M, N, batches) {tile = [bm, bn], raster, group_m, cluster?} (iter, m0, n0, batch):
//       stage0 = (iter * ksteps) % stages; phase0 = (iter * ksteps / stages) % 2
//       (split_k=S: {splits = S} (..., tile, split); each unit runs ksteps = ceil(ktiles / S) K steps
//        from kbase = split * ksteps)
//       (stream_k: kern.tile_loop(M, N, batches, ktiles) {stream_k} (..., kbase, ksteps, done,
//        peers); each unit runs its ksteps from kbase, and done replaces iter * ksteps above)
//       kern.role "consumer" [warpgroups 1..]    { K loop: one thread's TMA loads, wgmma; epilogue }
//                                                 (consumers=pingpong: only the warpgroup whose
//                                                 turn it is, iter % 2 == wg)
//       (sm90-warp-specialize then moves the loads to kern.role "producer" [warpgroup 0])
//     epilogue=tma: each consumer warpgroup's elected thread waits for its last TMA stores
//   }
//   in a cluster: cluster_barrier  (no block exits while a peer may still touch its shared memory)
#include "schedule/sm90/lower.h"

#include <algorithm>

#include "schedule/lower_programs.h"
#include "schedule/sm90/lowering.h"

namespace kiln {
using namespace ir;

namespace {

// One region op with its block, built by `fill` at the end of that block.
template <typename F>
void region(KernBuilder& b, const std::string& name, std::vector<NamedAttr> attrs, F fill) {
  Operation* op = b.create(name, {}, {}, std::move(attrs), 1);
  InsertionGuard guard(b);
  b.setInsertionPointToEnd(op->region(0).addBlock());
  fill();
}

// A grouped GEMM (MoE): B is [G, K, N] (or K-major [G, N, K]) and each tile's rows multiply the
// matrix their group id picks. B's tensor map gets the group axis, and the producer reads the
// tile's id (ids[m0]) as its third coordinate. A pair of tiles along M shares B, so both must lie
// in one group. False after a diagnostic.
bool checkGrouped(const GemmProgram& g, const Config& c, DiagnosticEngine& diag) {
  if (!g.groupIndex) return true;
  int64_t rows = int64_t(c.bm) * c.clusterM;
  if (!g.bGrouped || g.groupValue->uses().size() != 1 || g.groupValue->uses().front().user != g.loadB)
    return diag.error(g.groupIndex->loc()) << c.strategy << " runs a grouped GEMM whose group id only picks B's matrix "
                                                            "(tile.load(B, group, ...)); use strategy=sm80_multistage";
  if (g.groupAlign % rows == 0) return true;
  auto d = diag.error(g.groupIndex->loc());
  d << "tile.group_index {align = " << g.groupAlign << "} promises groups of multiples of " << g.groupAlign
    << " rows, but ";
  if (c.clusterM > 1)
    d << "bm x cluster_m = " << rows << " (a pair of tiles sharing B) does not divide " << g.groupAlign
      << ", so the pair could straddle two groups; use cluster_m=1 or a bm that divides it";
  else
    d << "bm=" << c.bm << " does not divide " << g.groupAlign
      << ", so a tile could straddle two groups; use a bm that divides it";
  return false;
}

// split_k, stream_k: units hand partial sums that each start from 0 over through the workspace.
bool checkHandOver(const GemmProgram& g, const Config& c, DiagnosticEngine& diag) {
  if ((c.splitK <= 1 && !c.streamK) || g.accInit == 0) return true;
  return diag.error(g.reduce->loc()) << c.strategy << " with "
                                     << (c.streamK ? "stream_k=" + std::to_string(c.streamK)
                                                   : "split_k=" + std::to_string(c.splitK))
                                     << (c.streamK ? " sums runs of K steps" : " sums slices")
                                     << " that each start from 0; this program's accumulator starts at " << g.accInit
                                     << " (use " << (c.streamK ? "stream_k=0" : "split_k=1") << ")";
}

// The persistent tile loop and its body's unit values (sm90::Unit); the blocks of a cluster walk
// the same cluster tiles, the sub-tiles that lie past M or N included (zero-filled loads, masked
// or clipped stores), so the multicast protocol stays in step.
Operation* createTileLoop(KernBuilder& b, const sm90::Request& r, const sm90::Kernel& k) {
  const Config& c = r.c;
  b.setLoc(r.g.forTiles->loc());
  if (r.g.raggedBounds) return sm90::createRaggedTileLoop(b, r, k);
  Value* batches = r.batched() ? k.params.dims.at(r.g.dimBatch) : b.i32(1);
  std::vector<NamedAttr> attrs = {{"tile", Attribute::ints({c.bm, c.bn})},
                                  {"raster", c.raster == Raster::Grouped ? "grouped" : "row"},
                                  {"group_m", int64_t(c.groupM)}};
  if (r.geo.clustered()) attrs.push_back({"cluster", Attribute::ints({c.clusterM, c.clusterN})});
  if (c.splitK > 1) attrs.push_back({"splits", int64_t(c.splitK)});
  std::vector<Value*> operands = {k.params.dimM, k.params.dimN, batches};
  if (c.streamK) {
    attrs.push_back({"stream_k", int64_t(c.streamK)});
    operands.push_back(k.ktiles);
  }
  return b.create("kern.tile_loop", operands, {}, attrs, 1);
}

// The unit of the loop's body: its arguments, its first K step and the ring position it starts at.
// Every earlier unit of the block used one stage per K step: iter * ksteps of them, or stream_k's
// `done`. The K loop is written over a ring of one (sm90-multistage-ring widens it to the ring's
// stages): every step uses stage 0, whose barriers' phase flips once per step, so the unit starts
// at stage 0 and phase done % 2.
sm90::Unit unitOf(KernBuilder& b, const sm90::Request& r, const sm90::Kernel& k, Block& body) {
  const Config& c = r.c;
  sm90::Unit u;
  u.iter = body.addArgument(types::i32(), "iter");
  u.m0 = body.addArgument(types::i32(), "m0");
  u.n0 = body.addArgument(types::i32(), "n0");
  u.batch = body.addArgument(types::i32(), "batch");
  u.ksteps = k.ksteps;
  Value* done = nullptr;
  // Ragged groups (kern.tile_loop {ragged}): the tile's group (with offsets B's matrix, with counts
  // every operand's batch) and the end of its rows.
  if (r.g.raggedK) {  // groups along K: the unit's tokens, K steps and ring position
    u.kTok = body.addArgument(types::i32(), "ktok");
    u.kEnd = body.addArgument(types::i32(), "kend");
    u.ksteps = body.addArgument(types::i32(), "ksteps");
    done = body.addArgument(types::i32(), "done");
    // Block scales (FP8): step kt reads the scale block of tokens ktok + kt bk, which is block
    // ktok / bk + kt where groups hold whole blocks (ragged_walk.cpp, raggedKConflict).
    if (r.g.blockK) u.kbase = b.named(b.div(u.kTok, b.i32(c.bk)), "kbase");
  } else if (r.g.raggedBounds) {
    if (r.g.raggedOffsets) u.group = u.batch;
    u.mEnd = body.addArgument(types::i32(), "mend");
  }
  if (c.splitK > 1) {
    u.tile = body.addArgument(types::i32(), "tile");
    u.split = body.addArgument(types::i32(), "split");
  }
  if (c.streamK) {
    u.kbase = body.addArgument(types::i32(), "kbase");
    u.ksteps = body.addArgument(types::i32(), "ksteps");
    done = body.addArgument(types::i32(), "done");
    u.peers = body.addArgument(types::i32(), "peers");
  }
  if (u.split) u.kbase = b.named(b.mul(u.split, u.ksteps), "kbase");
  if (!done) done = b.named(b.mul(u.iter, u.ksteps), "done");
  u.stage0 = b.i32(0);
  u.phase0 = b.named(b.rem(done, b.i32(2)), "phase0");
  return u;
}

// The unit's one role: the consumer warpgroups, their K loop issuing its copies from one thread
// (sm90-warp-specialize makes a producer role of those). False after a diagnostic from the
// epilogue.
bool buildRole(KernBuilder& b, const sm90::Request& r, const sm90::Kernel& k, const sm90::Unit& u,
               DiagnosticEngine& diag) {
  bool ok = true;
  region(b, "kern.role", {{"name", "consumer"}, {"warpgroups", Attribute::ints({1, r.geo.groups})}},
         [&] { ok = sm90::buildConsumer(b, r, k, u, diag); });
  return ok;
}

// The kernel's end. epilogue=tma: every consumer warpgroup's elected thread waits for its last TMA
// stores before the block exits (their source is this block's shared memory). Waiting only for
// their reads (.read) is enough for that and was measured no faster on the H200
// (docs/history/2026-11-30.md, 7c1eaf0), so the block waits for the writes too. In a cluster no
// block exits while its peer may still multicast into its shared memory or arrive on its barriers:
// every such access precedes the peer's arrival at the last cluster barrier.
void finishKernel(KernBuilder& b, const sm90::Request& r, const sm90::Kernel& k) {
  if (k.smem.sC) {
    Value* ctid = b.rem(k.tid, b.i32(128));
    Value* elected = b.andi(b.cmp("sge", k.tid, b.i32(128)), b.cmp("eq", ctid, b.i32(0)));
    b.ifThen(elected, [&] { b.create("kern.bulk_wait", {}, {}, {{"pending", int64_t{0}}, {"read", false}}); });
  }
  if (r.geo.clustered()) b.create("kern.cluster_barrier", {}, {});
}

}  // namespace

std::unique_ptr<Operation> lowerSm90WsPersistent(const Operation& program, const Target& target, const Config& config,
                                                 DiagnosticEngine& diag) {
  auto g = analyzeGemm(program, config.strategy, diag);
  if (!g || !checkGrouped(*g, config, diag)) return nullptr;
  const int eb = bitWidth(g->abType) / 8;
  // The output's element bytes, which size the TMA-store epilogue's boxes (2 when there is no one
  // store: sm90/kernel.cpp refuses such a program with epilogue=tma by name).
  int ceb = 2;
  for (const Operation* op : g->epilogue)
    if (op->is("tile.store")) ceb = std::max(2, bitWidth(op->operand(0)->type().elem()) / 8);
  if (!validate(config, target, OperandInfo{eb, bitWidth(g->bType) / 8, ceb}, diag, program.loc())) return nullptr;
  if (!checkHandOver(*g, config, diag) || !sm90::checkSliceScales(*g, config, diag) ||
      !sm90::checkRagged(*g, config, diag))
    return nullptr;
  // swap_ab makes A wgmma's B operand, read K-major from its own boxes: a column-major A would need
  // the transposed-B form and its own staging, which are not lowered.
  if (g->aColMajor && config.swapAB) {
    diag.error(g->loadA->loc()) << config.strategy << " with swap_ab=true reads A K-major; A is column-major ("
                                << g->tensorA->type().str() << "): use swap_ab=false";
    return nullptr;
  }
  const sm90::Geometry geo = sm90::geometryOf(config, ceb);
  const sm90::Request r{*g, config, target, geo};
  auto kernel = sm90::createKernel(program, r, diag);
  if (!kernel) return nullptr;
  KernBuilder b(&kernel->op->body());
  b.setLoc(program.loc());
  const sm90::Kernel k = sm90::buildKernelValues(b, r, std::move(kernel->params));
  Operation* loop = createTileLoop(b, r, k);
  {
    InsertionGuard guard(b);
    Block* body = loop->region(0).addBlock();
    b.setInsertionPointToEnd(body);
    const sm90::Unit u = unitOf(b, r, k, *body);
    if (!buildRole(b, r, k, u, diag)) return nullptr;
  }
  finishKernel(b, r, k);
  return std::move(kernel->op);
}

// The pass: every tile.program becomes a kern.kernel ({target, config} attributes as for sm80).
bool lowerSm90WsPersistentPass(Module& m, DiagnosticEngine& diag) {
  return lowerPrograms(m, *findLowering("lower-sm90-ws-persistent"), diag);
}

}  // namespace kiln
