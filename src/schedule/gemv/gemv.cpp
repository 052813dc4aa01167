// The gemv strategy entry (contract in gemv.h): the program's checks, the block's geometry and the
// launch contract, the kernel's indices, then the K loop of B's layout (gemv_loops.cpp) and the
// sm80 epilogue on the sums it leaves in shared memory.
//
//   kern.kernel @gemv(%A, %B, %C, %M, %N, %K) {threads = T, grid = [[N, bn], [M, bm]], smem_bytes}
//     %n0 = blockIdx.x * bn, %m0 = blockIdx.y * bm, batch = blockIdx.z
//     K loop (N or K path) -> sums[0][m][n] for the block's bm x bn outputs
//     scf.if (warp < epilogue warps) { sums read in the m16n8 layout; the program's epilogue }
#include "schedule/gemv/gemv.h"

#include "dialects/kern/kernel_launch.h"
#include "schedule/gemv/gemv_split.h"
#include "schedule/lower_programs.h"

namespace kiln {
using namespace ir;

namespace {

std::string argName(const Value* tensor) { return tensor->definingOp()->stringAttr("name"); }

// The widest access (a power of two of 2 to 16 bytes, at least one element) that rows aligned to
// `align` bytes allow.
int accessBytes(int align, int elemBytes) {
  int w = 16;
  while (w > elemBytes && w > std::min(align, 16)) w /= 2;
  return std::max(w, elemBytes);
}

// What gemv does not lower: anything but a 16-bit dense or batched GEMM.
bool checkProgram(const GemmProgram& g, const Config& c, DiagnosticEngine& diag) {
  if (g.fp8)
    return diag.error(g.dot->loc()) << c.strategy << " multiplies bf16 or f16 operands on the CUDA cores, not FP8; "
                                       "compile this program with sm80_multistage or sm90_ws_persistent";
  if (g.groupIndex || g.raggedBounds)
    return diag.error(g.forTiles->loc()) << c.strategy << " does not lower grouped or ragged GEMMs; compile this "
                                            "program with sm80_multistage or sm90_ws_persistent";
  if (g.dot->is("tile.dot_scaled"))
    return diag.error(g.dot->loc()) << c.strategy << " does not lower block-scaled dots (tile.dot_scaled); compile "
                                       "this program with sm90_ws_persistent";
  return true;
}

// The block's geometry from the config and B's layout; false after a diagnostic when the threads do
// not tile the block.
bool geometryOf(const GemmProgram& g, const Config& c, gemv::Geometry& geo, DiagnosticEngine& diag) {
  const int ebA = bitWidth(g.abType) / 8, ebB = bitWidth(g.bType) / 8;
  geo.kMajor = g.bKMajor;
  geo.T = c.blockThreads;
  geo.bm = c.bm;
  geo.bn = c.bn;
  geo.U = c.vectors;
  geo.V = accessBytes(c.alignB, ebB) / ebB;
  geo.VA = g.bKMajor && !g.aColMajor ? std::min(geo.V, accessBytes(c.alignA, ebA) / ebA) : 1;
  // A column-major A's bm elements of one k are contiguous (its rows run along M, aligned to
  // align_a): loaded VM at a time, VM a power of two dividing bm.
  if (g.aColMajor) {
    geo.VM = accessBytes(c.alignA, ebA) / ebA;
    while (geo.VM > 1 && c.bm % geo.VM) geo.VM /= 2;
  }
  const Location& at = g.program->loc();
  if (!geo.kMajor) {
    // A strided B's rows are as aligned as its leading dimension (checked at launch), whatever N:
    // its columns past N's last whole vector are loaded one at a time (gemv_loops.cpp), so N need
    // not be a multiple of V. A dense B's rows are N long: N itself must keep them aligned.
    geo.nTail = g.accessB.strided && geo.V > 1;
    geo.lanes = c.bn / geo.V;
    if (c.bn % geo.V || geo.lanes > 32 || (geo.lanes & (geo.lanes - 1)))
      return diag.error(at) << c.strategy << " gives each thread " << geo.V << " columns of a row-major B (align_b="
                            << c.alignB << "), so bn=" << c.bn << " needs " << c.bn / double(geo.V)
                            << " threads along N; make bn " << geo.V << " times a power of two up to 32";
  } else {
    geo.lanes = c.rowThreads;
    if (c.bn % geo.groups())
      return diag.error(at) << c.strategy << " gives each of the " << geo.groups() << " groups of row_threads="
                            << c.rowThreads << " threads a share of the bn=" << c.bn
                            << " rows of a K-major B, which does not come out even; make bn a multiple of "
                            << geo.groups();
  }
  return true;
}

// The alignments and multiples the kernel's accesses need (gemv.h, "requirements").
bool requirements(const GemmProgram& g, const Config& c, const gemv::Geometry& geo, kern::KernelLaunch& launch,
                  DiagnosticEngine& diag) {
  auto operand = [&](const Value* tensor, const GemmProgram::Access& access, int elems, const std::string& rowDim,
                     bool tail) {
    const int eb = bitWidth(tensor->type().elem()) / 8;
    launch.alignment.push_back({argName(tensor), elems * eb});
    if (!access.strided && access.ld.isSymbolic()) launch.requireMultiple(access.ld.sym, elems);
    if (!tail) launch.requireMultiple(rowDim, elems);  // no access straddles the end of a row
  };
  // A's loads run along K (row-major: VA elements) or along M (column-major: VM).
  operand(g.tensorA, g.accessA, g.aColMajor ? geo.VM : geo.VA, g.aColMajor ? g.dimM : g.dimK, false);
  operand(g.tensorB, g.accessB, geo.V, geo.kMajor ? g.dimK : g.dimN, geo.nTail);
  for (const Operation* op : g.epilogue) {
    if (!op->is("tile.store")) continue;
    const Type& t = op->operand(0)->type();
    const int eb = bitWidth(t.elem()) / 8;
    if (c.alignC < eb)
      return diag.error(op->loc()) << "align_c=" << c.alignC << " is less than the output's " << eb
                                   << "-byte elements, which are always aligned to their size: use " << eb << " or more";
    const int width = std::min(c.alignC, 16) >= 2 * eb ? 2 * eb : eb;
    launch.alignment.push_back({argName(op->operand(0)), width});
    launch.requireMultiple(t.shape()[t.rank() - 1].sym, width / eb);
  }
  return true;
}

// The sums of the block (`sums`, [bm][bn] f32) in the m16n8 fragment layout, a warp per 8 x J
// columns, through the sm80 epilogue. Fragment rows past bm read row bm - 1 (their stores are
// masked off: rowEnd). With fewer slices than warps, warp w stores slice w % slices: the same
// values to the same places as another warp (no warp-dependent branch around the stores, which the
// lockstep simulator could not run).
bool epilogue(sm80::Context& cx, const gemv::Geometry& geo, Value* sums) {
  KernBuilder& b = cx.b;
  const int tiles = geo.bn / 8;
  const int J = std::max(1, tiles / geo.warps());
  const int active = tiles / J;
  cx.mTilesOverride = 1;
  cx.nTilesOverride = J;
  cx.rowEnd = b.min(cx.dimM, b.addConst(cx.m0, geo.bm));
  cx.warpRow0 = cx.m0;
  Value* slice = active == geo.warps() ? cx.warp : b.rem(cx.warp, b.i32(active));
  Value* colLocal = b.mulConst(slice, 8 * J);
  cx.warpCol0 = b.add(cx.n0, colLocal);
  Value* g4 = b.div(cx.lane, b.i32(4));
  Value* t2 = b.mulConst(b.rem(cx.lane, b.i32(4)), 2);
  Value* last = b.i32(geo.bm - 1);
  std::vector<Value*> acc;
  for (int j = 0; j < J; ++j)
    for (int e = 0; e < 4; ++e) {
      Value* row = b.min(b.addConst(g4, e >= 2 ? 8 : 0), last);
      Value* col = b.addConst(b.add(colLocal, t2), 8 * j + (e & 1));
      Value* off = b.op1("kern.smem_offset", {sums, row, col}, types::i32());
      acc.push_back(b.op1("kern.ld_shared", {sums, b.i32(0), off}, types::f32(), {{"row", int64_t(0)}, {"col", int64_t(0)}}));
    }
  return sm80::buildEpilogue(cx, acc);
}

// The kernel's launch contract: its parameters (split_k: the workspace after the tensors), the
// requirements, the grid ([ceil(N / bn), ceil(M / bm), batches], or with split_k=S everything along
// x: S x tiles, the workspace's units being the tiles) and the shared memory.
bool launchContract(const GemmProgram& g, const Operation& program, const Config& config, const gemv::Geometry& geo,
                    kern::KernelLaunch& launch, DiagnosticEngine& diag) {
  const int S = config.splitK;
  launch.name = program.stringAttr("sym_name");
  for (size_t i = 0; i < g.params.size(); ++i) {
    launch.params.push_back(g.params[i].name);
    bool lastTensor = kern::isPtr(g.params[i].type) && (i + 1 == g.params.size() || !kern::isPtr(g.params[i + 1].type));
    if (S > 1 && lastTensor) launch.params.insert(launch.params.end(), {"ws_flags", "ws_partials"});
  }
  if (!requirements(g, config, geo, launch, diag)) return false;
  using Axis = kern::KernelLaunch::Axis;
  if (S > 1) {
    Axis x{S, {{g.dimN, config.bn}, {g.dimM, config.bm}}};
    if (!g.dimBatch.empty()) x.tiles.push_back({g.dimBatch, 1});
    launch.grid = {x};
    launch.workspace = std::array<int64_t, 2>{4, int64_t(S) * geo.bm * geo.bn * 4};
  } else {
    launch.grid = {Axis{1, {{g.dimN, config.bn}}}, Axis{1, {{g.dimM, config.bm}}}};
    if (!g.dimBatch.empty()) launch.grid.push_back(Axis{1, {{g.dimBatch, 1}}});
  }
  launch.threads = geo.T;
  launch.smemBytes = geo.smemBytes() + (S > 1 ? 128 : 0);  // split_k: a vote per warp (gemv_split.cpp)
  return true;
}

}  // namespace

std::unique_ptr<Operation> lowerGemv(const Operation& program, const Target& target, const Config& config,
                                     DiagnosticEngine& diag) {
  auto g = analyzeGemm(program, config.strategy, diag);
  if (!g || !checkProgram(*g, config, diag)) return nullptr;
  if (!validate(config, target, OperandInfo{bitWidth(g->abType) / 8, bitWidth(g->bType) / 8}, diag, program.loc()))
    return nullptr;
  gemv::Geometry geo;
  if (!geometryOf(*g, config, geo, diag)) return nullptr;

  kern::KernelLaunch launch;
  if (!launchContract(*g, program, config, geo, launch, diag)) return nullptr;
  std::vector<NamedAttr> attrs = kern::kernelAttributes(launch, {{"target", target.name}, {"config", config.str()}});
  // With split_k, the register limit of one block per SM, stated (.maxnreg): without a limit,
  // ptxas for sm_90a schedules for occupancy and issues each 16-byte load of B just before its FMAs,
  // two in flight a thread (the SASS at M = 1: 40 registers); with one, even this loose, it issues
  // every load of the step first (72 registers), as the lowering orders them (the gates test checks
  // the order). A split grid is sized to be resident at that count (about three blocks per SM,
  // ops/gemm_bf16_gemv.cpp); an unsplit one keeps ptxas's occupancy (its many tiles, up to eight
  // blocks per SM at 32 registers, ran at 0.94 of the read ceiling on the H100).
  if (config.splitK > 1) attrs.push_back({"max_regs", int64_t(std::min(255, 65536 / geo.T / 8 * 8))});
  auto kernel = Operation::create(program.loc(), "kern.kernel", {}, {}, attrs, 1);
  Block* body = kernel->region(0).addBlock();
  KernBuilder b(body);
  b.setLoc(program.loc());
  sm80::Context cx{*g, config, target, b, diag};
  gemv::Split sp{config.splitK};
  bindKernelEntry(cx, body, sp.splits > 1);
  cx.warpM = cx.warpN = b.i32(0);
  gemv::KRange kr;
  if (sp.splits > 1) {
    kr = gemv::sliceOf(cx, geo, sp);
  } else {
    cx.n0 = b.named(b.mulConst(b.op1("kern.block_id", {}, types::i32(), {{"dim", "x"}}), config.bn), "n0");
    cx.m0 = b.named(b.mulConst(b.op1("kern.block_id", {}, types::i32(), {{"dim", "y"}}), config.bm), "m0");
    if (g->batchArg) cx.batch = b.named(b.op1("kern.block_id", {}, types::i32(), {{"dim", "z"}}), "batch");
  }
  Value* sums = b.op1("kern.smem_alloc", {}, kern::smemType(ScalarType::F32, 1, geo.bm, geo.cols(), Swizzle{}),
                      {{"offset", geo.partialsBytes()}});
  if (geo.kMajor) {
    gemv::kPathSums(cx, geo, sums, kr);
  } else {
    Value* partials = b.op1("kern.smem_alloc", {},
                            kern::smemType(ScalarType::F32, geo.warps(), geo.bm, geo.cols(), Swizzle{}), {{"offset", int64_t(0)}});
    gemv::nPathSums(cx, geo, partials, sums, kr);
  }
  if (sp.splits == 1) {
    if (!epilogue(cx, geo, sums)) return nullptr;
    return kernel;
  }
  Value* votes = b.op1("kern.smem_alloc", {}, kern::smemType(ScalarType::F32, 1, 1, 32, Swizzle{}),
                       {{"offset", geo.smemBytes()}});
  if (!gemv::finishSplit(cx, geo, sp, sums, votes, [&] { return epilogue(cx, geo, sums); })) return nullptr;
  return kernel;
}

bool lowerGemvPass(Module& m, DiagnosticEngine& diag) { return lowerPrograms(m, *findLowering("lower-gemv"), diag); }

}  // namespace kiln
