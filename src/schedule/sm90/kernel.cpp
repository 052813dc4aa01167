// The sm90_ws_persistent kernel op and its kernel-wide values (contract in lowering.h): the
// parameters (the program's, then the tensor maps and the split-K / stream-K workspace), the launch
// contract, the shared-memory rings and mbarriers and their initialization.
//
//   kern.kernel {threads = 128 (1 + warps_m x warps_n), persistent, max_regs?, role_regs?} {
//     smem rings sA [stages, bm, 64], sB [stages, bn, 64]; mbarrier rings full, empty [stages]
//     (epilogue=tma: the staging sC, and with reuse_stage sR, a view of the B ring)
//     if tid == 0: init full[s] (1 arrival + TMA bytes), empty[s] (one arrival per consumer warp
//                  that reads the stage: all of them, or one warpgroup's with consumers=pingpong);
//                  fence.mbarrier_init; prefetch the tensor maps
//     barrier; in a cluster: cluster_barrier, rank = cluster_rank
//     ktiles = ceil(K / bk); split_k: ksteps = ceil(ktiles / S)
//     ...
#include <algorithm>

#include "dialects/kern/kernel_launch.h"
#include "schedule/lower_programs.h"
#include "schedule/sm80_epilogue_address.h"
#include "schedule/sm90/lowering.h"

namespace kiln::sm90 {
using namespace ir;

namespace {

std::string tensorName(const Value* tensor) { return tensor->definingOp()->stringAttr("name"); }

// The tensor maps: dims fastest first. A [M][K]: box (64 of K, bm rows); column-major A [K][M]:
// (64 of M, bk rows), bm / 64 boxes per stage. B K-major [N][K]: (64 of K,
// bn rows). B row-major [K][N]: (64 of N, bk rows), ceil(bn / 64) boxes per stage. With cluster_m=2
// each block loads half of the B stage and multicasts it: K-major B splits the bn rows (box 64 x
// bn/2), row-major B the bk rows of every 64-column box (box 64 x bk/2). With cluster_n=cn each
// loads bm / cn rows of the A stage (box 64 x bm/cn) and multicasts them. epilogue=tma: the output
// through a map too, one box of 128 bytes of a row (64 bf16 / f16 columns, 32 f32 ones: the widest
// box the 128B swizzle takes) x a consumer's rows (or row piece) at a time.
// Per-column scale_b copied with the stage (sharedColumnScales): its stored [ceil(K/128)][N] f32,
// unswizzled, one box of the tile's bn columns of one K block; per-row scale_a (sharedRowScales)
// the same, its stored [ceil(K/128)][M], one box of the tile's bm rows; 128x128-block scale_b
// (sharedBlockScales) through a flat map (its stored elements as one row), a box of 4 elements
// from the block's element of the step's K block (a row of [N blocks][K blocks] is 16-byte
// aligned only where K / 128 is a multiple of 4, so a 2-D map could not start at every block);
// per-row scale_a through a flat map too, a box of bm + 4 elements (staged_scales.cpp: a row of
// M floats is 16-byte aligned only where M is a multiple of 4).
struct TensorMaps {
  std::string nameA, nameB, nameC;  // nameC: epilogue=tma only
  std::string nameSB, nameSA;       // sharedColumnScales / sharedBlockScales, sharedRowScales only
  Type mapA, mapB, mapC, mapSB, mapSA;
};

std::optional<TensorMaps> tensorMaps(const Operation& program, const Request& r, DiagnosticEngine& diag) {
  const GemmProgram& g = r.g;
  const Config& c = r.c;
  auto withBatch = [&](std::vector<int64_t> box) {
    if (r.batched()) box.push_back(1);
    return box;
  };
  // A's and B's: groups along K batch only the output.
  auto operandBox = [&](std::vector<int64_t> box) {
    if (r.operandsBatched()) box.push_back(1);
    return box;
  };
  // Grouped (tile.group_index, ragged offsets): B's map has the group axis, one matrix per box.
  auto withGroup = [&](std::vector<int64_t> box) {
    box = operandBox(std::move(box));
    if (g.bGrouped) box.push_back(1);
    return box;
  };
  TensorMaps t;
  t.nameA = tensorName(g.tensorA);
  t.nameB = tensorName(g.tensorB);
  // A column-major [K][M]: boxes of 64 of M (128 bytes) x bk rows, bm / 64 per stage (as a
  // row-major B's); with cluster_n each block loads bk / cn rows of every box.
  t.mapA = g.aColMajor ? kern::tmapType(g.abType, operandBox({64, c.bk / c.clusterN}), t.nameA, 128)
                       : kern::tmapType(g.abType, operandBox({c.bk, c.bm / c.clusterN}), t.nameA, 128);
  t.mapB = g.bKMajor ? kern::tmapType(g.bType, withGroup({c.bk, c.bn / c.clusterM}), t.nameB, 128)
                     : kern::tmapType(g.bType, withGroup({64, c.bk / c.clusterM}), t.nameB, 128);
  if (sharedColumnScales(r)) {
    t.nameSB = tensorName(g.loadScaleB->operand(0));
    t.mapSB = kern::tmapType(ScalarType::F32, {c.bn, 1}, t.nameSB, 0);
  } else if (sharedBlockScales(r)) {  // one 16-byte box from any stored element (flat)
    t.nameSB = tensorName(g.loadScaleB->operand(0));
    t.mapSB = kern::tmapType(ScalarType::F32, {4, 1}, t.nameSB, 0, /*flat=*/true);
  }
  if (sharedRowScales(r)) {
    t.nameSA = tensorName(g.loadScaleA->operand(0));
    t.mapSA = kern::tmapType(ScalarType::F32, {stagedScaleBoxFloats(c.bm), 1}, t.nameSA, 0, /*flat=*/true);
  }
  if (c.epilogue != EpilogueStore::Tma) return t;
  const Operation* store = nullptr;
  for (const Operation* op : g.epilogue)
    if (op->is("tile.store")) {
      if (store) {
        diag.error(op->loc()) << c.strategy << " with epilogue=tma stores one output tile; this program stores two";
        return std::nullopt;
      }
      store = op;
    }
  ScalarType ce = store ? store->operand(0)->type().elem() : ScalarType::F8E4M3;
  if (!store || (ce != ScalarType::BF16 && ce != ScalarType::F16 && ce != ScalarType::F32) ||
      contiguousMatrixAxis(store->operand(0)->type()) != 1) {
    diag.error(store ? store->loc() : program.loc())
        << c.strategy << " with epilogue=tma stores a row-major bf16, f16 or f32 output tile; use epilogue=direct";
    return std::nullopt;
  }
  KILN_ASSERT(bitWidth(ce) / 8 == r.geo.cElemBytes, "sm90: the geometry was made for the output's element size");
  t.nameC = tensorName(store->operand(0));
  t.mapC = kern::tmapType(ce, withBatch({r.geo.boxCols, r.geo.rowsPerPiece}), t.nameC, 128);
  return t;
}

// The signature: the program's pointers, then the tensor maps (and split_k / stream_k's
// workspace, kern_ops.h "Split-K"), then its scalars and dims.
struct Signature {
  std::vector<std::string> names;
  std::vector<Type> types;
};

Signature signature(const Request& r, const TensorMaps& t) {
  const GemmProgram& g = r.g;
  Signature s;
  auto add = [&](std::string name, Type type) {
    s.names.push_back(std::move(name));
    s.types.push_back(std::move(type));
  };
  size_t firstNonPtr = 0;
  for (const auto& p : g.params)
    if (kern::isPtr(p.type)) ++firstNonPtr;
  for (size_t i = 0; i < g.params.size(); ++i) {
    if (i == firstNonPtr) {
      add("tmap_" + t.nameA, t.mapA);
      add("tmap_" + t.nameB, t.mapB);
      if (!t.nameC.empty()) add("tmap_" + t.nameC, t.mapC);
      if (!t.nameSB.empty()) add("tmap_" + t.nameSB, t.mapSB);
      if (!t.nameSA.empty()) add("tmap_" + t.nameSA, t.mapSA);
    }
    if (i == firstNonPtr && (r.geo.splits > 1 || r.geo.streamK)) {
      add("ws_flags", kern::ptrType(ScalarType::I32));
      add("ws_partials", kern::ptrType(ScalarType::F32));
    }
    add(g.params[i].name, g.params[i].type);
  }
  return s;
}

// The grid counts clusters: tile pairs along M with cluster_m=2, rows of cn tiles along N with
// cluster_n=cn; split_k multiplies it by the slices; stream_k allows up to one block per K step of
// every tile (more would have no run), an SM each.
kern::KernelLaunch::Axis gridAxis(const Request& r) {
  const GemmProgram& g = r.g;
  const Config& c = r.c;
  kern::KernelLaunch::Axis tiles{1, {{g.dimM, int64_t(c.bm) * c.clusterM}, {g.dimN, int64_t(c.bn) * c.clusterN}}};
  if (r.batched()) tiles.tiles.push_back({g.dimBatch, 1});
  if (c.splitK > 1) tiles.factor = c.splitK;
  if (c.streamK) tiles.tiles.push_back({g.dimK, c.bk});
  return tiles;
}

kern::KernelLaunch launchContract(const Operation& program, const Request& r, const TensorMaps& t,
                                  const Signature& sig) {
  const GemmProgram& g = r.g;
  const Config& c = r.c;
  const int eb = r.elemBytes();
  const Sm90Shape shape = sm90Shape(c, eb, r.geo.cElemBytes);
  kern::KernelLaunch launch;
  launch.name = program.stringAttr("sym_name");
  launch.params = sig.names;
  launch.threads = shape.threads;
  launch.smemBytes = t.nameSB.empty() && t.nameSA.empty() ? shape.smemBytes : scaleRingEnd(r);
  // 16-byte rows for TMA: a dense A's and K-major B's K, a row-major B's N (a strided operand's
  // leading dimension the runtime checks, by the tensor map's stride rule); the output's N a
  // multiple of the rows align_c promises (16 bytes, or with epilogue=direct a pair or an element).
  for (const auto& [access, elem] : {std::pair{g.accessA, g.abType}, std::pair{g.accessB, g.bType}})
    if (!access.strided && access.ld.isSymbolic()) launch.requireMultiple(access.ld.sym, 16 / (bitWidth(elem) / 8));
  launch.alignment = {{t.nameA, 16}, {t.nameB, 16}};
  for (const Operation* op : g.epilogue)
    if (op->is("tile.store")) {
      const Type& ct = op->operand(0)->type();
      const int ceb = bitWidth(ct.elem()) / 8, align = std::min(c.alignC, 16);
      launch.requireMultiple(ct.shape()[ct.rank() - 1].sym, std::max(1, align / ceb));
      launch.alignment.push_back({tensorName(op->operand(0)), align >= 2 * ceb ? 2 * ceb : ceb});
    }
  sm80::requirePairLoads(g, c, launch);  // the epilogue's loads of column pairs
  // A flat map (scale_b's blocks, scale_a's rows) asks only its start 16-byte aligned: the runtime's
  // check of the map names it (a launch alignment of 16 would ask 16-byte rows too: K / 128 % 4 == 0,
  // M % 4 == 0).
  if (!t.nameSB.empty() && !sharedBlockScales(r)) {  // scale_b's rows through a tensor map: 16-byte rows (the map's alignment is the runtime's)
    const Operation& load = *g.loadScaleB;
    for (unsigned i = 1; i < load.numOperands(); ++i)
      if (load.operand(i) == coordArgN(g) && load.operand(0)->type().shape()[i - 1].isSymbolic())
        launch.requireMultiple(load.operand(0)->type().shape()[i - 1].sym, 4);
  } else if (g.blockK && pairedColumnScales(r)) {  // per-column scale_b loaded in column pairs (slice_scales.cpp)
    const Operation& load = *g.loadScaleB;
    launch.alignment.push_back({tensorName(load.operand(0)), 8});
    for (unsigned i = 1; i < load.numOperands(); ++i)
      if (load.operand(i) == coordArgN(g) && load.operand(0)->type().shape()[i - 1].isSymbolic())
        launch.requireMultiple(load.operand(0)->type().shape()[i - 1].sym, 2);
  }
  launch.grid = {gridAxis(r)};
  launch.persistent = true;
  launch.programmatic = c.pdl;
  // blocks_per_sm=2: two blocks per SM (the config's rules checked they fit).
  launch.persistentPerSm = std::max(1, c.blocksPerSm);
  if (r.geo.clustered()) launch.cluster = std::array<int64_t, 3>{r.geo.clusterSize, 1, 1};
  const int64_t groups = r.geo.tileGroups;
  // split_k: per tile, one flag per consumer group (a warpgroup's share, or with ping-pong the
  // tile) and the partial sums of the S - 1 slices that do not finish the tile.
  if (c.splitK > 1) launch.workspace = std::array<int64_t, 2>{4 * groups, int64_t(c.splitK - 1) * c.bm * c.bn * 4};
  // stream_k: per block, one flag per consumer group and the partial sums of its one contribution.
  if (c.streamK) {
    launch.workspace = std::array<int64_t, 2>{4 * groups, int64_t(c.bm) * c.bn * 4};
    launch.workspacePerBlock = true;
  }
  // l2_hint=reuse: when each operand streams, for the runtime to set its map's L2 promotion to the
  // fill (KernelParam::stream); the producer emits the same rule (producer.cpp).
  Sm90StreamRules rules = sm90StreamRules(c, g.bKMajor, eb, bitWidth(g.bType) / 8);
  // A column-major A (rows M long, copied as bm / 64 boxes) never streams: the rule is stated for
  // K-contiguous rows (config.h).
  if (g.aColMajor) rules.a.possible = false;
  for (const auto& [map, rule] : {std::pair{"tmap_" + t.nameA, rules.a}, std::pair{"tmap_" + t.nameB, rules.b}})
    if (rule.possible)
      launch.streams.push_back({map, rule.boundDim == 'N' ? g.dimN : g.dimM, rule.bound,
                                rule.rowDim == 'K' ? g.dimK : g.dimN, rule.rowMultiple, rule.fillBytes});
  return launch;
}

// The kernel's body arguments by role: the tensor maps and the workspace, then the program's
// parameters, each by its name (tensors and scalars as args, dims as dims).
Params bindParams(Block& body, const Request& r, const Signature& sig) {
  const GemmProgram& g = r.g;
  Params p;
  const std::string mapA = "tmap_" + tensorName(g.tensorA), mapB = "tmap_" + tensorName(g.tensorB);
  const std::string mapSB = g.loadScaleB ? "tmap_" + tensorName(g.loadScaleB->operand(0)) : "";
  const std::string mapSA = g.loadScaleA ? "tmap_" + tensorName(g.loadScaleA->operand(0)) : "";
  for (size_t i = 0; i < sig.names.size(); ++i) {
    Value* arg = body.addArgument(sig.types[i], sig.names[i]);
    if (kern::isTensorMap(sig.types[i]))
      (sig.names[i] == mapA ? p.tmA : sig.names[i] == mapB ? p.tmB : sig.names[i] == mapSB ? p.tmSB
                                                            : sig.names[i] == mapSA ? p.tmSA
                                                                                    : p.tmC) = arg;
    if (sig.names[i] == "ws_flags") p.wsFlags = arg;
    if (sig.names[i] == "ws_partials") p.wsPartials = arg;
  }
  auto hidden = [&](size_t a) {
    const std::string& n = sig.names[a];
    return kern::isTensorMap(sig.types[a]) || n == "ws_flags" || n == "ws_partials";
  };
  for (size_t i = 0, a = 0; i < g.params.size(); ++i) {
    while (hidden(a)) ++a;
    (g.params[i].decl ? p.args : p.dims)[g.params[i].name] = body.argument(unsigned(a++));
  }
  KILN_ASSERT(p.tmA && p.tmB && (r.c.epilogue != EpilogueStore::Tma || p.tmC),
              "sm90: the tensor maps follow the pointers, before the dims");
  p.dimM = p.dims.at(g.dimM);
  p.dimN = p.dims.at(g.dimN);
  p.dimK = p.dims.at(g.dimK);
  return p;
}

// Shared memory: the A ring, the B ring (both 128-byte rows, 128B swizzle), the barriers, then
// (epilogue=tma) the output staging.
Buffers allocateShared(KernBuilder& b, const Request& r, const Params& p) {
  const GemmProgram& g = r.g;
  const Config& c = r.c;
  const Sm90Shape shape = sm90Shape(c, r.elemBytes(), r.geo.cElemBytes);
  Swizzle sw{3, 4, 3};
  const int64_t bytesA = int64_t(c.stages) * c.bm * 128;
  Buffers s;
  b.setLoc(g.loadA->loc());
  s.sA = b.named(b.op1("kern.smem_alloc", {}, kern::smemType(g.abType, c.stages, c.bm, c.bk, sw), {{"offset", int64_t{0}}}),
                 "sA");
  b.setLoc(g.loadB->loc());
  s.sB = b.named(b.op1("kern.smem_alloc", {}, kern::smemType(g.bType, c.stages, shape.bStageRows, c.bk, sw),
                       {{"offset", bytesA}}),
                 "sB");
  b.setLoc(g.reduce->loc());
  auto barriers = [&](int count, int64_t offset, const char* name) {
    return b.named(b.op1("kern.mbarrier_alloc", {}, kern::mbarrierType(count), {{"offset", offset}}), name);
  };
  s.full = barriers(c.stages, shape.barrierOffset, "full");
  s.empty = barriers(c.stages, shape.barrierOffset + 8 * int64_t(c.stages), "empty");
  if (r.geo.pingpong) s.turn = barriers(2, shape.barrierOffset + 16 * int64_t(c.stages), "turn");
  if (p.tmSB) {  // after everything else: the other buffers' offsets stay as they were
    b.setLoc(g.loadScaleB->loc());
    const Type ring = sharedBlockScales(r) ? kern::smemType(ScalarType::F32, c.stages, 8 * blockScaleBoxes(r), 4, Swizzle{})
                                           : kern::smemType(ScalarType::F32, c.stages, 1, c.bn, Swizzle{});
    s.sSB = b.named(b.op1("kern.smem_alloc", {}, ring, {{"offset", scaleRingOffset(r)}}), "sSB");
  }
  if (p.tmSA) {  // after scale_b's ring
    b.setLoc(g.loadScaleA->loc());
    s.sSA = b.named(b.op1("kern.smem_alloc", {}, kern::smemType(ScalarType::F32, c.stages, 1, stagedScaleRowFloats(c.bm), Swizzle{}),
                          {{"offset", rowScaleRingOffset(r)}}),
                    "sSA");
  }
  if (!p.tmC) return s;
  // One staging region per consumer warpgroup (a "stage" each): cSlots boxes of its rows x boxCols
  // (128-byte rows: 64 bf16 / f16 columns, 32 f32 ones).
  b.setLoc(g.forTiles->loc());
  const ScalarType ce = p.tmC->type().elem();  // the staged output's
  s.sC = b.named(b.op1("kern.smem_alloc", {},
                       kern::smemType(ce, r.geo.groups, r.geo.rowsPerPiece * r.geo.cSlots, r.geo.boxCols, sw),
                       {{"offset", shape.cOffset}}),
                 "sC");
  // reuse_stage: the boxes past the slots go to the B part of the ring stage the tile read last,
  // viewed as warps_m regions of bn / warps_m rows per stage, one per warpgroup (so view slot
  // s * warps_m + wg starts in B stage s); the first ringBoxes * rows rows of each are used.
  if (r.geo.ringBoxes) {
    KILN_ASSERT(r.geo.ringBoxes * r.geo.rowsPerConsumer <= c.bn / c.warpsM,
                "reuse_stage: the boxes past the slots fit a B stage");
    s.sR = b.named(b.op1("kern.smem_alloc", {}, kern::smemType(ce, c.stages * c.warpsM, c.bn / c.warpsM, r.geo.boxCols, sw),
                         {{"offset", bytesA}, {"alias", true}}),
                   "sR");
  }
  return s;
}

// Barrier initialization by one thread, made visible to the async proxy and to every thread.
void initBarriers(KernBuilder& b, const Request& r, const Params& p, const Buffers& s, Value* tid) {
  const Config& c = r.c;
  const int64_t cs = r.geo.clusterSize;
  b.ifThen(b.cmp("eq", tid, b.i32(0)), [&] {
    for (int i = 0; i < c.stages; ++i) {
      b.create("kern.mbarrier_init", {s.full, b.i32(i)}, {}, {{"count", int64_t{1}}});
      // One arrival per warp that reads the stage: every consumer warp, or with ping-pong the
      // warps of the one warpgroup whose tile the stage belongs to. In a cluster every block's
      // producer multicasts into the stage of every block, so the readers of all of them arrive.
      b.create("kern.mbarrier_init", {s.empty, b.i32(i)}, {}, {{"count", int64_t(4 * r.geo.tileGroups * cs)}});
    }
    // The turn barriers: one arrival per warp of the other consumer warpgroup.
    for (int w = 0; w < 2 && r.geo.pingpong; ++w)
      b.create("kern.mbarrier_init", {s.turn, b.i32(w)}, {}, {{"count", int64_t{4}}});
    b.create("kern.fence", {}, {}, {{"kind", "mbarrier_init"}});
    // The tensor maps' descriptors are fetched while the block starts up, not by its first copies.
    for (Value* map : {p.tmA, p.tmB, p.tmC, p.tmSB, p.tmSA})
      if (map) b.create("kern.prefetch_tensormap", {map}, {});
  });
}

}  // namespace

std::optional<KernelOp> createKernel(const Operation& program, const Request& r, DiagnosticEngine& diag) {
  auto maps = tensorMaps(program, r, diag);
  if (!maps) return std::nullopt;
  const Signature sig = signature(r, *maps);
  std::vector<NamedAttr> attrs = kern::kernelAttributes(launchContract(program, r, *maps, sig),
                                                        {{"target", r.target.name}, {"config", r.c.str()}});
  const Sm90Shape shape = sm90Shape(r.c, r.elemBytes(), r.geo.cElemBytes);
  if (shape.maxRegsAtEntry) attrs.push_back({"max_regs", int64_t(shape.maxRegsAtEntry)});
  // Ragged groups walked by stream-K (128x256, raster=grouped, epilogue=tma: the MoE pick) came
  // out of ptxas (CUDA 13.0) with 4 bytes of spill at a consumer budget of 232 and none at 224 or
  // 216; the producer's budget (24 to 56) changed nothing. Those kernels' consumers get 224 (the
  // register file then has 8 x 256 registers spare); every other kernel keeps its budgets.
  int consumerRegs = shape.regsConsumer;
  if (consumerRegs == 232 && r.g.raggedBounds && !r.g.raggedK && r.c.streamK) consumerRegs = 224;
  if (shape.regsProducer || shape.regsConsumer)
    attrs.push_back({"role_regs", pairList({{"producer", shape.regsProducer}, {"consumer", consumerRegs}})});
  KernelOp k;
  k.op = Operation::create(program.loc(), "kern.kernel", {}, {}, attrs, 1);
  k.params = bindParams(*k.op->region(0).addBlock(), r, sig);
  return k;
}

Kernel buildKernelValues(KernBuilder& b, const Request& r, Params params) {
  const Config& c = r.c;
  Kernel k;
  k.smem = allocateShared(b, r, params);
  k.tid = b.named(b.op1("kern.thread_id", {}, types::i32()), "tid");
  initBarriers(b, r, params, k.smem, k.tid);
  // pdl: the prologue above (shared memory, barrier inits, the tensor maps' prefetch: kernel
  // parameters) ran while the previous kernel may still run; every thread waits for it here,
  // before the first global access (the scheduler's ragged bounds, split-K flags, the operands,
  // the epilogue's loads and stores), and lets the next kernel launch (its blocks start where
  // these leave room, and its own wait holds its global accesses until this grid is done).
  if (r.c.pdl) {
    b.create("kern.griddep_wait", {}, {});
    b.create("kern.griddep_launch_dependents", {}, {});
  }
  b.create("kern.barrier", {}, {});
  if (r.geo.clustered()) {
    // No block may multicast into its peer or arrive on the peer's barriers before the peer has
    // initialized them: the init's fence.mbarrier_init.release.cluster and this barrier's
    // arrive.release / wait.acquire order the inits before every access that follows.
    b.create("kern.cluster_barrier", {}, {});
    k.rank = b.named(b.op1("kern.cluster_rank", {}, types::i32()), "rank");
  }
  k.ktiles = b.named(b.div(b.addConst(params.dimK, c.bk - 1), b.i32(c.bk)), "ktiles");
  // split_k: each unit runs ksteps = ceil(ktiles / S) K steps from split * ksteps; the last slice's
  // steps past K copy boxes wholly outside the tensor, which TMA fills with zeros.
  k.ksteps = c.splitK > 1 ? b.named(b.div(b.addConst(k.ktiles, c.splitK - 1), b.i32(c.splitK)), "ksteps") : k.ktiles;
  k.params = std::move(params);
  return k;
}

}  // namespace kiln::sm90
