// The sm80_multistage strategy entry (contract in sm80_multistage.h). It checks the program and the
// config, creates the kernel and its indices, and hands over to the main loop
// (sm80_mainloop.cpp) and the epilogue (sm80_epilogue.cpp).
#include "schedule/sm80_multistage.h"
#include "schedule/lower_programs.h"

#include "dialects/kern/kernel_launch.h"
#include "dialects/tile/tensor_layout.h"
#include "schedule/sm80_context.h"
#include "schedule/sm80_epilogue_address.h"

namespace kiln {
using namespace ir;

namespace {

// Block coordinates: which (M, N) tile this block computes.
void blockCoordinates(sm80::Context& cx) {
  KernBuilder& b = cx.b;
  const Config& c = cx.cfg;
  Value *pidM, *pidN;
  if (c.raster == Raster::Grouped) {
    // Walk groups of group_m tile rows column by column, so consecutive blocks share B tiles.
    Value* pid = b.op1("kern.block_id", {}, types::i32(), {{"dim", "x"}});
    Value* npm = b.div(b.addConst(cx.dimM, c.bm - 1), b.i32(c.bm));
    Value* npn = b.div(b.addConst(cx.dimN, c.bn - 1), b.i32(c.bn));
    Value* width = b.mulConst(npn, c.groupM);
    Value* first = b.mulConst(b.div(pid, width), c.groupM);
    Value* size = b.min(b.sub(npm, first), b.i32(c.groupM));
    Value* within = b.rem(pid, width);
    pidM = b.add(first, b.rem(within, size));
    pidN = b.div(within, size);
  } else {
    pidN = b.op1("kern.block_id", {}, types::i32(), {{"dim", "x"}});
    pidM = b.op1("kern.block_id", {}, types::i32(), {{"dim", "y"}});
  }
  cx.m0 = b.named(b.mulConst(pidM, c.bm), "m0");
  cx.n0 = b.named(b.mulConst(pidN, c.bn), "n0");
}

}  // namespace

Value* sm80::Context::matrixBase(const Value* tensor) {
  auto it = matrixBases.find(tensor);
  if (it != matrixBases.end()) return it->second;
  Value* base = args.at(tensor->definingOp()->stringAttr("name"));
  const Type& t = tensor->type();
  Value* index = batch ? batch : (groupB && tensor == g.tensorB && g.bGrouped) ? groupB : nullptr;
  if (index && t.rank() == 3) {
    // A dense tensor's matrices lie back to back; a strided one's are its axis-0 stride apart (0:
    // one matrix for every batch).
    tile::TensorLayout layout = tile::tensorLayout(t);
    if (!layout.strided()) {
      Value* slice = b.mul(b.cast(extent(t.shape()[1]), types::i64()), b.cast(extent(t.shape()[2]), types::i64()));
      base = b.ptrAdd(base, b.mul(b.cast(index, types::i64()), slice));
    } else if (layout.strides[0].isSymbolic() || layout.strides[0].value != 0) {
      base = b.ptrAdd(base, b.mul(b.cast(index, types::i64()), b.cast(extent(layout.strides[0]), types::i64())));
    }
  }
  return matrixBases[tensor] = base;
}

namespace {

std::string argName(const Value* tensor) { return tensor->definingOp()->stringAttr("name"); }

// What the kernel asks of its operands (Config::alignA / alignB / alignC): each pointer aligned to
// the widest access the kernel makes to it, and, for a dense tensor, its rows too, through the dim
// that is its row length (a strided tensor's leading dimension the runtime checks with the
// argument named). The output's row length is a multiple of its stores, dense or strided. False after a diagnostic for an alignment the output's elements cannot have.
bool operandRequirements(const GemmProgram& g, const Config& config, kern::KernelLaunch& launch,
                         DiagnosticEngine& diag) {
  auto operand = [&](const Value* tensor, const GemmProgram::Access& access, int align) {
    const int eb = bitWidth(tensor->type().elem()) / 8;
    const int width = std::min(align, 16) >= 4 ? std::min(align, 16) : eb;  // below 4 bytes: by element
    launch.alignment.push_back({argName(tensor), width});
    if (!access.strided && access.ld.isSymbolic()) launch.requireMultiple(access.ld.sym, width / eb);
  };
  operand(g.tensorA, g.accessA, config.alignA);
  operand(g.tensorB, g.accessB, config.alignB);
  for (const Operation* op : g.epilogue) {
    if (!op->is("tile.store")) continue;
    const Type& t = op->operand(0)->type();
    const int eb = bitWidth(t.elem()) / 8;
    if (config.alignC < eb)
      return diag.error(op->loc()) << "align_c=" << config.alignC << " is less than the output's " << eb
                                   << "-byte elements, which are always aligned to their size: use " << eb
                                   << " or more";
    const int width = std::min(config.alignC, 16) >= 2 * eb ? 2 * eb : eb;  // pairs, or one element
    launch.alignment.push_back({argName(op->operand(0)), width});
    // A pair must not straddle a row's end, dense or strided.
    launch.requireMultiple(t.shape()[t.rank() - 1].sym, width / eb);
  }
  sm80::requirePairLoads(g, config, launch);  // the epilogue's loads of column pairs
  return true;
}

// The copies of both rings come out even over the threads, and a column-major A's stage rows (bm
// elements) are at least the 64 bytes the swizzle needs.
bool copiesFit(const GemmProgram& g, const Config& config, DiagnosticEngine& diag) {
  const int64_t ebA = bitWidth(g.abType) / 8, ebB = bitWidth(g.bType) / 8;
  if (g.aColMajor && (config.bm * ebA < 64 || (config.bm * ebA) & (config.bm * ebA - 1)))
    return diag.error(g.loadA->loc()) << config.strategy << " stages a column-major A in rows of bm elements, which "
                                      << "must make a power of two of at least 64 bytes; bm=" << config.bm
                                      << " does not: use bm=32 or more, a power of two";
  const int64_t threads = config.threads();
  auto fits = [&](const char* what, int64_t rows, int64_t rowBytes) {
    const int64_t cpr = rowBytes / 16;
    if (cpr > 0 && threads % cpr == 0 && rows % (threads / cpr) == 0) return true;
    diag.error(g.program->loc()) << config.strategy << " deals the " << what << " stage (" << rows << " rows of "
                                 << rowBytes << " bytes) out to " << threads
                                 << " threads in whole 16-byte chunks of each row, which does not come out even; "
                                    "change the block tile or the warps";
    return false;
  };
  return fits("A", g.aColMajor ? config.bk : config.bm, (g.aColMajor ? config.bm : config.bk) * ebA) &&
         fits("B", g.bKMajor ? config.bn : config.bk, (g.bKMajor ? config.bk : config.bn) * ebB);
}

// Grouped GEMM: the block's group is the id of its first row, ids[m0] (tile.group_index; every
// row of the block has it because bm divides {align}). One scalar load per thread -- the same
// address for the whole block, served by L1 -- and a range check against B's group axis.
void groupOfBlock(sm80::Context& cx) {
  KernBuilder& b = cx.b;
  const GemmProgram& g = cx.g;
  b.setLoc(g.groupIndex->loc());
  Value* ids = cx.args.at(g.groupIds->definingOp()->stringAttr("name"));
  Value* at = b.ptrAdd(ids, b.cast(cx.m0, types::i64()));
  Value* id = b.op1("kern.ld_global", {at, b.cmp("slt", cx.m0, cx.dimM)}, Type::scalar(g.groupIds->type().elem()));
  cx.group = b.named(b.cast(id, types::i64()), "group");
  if (!g.bGrouped) return;
  Value* groups = b.cast(cx.extent(g.tensorB->type().shape()[0]), types::i64());
  cx.groupOk = b.named(b.andi(b.cmp("sle", b.i64(0), cx.group), b.cmp("slt", cx.group, groups)), "group_ok");
  cx.groupB = b.named(b.select(cx.groupOk, cx.group, b.i64(0)), "group_b");
}

}  // namespace

// The kernel's entry shared by the strategies that build on sm80::Context (sm80_multistage, gemv):
// the program's arguments and dims bound as kernel parameters, then the thread's indices.
void sm80::bindKernelEntry(sm80::Context& cx, Block* body, bool workspace) {
  const GemmProgram& g = cx.g;
  KernBuilder& b = cx.b;
  for (size_t i = 0; i < g.params.size(); ++i) {
    const auto& p = g.params[i];
    (p.decl ? cx.args : cx.dims)[p.name] = body->addArgument(p.type, p.name);
    bool lastTensor = kern::isPtr(p.type) && (i + 1 == g.params.size() || !kern::isPtr(g.params[i + 1].type));
    if (workspace && lastTensor) {
      cx.wsFlags = body->addArgument(kern::ptrType(ScalarType::I32), "ws_flags");
      cx.wsPartials = body->addArgument(kern::ptrType(ScalarType::F32), "ws_partials");
    }
  }
  cx.dimM = cx.dims.at(g.dimM);
  cx.dimN = cx.dims.at(g.dimN);
  cx.dimK = cx.dims.at(g.dimK);
  b.setLoc(g.forTiles->loc());
  cx.tid = b.named(b.op1("kern.thread_id", {}, types::i32()), "tid");
  cx.lane = b.named(b.op1("kern.lane_id", {}, types::i32()), "lane");
  cx.warp = b.named(b.op1("kern.warp_id", {}, types::i32()), "warp");
}

std::unique_ptr<Operation> lowerSm80Multistage(const Operation& program, const Target& target, const Config& config,
                                               DiagnosticEngine& diag) {
  auto g = analyzeGemm(program, config.strategy, diag);
  if (!g) return nullptr;
  if (g->fp8 && !target.mmaSyncFp8) {
    diag.error(g->dot->loc()) << config.strategy << " lowers an FP8 tile.dot to mma.sync m16n8k32 (."
                              << (g->abType == ScalarType::F8E4M3 ? "e4m3" : "e5m2")
                              << "), which needs sm_89 or newer; " << target.name
                              << " has no FP8 MMA (compile for sm_89, sm_90a or sm_120)";
    return nullptr;
  }
  int eb = bitWidth(g->abType) / 8;
  if (!validate(config, target, OperandInfo{eb, bitWidth(g->bType) / 8}, diag, program.loc())) return nullptr;
  if (g->groupIndex && g->groupAlign % config.bm != 0) {
    diag.error(g->groupIndex->loc()) << "tile.group_index {align = " << g->groupAlign << "} promises groups of "
                                     << "multiples of " << g->groupAlign << " rows, but bm=" << config.bm
                                     << " does not divide " << g->groupAlign
                                     << ", so a block could straddle two groups; use a bm that divides it";
    return nullptr;
  }

  // The kernel and its launch contract.
  kern::KernelLaunch launch;
  launch.name = program.stringAttr("sym_name");
  for (const auto& p : g->params) launch.params.push_back(p.name);
  if (!operandRequirements(*g, config, launch, diag) || !copiesFit(*g, config, diag)) return nullptr;
  using Axis = kern::KernelLaunch::Axis;
  if (config.raster == Raster::Grouped)
    launch.grid = {Axis{1, {{g->dimM, config.bm}, {g->dimN, config.bn}}}};
  else
    launch.grid = {Axis{1, {{g->dimN, config.bn}}}, Axis{1, {{g->dimM, config.bm}}}};
  if (!g->dimBatch.empty()) {
    if (launch.grid.size() == 1) launch.grid.push_back(Axis{});
    launch.grid.push_back(Axis{1, {{g->dimBatch, 1}}});
  }
  launch.threads = config.threads();
  launch.smemBytes = config.pipelineSmemBytes(eb, bitWidth(g->bType) / 8);
  auto kernel = Operation::create(program.loc(), "kern.kernel", {}, {},
                                  kern::kernelAttributes(launch, {{"target", target.name}, {"config", config.str()}}), 1);
  Block* body = kernel->region(0).addBlock();
  KernBuilder b(body);
  b.setLoc(program.loc());
  sm80::Context cx{*g, config, target, b, diag};
  bindKernelEntry(cx, body);
  cx.warpM = b.named(b.div(cx.warp, b.i32(config.warpsN)), "wm");
  cx.warpN = b.named(b.rem(cx.warp, b.i32(config.warpsN)), "wn");
  blockCoordinates(cx);
  if (g->batchArg) cx.batch = b.named(b.op1("kern.block_id", {}, types::i32(), {{"dim", "z"}}), "batch");
  if (g->groupIndex) groupOfBlock(cx);

  std::vector<Value*> acc = sm80::buildMainloop(cx);
  if (!sm80::buildEpilogue(cx, acc)) return nullptr;
  return kernel;
}

// The pass: every tile.program becomes a kern.kernel. The program's optional {target = "sm_80",
// config = "bm=..."} attributes choose the target and the schedule (defaults: sm_80, the
// strategy's default config).
bool lowerSm80MultistagePass(Module& m, DiagnosticEngine& diag) {
  return lowerPrograms(m, *findLowering("lower-sm80-multistage"), diag);
}

}  // namespace kiln
