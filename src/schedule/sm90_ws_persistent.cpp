// The sm90_ws_persistent strategy entry (contract in sm90_ws_persistent.h). It checks the program
// and the config, creates the kernel, its tensor maps, shared-memory rings and mbarriers, and the
// one CTA-wide persistent tile loop whose body holds the two role-tagged regions (the producer from
// sm90_producer.cpp, the consumers from sm90_consumer.cpp). partition-roles then splits that loop
// into one loop per role, and set-role-registers gives each role its registers.
//
//   kern.kernel {threads = 128 (1 + warps_m), persistent, max_regs?, role_regs?} {
//     smem rings sA [stages, bm, 64], sB [stages, bn, 64]; mbarrier rings full, empty [stages]
//     if tid == 0: init full[s] (1 arrival + TMA bytes), empty[s] (one arrival per consumer warp
//                  that reads the stage: all of them, or one warpgroup's with consumers=pingpong);
//                  fence.mbarrier_init
//     barrier; cluster_m=2: cluster_barrier, rank = cluster_rank
//     kern.tile_loop(M, N, batches) {tile = [bm, bn], raster, group_m, cluster?} (iter, m0, n0, batch):
//       stage0 = (iter * ktiles) % stages; phase0 = (iter * ktiles / stages) % 2
//       (split_k=S: {splits = S} (..., tile, split); each unit runs ksteps = ceil(ktiles / S) K steps
//        from kbase = split * ksteps, and ksteps replaces ktiles above)
//       (stream_k: kern.tile_loop(M, N, batches, ktiles) {stream_k} (..., kbase, ksteps, done,
//        peers); each unit runs its ksteps from kbase, and done replaces iter * ktiles above)
//       kern.role "producer" [warpgroup 0]       { TMA loads }
//       kern.role "consumer" [warpgroups 1..]    { wgmma; epilogue }   (consumers=pingpong: only
//                                                 the warpgroup whose turn it is, iter % 2 == wg)
//   }
//   cluster_m=2: cluster_barrier  (no block exits while a peer may still touch its shared memory)
#include "schedule/sm90_ws_persistent.h"
#include "schedule/lower_programs.h"

#include "dialects/kern/kernel_launch.h"
#include "schedule/sm90_context.h"

namespace kiln {
using namespace ir;

namespace {

std::string tensorName(const Value* tensor) { return tensor->definingOp()->stringAttr("name"); }

// One region op with its block, built by `fill` at the end of that block.
template <typename F>
void region(KernBuilder& b, const std::string& name, std::vector<NamedAttr> attrs, F fill) {
  Operation* op = b.create(name, {}, {}, std::move(attrs), 1);
  InsertionGuard guard(b);
  b.setInsertionPointToEnd(op->region(0).addBlock());
  fill();
}

}  // namespace

std::unique_ptr<Operation> lowerSm90WsPersistent(const Operation& program, const Target& target, const Config& config,
                                                 DiagnosticEngine& diag) {
  auto g = analyzeGemm(program, config.strategy, diag);
  if (!g) return nullptr;
  // A grouped GEMM (MoE): B is [G, K, N] (or K-major [G, N, K]) and each tile's rows multiply
  // the matrix their group id picks. B's tensor map gets the group axis, and the producer reads
  // the tile's id (ids[m0]) as its third coordinate. A pair of tiles along M shares B, so both must
  // lie in one group.
  if (g->groupIndex) {
    const Config& c = config;
    int64_t rows = int64_t(c.bm) * c.clusterM;
    if (!g->bGrouped || g->groupValue->uses().size() != 1 || g->groupValue->uses().front().user != g->loadB) {
      diag.error(g->groupIndex->loc()) << c.strategy << " runs a grouped GEMM whose group id only picks B's matrix "
                                                        "(tile.load(B, group, ...)); use strategy=sm80_multistage";
      return nullptr;
    }
    if (g->groupAlign % rows != 0) {
      auto d = diag.error(g->groupIndex->loc());
      d << "tile.group_index {align = " << g->groupAlign << "} promises groups of multiples of " << g->groupAlign
        << " rows, but ";
      if (c.clusterM > 1)
        d << "bm x cluster_m = " << rows << " (a pair of tiles sharing B) does not divide " << g->groupAlign
          << ", so the pair could straddle two groups; use cluster_m=1 or a bm that divides it";
      else
        d << "bm=" << c.bm << " does not divide " << g->groupAlign
          << ", so a tile could straddle two groups; use a bm that divides it";
      return nullptr;
    }
  }
  int eb = bitWidth(g->abType) / 8;
  if (!validate(config, target, OperandInfo{eb, bitWidth(g->bType) / 8}, diag, program.loc())) return nullptr;
  const Config& c = config;
  if ((c.splitK > 1 || c.streamK) && g->accInit != 0) {
    diag.error(g->reduce->loc()) << c.strategy << " with "
                                 << (c.streamK ? "stream_k=" + std::to_string(c.streamK) : "split_k=" + std::to_string(c.splitK))
                                 << (c.streamK ? " sums runs of K steps" : " sums slices")
                                 << " that each start from 0; this program's accumulator starts at "
                                 << g->accInit << " (use " << (c.streamK ? "stream_k=0" : "split_k=1") << ")";
    return nullptr;
  }
  // split_k, stream_k: units hand partial sums over through the workspace.
  bool handOver = c.splitK > 1 || c.streamK;
  Sm90Shape shape = sm90Shape(c, eb);
  bool batched = !g->dimBatch.empty();
  std::string nameA = tensorName(g->tensorA), nameB = tensorName(g->tensorB);

  // Tensor maps: dims fastest first. A [M][K]: box (64 of K, bm rows). B K-major [N][K]: (64 of K,
  // bn rows). B row-major [K][N]: (64 of N, bk rows), ceil(bn / 64) boxes per stage.
  auto withBatch = [&](std::vector<int64_t> box) {
    if (batched) box.push_back(1);
    return box;
  };
  // Grouped: B's map has the group axis, one matrix per box.
  auto withGroup = [&](std::vector<int64_t> box) {
    box = withBatch(std::move(box));
    if (g->groupIndex) box.push_back(1);
    return box;
  };
  // With cluster_m=2 each block loads half of the B stage and multicasts it: K-major B splits the
  // bn rows (box 64 x bn/2), row-major B the bk rows of every 64-column box (box 64 x bk/2). With
  // cluster_n=cn each loads bm / cn rows of the A stage (box 64 x bm/cn) and multicasts them.
  int cm = c.clusterM, cn = c.clusterN, cs = cm * cn;
  Type mapA = kern::tmapType(g->abType, withBatch({c.bk, c.bm / cn}), nameA, 128);
  Type mapB = g->bKMajor ? kern::tmapType(g->bType, withGroup({c.bk, c.bn / cm}), nameB, 128)
                         : kern::tmapType(g->bType, withGroup({64, c.bk / cm}), nameB, 128);
  // epilogue=tma: the output through a map too, one box of 64 columns x a consumer's rows at a time.
  bool tmaStore = c.epilogue == EpilogueStore::Tma;
  bool pingpong = c.consumers == Consumers::Pingpong;
  int64_t consumerRows = pingpong ? c.bm : c.bm / c.warpsM;  // Plan::rowsPerConsumer
  int64_t pieceRows = consumerRows / std::max(1, c.storePieces);  // Plan::rowsPerPiece
  // Consumer warpgroups (Plan::groups), and the groups of them that share a tile's accumulators:
  // each of them, or with ping-pong the one whose tile it is.
  int64_t warpgroups = int64_t(c.warpsM) * c.warpsN, groups = pingpong ? 1 : warpgroups;
  std::string nameC;
  Type mapC;
  if (tmaStore) {
    const Operation* store = nullptr;
    for (const Operation* op : g->epilogue)
      if (op->is("tile.store")) {
        if (store) {
          diag.error(op->loc()) << c.strategy << " with epilogue=tma stores one output tile; this program stores two";
          return nullptr;
        }
        store = op;
      }
    ScalarType ce = store ? store->operand(0)->type().elem() : ScalarType::F32;
    if (!store || (ce != ScalarType::BF16 && ce != ScalarType::F16) || !isRowMajorMatrix(store->operand(0)->type())) {
      diag.error(store ? store->loc() : program.loc())
          << c.strategy << " with epilogue=tma stores a row-major bf16 or f16 output tile; use epilogue=direct";
      return nullptr;
    }
    nameC = tensorName(store->operand(0));
    mapC = kern::tmapType(ce, withBatch({64, pieceRows}), nameC, 128);
  }

  // The signature: pointers, tensor maps, scalars, dims.
  std::vector<std::string> names;
  std::vector<Type> types;
  size_t firstNonPtr = 0;
  for (const auto& p : g->params)
    if (kern::isPtr(p.type)) ++firstNonPtr;
  for (size_t i = 0; i < g->params.size(); ++i) {
    if (i == firstNonPtr) {
      names.push_back("tmap_" + nameA);
      types.push_back(mapA);
      names.push_back("tmap_" + nameB);
      types.push_back(mapB);
      if (tmaStore) {
        names.push_back("tmap_" + nameC);
        types.push_back(mapC);
      }
    }
    if (i == firstNonPtr && handOver) {
      // split_k, stream_k: the runtime's workspace (kern_ops.h, "Split-K").
      names.push_back("ws_flags");
      types.push_back(kern::ptrType(ScalarType::I32));
      names.push_back("ws_partials");
      types.push_back(kern::ptrType(ScalarType::F32));
    }
    names.push_back(g->params[i].name);
    types.push_back(g->params[i].type);
  }
  kern::KernelLaunch launch;
  launch.name = program.stringAttr("sym_name");
  launch.params = names;
  launch.threads = shape.threads;
  launch.smemBytes = shape.smemBytes;
  // 16-byte rows for TMA: A's and a K-major B's K, a row-major B's and the 16-bit output's N.
  launch.divisibility = {{g->dimK, 16 / eb}, {g->dimN, g->bKMajor ? 8 : 16 / eb}};
  launch.alignment = {{nameA, 16}, {nameB, 16}};
  for (const Operation* op : g->epilogue)
    if (op->is("tile.store"))
      launch.alignment.push_back({tensorName(op->operand(0)), 2 * bitWidth(op->operand(0)->type().elem()) / 8});
  // The grid counts clusters: tile pairs along M with cluster_m=2, rows of cn tiles along N with
  // cluster_n=cn.
  kern::KernelLaunch::Axis tiles{1, {{g->dimM, int64_t(c.bm) * cm}, {g->dimN, int64_t(c.bn) * cn}}};
  if (batched) tiles.tiles.push_back({g->dimBatch, 1});
  // K slices per tile.
  if (c.splitK > 1) tiles.factor = c.splitK;
  // stream_k: up to one block per K step of every tile (more would have no run), an SM each.
  if (c.streamK) tiles.tiles.push_back({g->dimK, c.bk});
  launch.grid = {tiles};
  launch.persistent = true;
  if (cs > 1) launch.cluster = std::array<int64_t, 3>{cs, 1, 1};
  // split_k: per tile, one flag per consumer group (a warpgroup's share, or with ping-pong the
  // tile) and the partial sums of the S - 1 slices that do not finish the tile.
  if (c.splitK > 1)
    launch.workspace = std::array<int64_t, 2>{4 * groups, int64_t(c.splitK - 1) * c.bm * c.bn * 4};
  // stream_k: per block, one flag per consumer group and the partial sums of its one contribution.
  if (c.streamK) {
    launch.workspace = std::array<int64_t, 2>{4 * groups, int64_t(c.bm) * c.bn * 4};
    launch.workspacePerBlock = true;
  }
  // l2_hint=reuse: when each operand streams, for the runtime to set its map's L2 promotion to the
  // fill (KernelParam::stream); the producer emits the same rule (sm90_producer.cpp).
  Sm90StreamRules rules = sm90StreamRules(c, g->bKMajor, eb, bitWidth(g->bType) / 8);
  for (const auto& [map, r] : {std::pair{"tmap_" + nameA, rules.a}, std::pair{"tmap_" + nameB, rules.b}})
    if (r.possible)
      launch.streams.push_back({map, r.boundDim == 'N' ? g->dimN : g->dimM, r.bound, r.rowDim == 'K' ? g->dimK : g->dimN,
                                r.rowMultiple, r.fillBytes});
  std::vector<NamedAttr> attrs =
      kern::kernelAttributes(launch, {{"target", target.name}, {"config", config.str()}});
  if (shape.maxRegsAtEntry) {
    attrs.push_back({"max_regs", int64_t(shape.maxRegsAtEntry)});
    attrs.push_back({"role_regs", pairList({{"producer", shape.regsProducer}, {"consumer", shape.regsConsumer}})});
  }
  auto kernel = Operation::create(program.loc(), "kern.kernel", {}, {}, attrs, 1);
  Block* body = kernel->region(0).addBlock();
  KernBuilder b(body);
  b.setLoc(program.loc());
  sm90::Plan p{*g, config, target, b, diag};
  for (size_t i = 0; i < names.size(); ++i) {
    Value* arg = body->addArgument(types[i], names[i]);
    if (kern::isTensorMap(types[i]))
      (names[i] == "tmap_" + nameA ? p.tmA : names[i] == "tmap_" + nameB ? p.tmB : p.tmC) = arg;
    if (names[i] == "ws_flags") p.wsFlags = arg;
    if (names[i] == "ws_partials") p.wsPartials = arg;
  }
  auto hidden = [&](unsigned a) {
    const std::string& n = names[a];
    return kern::isTensorMap(types[a]) || n == "ws_flags" || n == "ws_partials";
  };
  for (size_t i = 0, a = 0; i < g->params.size(); ++i) {
    while (hidden(unsigned(a))) ++a;
    (g->params[i].decl ? p.args : p.dims)[g->params[i].name] = body->argument(unsigned(a++));
  }
  KILN_ASSERT(p.tmA && p.tmB && (!tmaStore || p.tmC), "sm90: the tensor maps follow the pointers, before the dims");
  p.dimM = p.dims.at(g->dimM);
  p.dimN = p.dims.at(g->dimN);
  p.dimK = p.dims.at(g->dimK);

  // Shared memory: the A ring, the B ring (both 128-byte rows, 128B swizzle), then the barriers.
  Swizzle sw{3, 4, 3};
  int64_t bytesA = int64_t(c.stages) * c.bm * 128;
  b.setLoc(g->loadA->loc());
  p.sA = b.named(b.op1("kern.smem_alloc", {}, kern::smemType(g->abType, c.stages, c.bm, c.bk, sw), {{"offset", int64_t{0}}}), "sA");
  b.setLoc(g->loadB->loc());
  p.sB = b.named(b.op1("kern.smem_alloc", {}, kern::smemType(g->bType, c.stages, shape.bStageRows, c.bk, sw),
                       {{"offset", bytesA}}),
                 "sB");
  b.setLoc(g->reduce->loc());
  p.full = b.named(b.op1("kern.mbarrier_alloc", {}, kern::mbarrierType(c.stages), {{"offset", shape.barrierOffset}}), "full");
  p.empty = b.named(b.op1("kern.mbarrier_alloc", {}, kern::mbarrierType(c.stages),
                          {{"offset", shape.barrierOffset + 8 * int64_t(c.stages)}}),
                    "empty");
  if (pingpong)
    p.turn = b.named(b.op1("kern.mbarrier_alloc", {}, kern::mbarrierType(2),
                           {{"offset", shape.barrierOffset + 16 * int64_t(c.stages)}}),
                     "turn");
  // The bytes a stage's copies deliver: whole boxes, zero-filled past the tensor's edges (a
  // row-major B's last box is 64 columns wide whatever bn is).
  p.stageTxBytes = int64_t(c.bm + (g->bKMajor ? c.bn : shape.bStageRows)) * c.bk * eb;
  if (tmaStore) {
    // One staging region per consumer warpgroup (a "stage" each): cSlots boxes of its rows x 64.
    b.setLoc(g->forTiles->loc());
    p.cSlots = shape.cSlots;
    p.sC = b.named(b.op1("kern.smem_alloc", {}, kern::smemType(mapC.elem(), warpgroups, pieceRows * shape.cSlots, 64, sw),
                         {{"offset", shape.cOffset}}),
                   "sC");
    // reuse_stage: the boxes past the slots go to the B part of the ring stage the tile read
    // last, viewed as warps_m regions of bn / warps_m rows per stage, one per warpgroup (so view
    // slot s * warps_m + wg starts in B stage s); the first ringBoxes * rows rows of each are used.
    if (shape.ringBoxes) {
      KILN_ASSERT(shape.ringBoxes * consumerRows <= c.bn / c.warpsM, "reuse_stage: the boxes past the slots fit a B stage");
      p.sR = b.named(b.op1("kern.smem_alloc", {},
                           kern::smemType(mapC.elem(), c.stages * c.warpsM, c.bn / c.warpsM, 64, sw),
                           {{"offset", bytesA}, {"alias", true}}),
                     "sR");
    }
  }

  // Barrier initialization by one thread, made visible to the async proxy and to every thread.
  Value* tid = b.named(b.op1("kern.thread_id", {}, types::i32()), "tid");
  Operation* init = b.create("scf.if", {b.cmp("eq", tid, b.i32(0))}, {}, {}, 2);
  {
    InsertionGuard guard(b);
    b.setInsertionPointToEnd(init->region(0).addBlock());
    for (int s = 0; s < c.stages; ++s) {
      b.create("kern.mbarrier_init", {p.full, b.i32(s)}, {}, {{"count", int64_t{1}}});
      // One arrival per warp that reads the stage: every consumer warp, or with ping-pong the
      // warps of the one warpgroup whose tile the stage belongs to. In a cluster every block's
      // producer multicasts into the stage of every block, so the readers of all of them arrive.
      b.create("kern.mbarrier_init", {p.empty, b.i32(s)}, {},
               {{"count", int64_t(4 * groups * cs)}});
    }
    // The turn barriers: one arrival per warp of the other consumer warpgroup.
    for (int w = 0; w < 2 && pingpong; ++w) b.create("kern.mbarrier_init", {p.turn, b.i32(w)}, {}, {{"count", int64_t{4}}});
    b.create("kern.fence", {}, {}, {{"kind", "mbarrier_init"}});
    // The tensor maps' descriptors are fetched while the block starts up, not by its first copies.
    for (Value* map : {p.tmA, p.tmB, p.tmC})
      if (map) b.create("kern.prefetch_tensormap", {map}, {});
    b.create("scf.yield", {}, {});
    b.setInsertionPointToEnd(init->region(1).addBlock());
    b.create("scf.yield", {}, {});
  }
  b.create("kern.barrier", {}, {});
  if (cs > 1) {
    // No block may multicast into its peer or arrive on the peer's barriers before the peer has
    // initialized them: the init's fence.mbarrier_init.release.cluster and this barrier's
    // arrive.release / wait.acquire order the inits before every access that follows.
    b.create("kern.cluster_barrier", {}, {});
    p.rank = b.named(b.op1("kern.cluster_rank", {}, types::i32()), "rank");
  }
  p.ktiles = b.named(b.div(b.addConst(p.dimK, c.bk - 1), b.i32(c.bk)), "ktiles");
  // split_k: each unit runs ksteps = ceil(ktiles / S) K steps from split * ksteps; the last slice's
  // steps past K copy boxes wholly outside the tensor, which TMA fills with zeros.
  p.ksteps = c.splitK > 1 ? b.named(b.div(b.addConst(p.ktiles, c.splitK - 1), b.i32(c.splitK)), "ksteps") : p.ktiles;

  // The persistent tile loop with the role-tagged regions.
  b.setLoc(g->forTiles->loc());
  Value* batches = batched ? p.dims.at(g->dimBatch) : b.i32(1);
  std::vector<NamedAttr> loopAttrs = {{"tile", Attribute::ints({c.bm, c.bn})},
                                      {"raster", c.raster == Raster::Grouped ? "grouped" : "row"},
                                      {"group_m", int64_t(c.groupM)}};
  // The blocks of a cluster walk the same cluster tiles, the sub-tiles that lie past M or N
  // included (zero-filled loads, masked or clipped stores), so the multicast protocol stays in step.
  if (cs > 1) loopAttrs.push_back({"cluster", Attribute::ints({cm, cn})});
  if (c.splitK > 1) loopAttrs.push_back({"splits", int64_t(c.splitK)});
  std::vector<Value*> loopOperands = {p.dimM, p.dimN, batches};
  if (c.streamK) {
    loopAttrs.push_back({"stream_k", int64_t(c.streamK)});
    loopOperands.push_back(p.ktiles);
  }
  Operation* loop = b.create("kern.tile_loop", loopOperands, {}, loopAttrs, 1);
  Block* tileBody = loop->region(0).addBlock();
  p.iter = tileBody->addArgument(types::i32(), "iter");
  p.m0 = tileBody->addArgument(types::i32(), "m0");
  p.n0 = tileBody->addArgument(types::i32(), "n0");
  p.batch = tileBody->addArgument(types::i32(), "batch");
  if (c.splitK > 1) {
    p.tile = tileBody->addArgument(types::i32(), "tile");
    p.split = tileBody->addArgument(types::i32(), "split");
  }
  Value* done = nullptr;
  if (c.streamK) {
    p.kbase = tileBody->addArgument(types::i32(), "kbase");
    p.ksteps = tileBody->addArgument(types::i32(), "ksteps");
    done = tileBody->addArgument(types::i32(), "done");
    p.peers = tileBody->addArgument(types::i32(), "peers");
  }
  bool ok = true;
  {
    InsertionGuard guard(b);
    b.setInsertionPointToEnd(tileBody);
    if (p.split) p.kbase = b.named(b.mul(p.split, p.ksteps), "kbase");
    if (!done) done = b.named(b.mul(p.iter, p.ksteps), "done");
    p.stage0 = b.named(b.rem(done, b.i32(c.stages)), "stage0");
    p.phase0 = b.named(b.rem(b.div(done, b.i32(c.stages)), b.i32(2)), "phase0");
    region(b, "kern.role", {{"name", "producer"}, {"warpgroups", Attribute::ints({0, 1})}},
           [&] { sm90::buildProducer(p); });
    region(b, "kern.role", {{"name", "consumer"}, {"warpgroups", Attribute::ints({1, warpgroups})}},
           [&] { ok = sm90::buildConsumer(p); });
  }
  if (!ok) return nullptr;
  if (tmaStore) {
    // Every consumer warpgroup's elected thread waits for its last TMA stores before the block
    // exits (their source is this block's shared memory). Waiting only for their reads (.read) is
    // enough for that and was measured no faster on the H200 (docs/history/2026-11-30.md, 7c1eaf0),
    // so the block waits for the writes too.
    Value* ctid = b.rem(tid, b.i32(128));
    Value* elected = b.andi(b.cmp("sge", tid, b.i32(128)), b.cmp("eq", ctid, b.i32(0)));
    Operation* fin = b.create("scf.if", {elected}, {}, {}, 2);
    InsertionGuard guard(b);
    b.setInsertionPointToEnd(fin->region(0).addBlock());
    b.create("kern.bulk_wait", {}, {}, {{"pending", int64_t{0}}, {"read", false}});
    b.create("scf.yield", {}, {});
    b.setInsertionPointToEnd(fin->region(1).addBlock());
    b.create("scf.yield", {}, {});
  }
  // No block exits while its peer may still multicast into its shared memory or arrive on its
  // barriers: every such access precedes the peer's arrival here.
  if (cs > 1) b.create("kern.cluster_barrier", {}, {});
  return kernel;
}

// The pass: every tile.program becomes a kern.kernel ({target, config} attributes as for sm80).
bool lowerSm90WsPersistentPass(Module& m, DiagnosticEngine& diag) {
  return lowerPrograms(m, *findLowering("lower-sm90-ws-persistent"), diag);
}

}  // namespace kiln
