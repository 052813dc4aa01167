// Assembly gates and selection of the gemm_fp8 family (src/ops/gemm_fp8.h), on the CPU: every
// fp8_gemm_sm90_* variant compiles for sm_90a and assembles with a 0-byte stack frame and no
// spills; its K step is exactly bk / 32 = 4 QGMMA.64x<N>x32.F32.E4M3.E4M3 per m64 block of a
// consumer warpgroup (FP8 wgmma, both operands K-major: no .tnsp; "_pairs" emits three steps), with
// no HGMMA or HMMA anywhere;
// it loads through TMA (UTMALDG) and, with epilogue=tma, stores through it (UTMASTG); with two
// consumer warpgroups setmaxnreg is honoured (USETMAXREG). Eligibility says what to change, and
// the heuristic picks the tiles the H200 measured fastest (bench/results/2026-11-30-h200-fp8/).
// The SASS gates need a disassembler (they skip, saying why, without one).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "backend/assembler.h"
#include "kiln/sass_stats.h"
#include "ops/gemm_fp8.h"
#include "tests/unit/testing/recorded_config.h"
#include "tests/unit/testing/sass_loop.h"

namespace kiln::ops {
namespace {

TEST(GemmFp8Gates, EligibilitySaysWhatToChange) {
  const Fp8GemmVariant& v = gemmFp8Variants().front();
  std::string why;
  EXPECT_TRUE(v.eligible({4096, 4096, 4096}, Target::sm90a(), &why)) << why;
  EXPECT_FALSE(v.eligible({4096, 4096, 4104}, Target::sm90a(), &why));
  EXPECT_EQ(why, "K = 4104 is not a multiple of 16 (16-byte FP8 rows for TMA)");
  EXPECT_FALSE(v.eligible({4096, 4100, 4096}, Target::sm90a(), &why));
  EXPECT_EQ(why, "N = 4100 is not a multiple of 8 (16-byte rows of the bf16 output)");
  Fp8GemmProblem e5m2{64, 64, 64};
  e5m2.a = ir::ScalarType::F8E5M2;
  EXPECT_TRUE(v.eligible(e5m2, Target::sm90a(), &why)) << why;
  Fp8GemmProblem bf16A{64, 64, 64};
  bf16A.a = ir::ScalarType::BF16;
  EXPECT_FALSE(v.eligible(bf16A, Target::sm90a(), &why));
  EXPECT_EQ(why, "A and B must be f8e4m3 or f8e5m2, not bf16 and f8e4m3");
  Fp8GemmProblem fast{4096, 4096, 4096};
  fast.fastAccum = true;
  EXPECT_FALSE(v.eligible(fast, Target::sm90a(), &why));
  EXPECT_EQ(why, "it promotes each K step's sums (the problem asks for fast accumulation)");
  Fp8GemmProblem scaled{4096, 4096, 4096};
  scaled.scaling = Fp8Scaling::Tensorwise;
  EXPECT_TRUE(v.eligible(scaled, Target::sm90a(), &why)) << why;
  scaled.scaling = Fp8Scaling::Block1x128x128x128;
  EXPECT_TRUE(v.eligible(scaled, Target::sm90a(), &why)) << why;  // it promotes
  const Fp8GemmVariant* fastacc = findGemmFp8Variant("fp8_gemm_sm90_128x256x128_s4_tma_fastacc");
  ASSERT_TRUE(fastacc);
  scaled.fastAccum = true;  // ignored: block scales need each step's sums promoted
  EXPECT_FALSE(fastacc->eligible(scaled, Target::sm90a(), &why));
  EXPECT_EQ(why, "it sums K steps in the tensor cores (fast accumulation); block_1x128_128x128 scales apply as each "
                 "K step's sums are promoted");
  for (const Target& t : {Target::sm80(), Target::sm90(), Target::sm120()}) {
    EXPECT_FALSE(v.eligible({4096, 4096, 4096}, t, &why)) << t.name;
    EXPECT_NE(why.find("wgmma"), std::string::npos) << why;
  }
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(selectGemmFp8({4096, 4096, 4096}, Target::sm80(), diag));
  EXPECT_NE(diag.str().find("no gemm_fp8 variant can run this problem on sm_80"), std::string::npos) << diag.str();
  EXPECT_FALSE(selectGemmFp8({64, 64, 64}, Target::sm90a(), diag, "fp8_gemm_sm90_1x1"));
  EXPECT_NE(diag.str().find("unknown gemm_fp8 variant 'fp8_gemm_sm90_1x1'"), std::string::npos) << diag.str();
}

TEST(GemmFp8Gates, EveryVariantAssemblesSpillFreeOnFp8Wgmma) {
  ir::DiagnosticEngine probe;
  if (!backend::sassStats({}, probe) && probe.str().find("install") != std::string::npos)
    GTEST_SKIP() << "no SASS disassembler: " << probe.str();
  std::set<std::string> names;
  for (const Fp8GemmVariant& v : gemmFp8Variants()) {
    SCOPED_TRACE(v.name);
    EXPECT_TRUE(names.insert(v.name).second) << "two variants share a name";
    ir::DiagnosticEngine diag;
    auto r = v.compile(Target::sm90a(), diag);
    ASSERT_TRUE(r) << diag.str();
    auto cubin = backend::assemble(r->ptx, Target::sm90a().ptxTarget, diag);
    ASSERT_TRUE(cubin) << diag.str();
    const auto& report = cubin->resources.begin()->second;
    EXPECT_EQ(report.stackFrameBytes, 0);
    EXPECT_EQ(report.spillStoreBytes + report.spillLoadBytes, 0);
    auto sass = backend::sassStats(cubin->cubin, diag);
    ASSERT_TRUE(sass) << diag.str();
    const Config& c = v.config;
    int rows = c.consumers == Consumers::Pingpong ? c.bm : c.bm / c.warpsM;
    std::string qgmma = "QGMMA.64x" + std::to_string(c.bn) + "x32.F32.E4M3.E4M3";
    // One K step's worth, emitted once; with promote_pairs three times (the pair, and the loop of
    // the odd last step).
    const int steps = c.fp8Accum == Fp8Accum::PromotePairs ? 3 : 1;
    EXPECT_EQ(sass->count(qgmma), (c.bk / 32) * (rows / 64) * steps);
    EXPECT_EQ(sass->count("QGMMA"), (c.bk / 32) * (rows / 64) * steps);
    EXPECT_EQ(sass->count("HGMMA") + sass->count("HMMA"), 0);
    EXPECT_EQ(sass->text.find("tnsp"), std::string::npos);
    EXPECT_GT(sass->count("UTMALDG"), 0);
    EXPECT_EQ(sass->count("UTMASTG") > 0, c.epilogue == EpilogueStore::Tma);
    EXPECT_EQ(sass->count("USETMAXREG") > 0, c.warpsM * c.warpsN == 2);
    // epilogue_loads=prefetch: one L1 prefetch of the scales' lines per scale (CCTL.E.PF1), none
    // otherwise.
    EXPECT_EQ(sass->count("CCTL.E.PF1"), c.epilogueLoads == EpilogueLoads::Prefetch ? 2 : 0);
    // Descriptors on the uniform datapath (docs/sm90-strategy.md, "Uniform where ptxas can see it").
    EXPECT_EQ(sass->wgmmaBatchR2ur, 0);
  }
}

// A recorded kernel as the registered variant with its config, if any. The runs of
// bench/results/2026-11-30-h200-fp8/ predate epilogue_loads: every variant there loaded its scales
// late, and such a record (`loadsLate`) stands for the variant whatever its epilogue_loads. Every
// record here predates epilogue_loads=prefetch too: a kernel recorded loading late stands for its
// registered prefetching twin (the promoted 128-row tiles, measured 0-4% ahead of late loads at
// BENCH.md's FP8 shapes, never behind: bench/results/2026-12-02-h200-prefetch/). The 128x128
// promote_pairs tile loads early since 2026-12-06 (its 36 scale values fit beside the sums); every
// record of it loaded late or prefetched, and stands for it (early loads measured 2-7% ahead of
// prefetching on the tiles where they fit, never behind: bench/results/2026-12-02-h200-prefetch/).
const Fp8GemmVariant* registeredAs(const std::string& config, bool loadsLate = false) {
  auto c = testing::parseRecordedConfig(config);
  if (!c) return nullptr;
  for (const auto& v : gemmFp8Variants()) {
    Config as = *c;
    const bool pairsTile = v.config.fp8Accum == Fp8Accum::PromotePairs && v.config.bm == 128 && v.config.bn == 128;
    if (loadsLate || (as.epilogueLoads == EpilogueLoads::Late && v.config.epilogueLoads == EpilogueLoads::Prefetch) ||
        (pairsTile && as.epilogueLoads != EpilogueLoads::Early && v.config.epilogueLoads == EpilogueLoads::Early))
      as.epilogueLoads = v.config.epilogueLoads;
    if (v.config == as) return &v;
  }
  return nullptr;
}

// One shape of a recorded kiln_fp8_bench run judged against the family's pick: `measure` ("vs_cublaslt"
// or "tflops") of the pick and of the fastest registered variant, correct ones only (picked < 0:
// the pick was not measured there, registered or made eligible after the run). The run's
// cuBLASLt accumulation says which accumulation the pick is for; an entry's `scaling` its mode
// (rowwise where the run predates modes).
struct JudgedShape {
  Fp8GemmProblem problem;
  std::string name, pick;  // "block_1x128_128x128 64x7168x16384"; the picked variant
  double picked = -1, best = 0;
};

std::vector<JudgedShape> judgeRecordedRun(const std::string& file, const char* measure, bool loadsLate = false) {
  std::ifstream in(std::string(KILN_SOURCE_DIR) + "/bench/results/" + file);
  EXPECT_TRUE(in) << file;
  if (!in) return {};
  nlohmann::json run = nlohmann::json::parse(in);
  std::vector<JudgedShape> out;
  for (const auto& entry : run["results"]) {
    JudgedShape j;
    Fp8GemmProblem& p = j.problem;
    p = {entry["M"].get<int64_t>(), entry["N"].get<int64_t>(), entry["K"].get<int64_t>()};
    p.fastAccum = run["cublaslt_fast_accum"].get<bool>();
    if (entry.contains("scaling")) {
      auto scaling = parseFp8Scaling(entry["scaling"].get<std::string>());
      EXPECT_TRUE(scaling) << file;
      if (scaling) p.scaling = *scaling;
    }
    j.name = fmt::format("{} {}x{}x{}", fp8ScalingName(p.scaling), p.m, p.n, p.k);
    ir::DiagnosticEngine diag;
    auto pick = selectGemmFp8(p, Target::sm90a(), diag);
    EXPECT_TRUE(pick) << diag.str();
    if (!pick) continue;
    j.pick = pick->variant->name;
    for (const auto& k : entry["kiln"]) {
      // Records trimmed to the variant's registered name (2026-12-07 on) or with its config line.
      const Fp8GemmVariant* v = k.contains("config") ? registeredAs(k["config"].get<std::string>(), loadsLate)
                                                     : findGemmFp8Variant(k["name"].get<std::string>());
      if (!v || !k["correct"].get<bool>()) continue;
      j.best = std::max(j.best, k[measure].get<double>());
      if (v == pick->variant) j.picked = std::max(j.picked, k[measure].get<double>());
    }
    EXPECT_GT(j.best, 0) << file << ": no registered variant measured at " << j.name;
    out.push_back(j);
  }
  return out;
}

// The heuristic against the H200 (each kernel timed in alternation with cuBLASLt in the same
// accumulation). The recorded runs, each with how close every pick must come to the fastest
// registered variant of its accumulation measured there, per shape and in geometric mean:
// - bench/results/2026-11-30-h200-fp8/, loaded late (before epilogue_loads): at BENCH.md's shapes
//   (promote_pairs.json, the promoting variants; family_fast.json, the "_fastacc" ones) within 3%.
//   At eight more shapes (heldout_*.json, measured after the first fit, which missed at four of
//   them by 10-32% and was refitted on them) 0.95 in geometric mean and none below 0.75:
//   1000x3000x2000 with fast accumulation stays at 0.79 (ping-pong 128x128 against 128x256 pairs;
//   its K = 2000 puts A's and B's rows off 32-byte sectors, which the heuristic does not model).
//   heldout2_*.json: six more shapes measured after the refit, held to the same bounds.
// - bench/results/2026-12-01-h200-early-loads/, the family as registered now (scales loaded early
//   where it pays): BENCH.md's shapes within 5% (8192^3 moves 3-4% between runs of the same
//   kernel) and 0.98 in geometric mean; the fourteen held-out shapes as above (1000x3000x2000 fast
//   at 0.71 then: the 128x256 pairs gained more from the early scales than the ping-pong pick);
//   sectors_*.json, thirteen shapes whose K is off 32-byte sectors (K = 16 mod 32), measured with
//   the sector term and 128x160 promote in pairs along M registered: within 3% and 0.98;
//   lines*_*.json, twelve shapes whose K is a multiple of 32 but not of 128 (the first six fitted
//   the off-line term, the rest held it out): the same bounds.
// - bench/results/2026-12-01-h200-promote-turnaround/lone_family_fast.json: the FAST_ACCUM family
//   after its lone 64x128 ring moved to a TMA store (s8 for s9), at the recorded shapes where that
//   ring is picked and seven more small-M shapes: 0.75 per shape, 0.94 in geometric mean (two
//   picks missed by 23% there before the balance point moved from 495 to 300 flops per byte).
//   balance_*.json: ten shapes between those balance points, held out from that change (0.908 and
//   0.940 of the best in geometric mean, against 0.858 and 0.911 with 495): 0.70 per shape, 0.90
//   with fast accumulation and 0.93 promoted.
// - bench/results/2026-12-02-h200-closing/: both families at BENCH.md's shapes, and the promoted
//   family at eight shapes where 128x128 promote_pairs and 128x160 promote fill their waves alike
//   (pairs_heldout.json, measured before kPromotePairsTerm was set, which moved all eight picks to
//   the pairs): within 3% and 0.98 in geometric mean, the eight held-out ones within 2% and 0.99 (the
//   picks before the term ran at 0.971-0.996 of the best there, 0.984 in geometric mean).
// - The promoted picks of rowwise and tensorwise problems were refitted on the H100 (2026-12-06,
//   kPromotedSingleStepRate and kPromotedEpilogueSteps in gemm_fp8.cpp; the H100 test below),
//   where 128x160 promote and the 128x128 pairs trade places against these H200 runs: at
//   4096x4096x14336 the pairs ran 7% ahead on the H200 (fp8_promote.json) and 128x160 10% ahead
//   on the H100, at 4096x7168x2048 the other way round. The H200 records the refit moves off
//   their best keep bounds just below where its picks land there (the worst, 0.928, at
//   4096x4096x14336), marked "H100 refit"; every other bound is unchanged.
// A record made before the variant now picked at one of its shapes was registered cannot judge
// that pick; such a shape must then be judged by a later record of the same accumulation. `shapes`
// counts the picks a record judges (one fewer may be judged): heldout2_fast.json and the
// early-loads heldout_fast.json judge fewer than they measured, their lone 64x128 picks being the
// TMA-store ring registered after them.
struct Recorded {
  const char* dir;
  const char* file;
  double perShape, geomean;
  int shapes;
  bool loadsLate;
};
constexpr Recorded kRecorded[] = {
    {"2026-11-30-h200-fp8", "promote_pairs.json", 0.95, 0.97, 6, true},  // H100 refit: 0.952
    {"2026-11-30-h200-fp8", "family_fast.json", 0.97, 0.97, 6, true},
    {"2026-11-30-h200-fp8", "heldout_precise.json", 0.75, 0.95, 8, true},
    {"2026-11-30-h200-fp8", "heldout_fast.json", 0.75, 0.95, 8, true},
    {"2026-11-30-h200-fp8", "heldout2_precise.json", 0.75, 0.95, 6, true},
    {"2026-11-30-h200-fp8", "heldout2_fast.json", 0.75, 0.95, 5, true},
    {"2026-12-01-h200-early-loads", "final_promote.json", 0.95, 0.98, 6, false},
    {"2026-12-01-h200-early-loads", "final_fast.json", 0.95, 0.98, 6, false},
    {"2026-12-01-h200-early-loads", "heldout_promote.json", 0.70, 0.95, 14, false},
    {"2026-12-01-h200-early-loads", "heldout_fast.json", 0.70, 0.95, 12, false},
    {"2026-12-01-h200-early-loads", "sectors_promote.json", 0.97, 0.98, 13, false},
    {"2026-12-01-h200-early-loads", "sectors_fast.json", 0.97, 0.98, 13, false},
    {"2026-12-01-h200-early-loads", "lines_promote.json", 0.95, 0.98, 6, false},  // H100 refit: 0.956
    {"2026-12-01-h200-early-loads", "lines_fast.json", 0.97, 0.98, 6, false},
    {"2026-12-01-h200-early-loads", "lines2_promote.json", 0.94, 0.98, 6, false},  // H100 refit: 0.949
    {"2026-12-01-h200-early-loads", "lines2_fast.json", 0.97, 0.98, 6, false},
    {"2026-12-01-h200-promote-turnaround", "lone_family_fast.json", 0.75, 0.94, 13, false},
    {"2026-12-01-h200-promote-turnaround", "balance_fast.json", 0.70, 0.90, 10, false},
    {"2026-12-01-h200-promote-turnaround", "balance_promote.json", 0.70, 0.93, 10, false},
    {"2026-12-02-h200-closing", "fp8_promote.json", 0.92, 0.98, 6, false},  // H100 refit: 0.928
    {"2026-12-02-h200-closing", "fp8_fast.json", 0.97, 0.98, 6, false},
    {"2026-12-02-h200-closing", "pairs_heldout.json", 0.97, 0.98, 8, false},  // H100 refit: 0.975, 0.983
};

// 1x128 x 128x128: the scale work of the K loop (SASS; kLoopOpcodes: a pair's loop for pairs) per
// step: 2 scale_a loads per m64 block and one scale_b load (two where a 160-column tile spans two
// blocks), one FMUL per row and block, one FFMA per accumulator, and (160 columns) one FSEL per row
// and 32-column chunk; the addresses made before the loop (before 2026-12-06's two-block scale_b,
// 128x160 made 22 loads a step, 40 FMUL, 215 IMAD and 87 ISETP). 1x128 x 1x128: one 8-byte scale_b
// load per pair of adjacent columns (one per column before 2026-12-06's paired loads: 42 loads, 41
// ISETP and 13 CS2R a step at 128x160) and one FMUL per row and column, each pair's address a
// constant offset from the thread's first (before, 505 instructions a step besides the FFMAs at
// 128x160, 422 at 64x128).
void expectBlockScaleWork(const Fp8GemmVariant& v, Fp8Scaling mode, const std::vector<char>& cubin, bool rowsInStage,
                          bool blocksInStage) {
  ir::DiagnosticEngine diag;
  auto sass = backend::sassStats(cubin, diag);
  if (!sass) return;  // no disassembler: the spill checks above stand alone
  const auto loop = testing::kLoopOpcodes(sass->text, "QGMMA");
  const Config& c = v.config;
  const int steps = c.fp8Accum == Fp8Accum::PromotePairs ? 2 : 1, blocks = c.bm / c.warpsM / 64;
  const int spans = c.bn == 160 ? 2 : 1, acc = blocks * c.bn / 2;
  EXPECT_EQ(testing::countPrefix(loop, "QGMMA"), 4 * blocks * steps);
  int total = 0;
  for (const auto& [op, n] : loop) total += n;
  if (mode == Fp8Scaling::Block1x128x1x128) {
    EXPECT_EQ(testing::countPrefix(loop, "LDG"), rowsInStage ? 0 : steps * 2 * blocks);
    EXPECT_EQ(testing::countPrefix(loop, "LDS.64"), steps * c.bn / 8);
    EXPECT_EQ(testing::countPrefix(loop, "LDS"), steps * (c.bn / 8 + (rowsInStage ? 2 * blocks : 0)));
    EXPECT_EQ(testing::countPrefix(loop, "FMUL"), steps * 2 * blocks * c.bn / 4);
    EXPECT_EQ(testing::countPrefix(loop, "FFMA"), steps * acc);
    std::string mix;
    for (const auto& [op, n] : loop) mix += op + " " + std::to_string(n) + ", ";
    // 163 at 128x160 and 145 at 64x128 (203 and 177 with scale_b's pairs loaded from global memory)
      EXPECT_LE(total - steps * acc, steps * (c.bn / 2 + 90)) << mix;
    return;
  }
  // scale_b's blocks copied with the stage too (sharedBlockScales): one LDS a block the tile spans.
  EXPECT_EQ(testing::countPrefix(loop, "LDG"), steps * ((rowsInStage ? 0 : 2 * blocks) + (blocksInStage ? 0 : spans)));
  EXPECT_EQ(testing::countPrefix(loop, "LDS"), steps * ((rowsInStage ? 2 * blocks : 0) + (blocksInStage ? spans : 0)));
  EXPECT_EQ(testing::countPrefix(loop, "FMUL"), steps * 2 * blocks * spans);
  EXPECT_EQ(testing::countPrefix(loop, "FFMA"), steps * acc);
  EXPECT_EQ(testing::countPrefix(loop, "FSEL"), spans == 2 ? steps * 2 * blocks * c.bn / 32 : 0);
  std::string mix;
  for (const auto& [op, n] : loop) mix += op + " " + std::to_string(n) + ", ";
  EXPECT_LE(total - steps * acc, steps * 100) << mix;  // 65 to 96 a step; 688 with 128x160 before
  if (std::getenv("KILN_PRINT_SASS_MIX")) std::printf("%s: %d a step: %s\n", v.name.c_str(), total / steps, mix.c_str());
}

// Every variant eligible for block scales compiles the blockwise programs (both modes) for sm_90a
// and assembles without spills or a stack frame, its K steps' promotion scaled by FFMAs.
TEST(GemmFp8Gates, BlockwiseVariantsAssembleSpillFree) {
  int checked = 0;
  for (Fp8Scaling mode : {Fp8Scaling::Block1x128x128x128, Fp8Scaling::Block1x128x1x128}) {
    auto program = fp8GemmProgram({mode}, "fp8_blockwise");
    Fp8GemmProblem p{4096, 4096, 4096};
    p.scaling = mode;
    for (const auto& v : gemmFp8Variants()) {
      if (!v.eligible(p, Target::sm90a())) continue;
      SCOPED_TRACE(v.name + " " + std::string(fp8ScalingName(mode)));
      ir::DiagnosticEngine diag;
      auto r = kiln::compile(*program, Target::sm90a(), v.config, diag);
      ASSERT_TRUE(r) << diag.str();
      EXPECT_NE(r->ptx.find("fma.rn.f32"), std::string::npos);
      auto cubin = backend::assemble(r->ptx, Target::sm90a().ptxTarget, diag);
      ASSERT_TRUE(cubin) << diag.str();
      const auto& report = cubin->resources.begin()->second;
      EXPECT_EQ(report.stackFrameBytes, 0);
      EXPECT_EQ(report.spillStoreBytes + report.spillLoadBytes, 0);
      ++checked;
      // scale_a's rows copied with the stage (sm90 sharedRowScales) wherever the rings fit the
      // shared memory: all but 128x128 s6 tma_pairs, whose 6 stages and output staging leave no room.
      bool rowsInStage = false, scaleBMapped = false;
      for (const auto& param : r->launch.params) {
        rowsInStage |= param.name == "tmap_scale_a";
        scaleBMapped |= param.name == "tmap_scale_b";
      }
      EXPECT_EQ(rowsInStage, v.name != "fp8_gemm_sm90_128x128x128_s6_tma_pairs");
      // The family's preference knows which (blockScalesFromStage): scale_a and scale_b both staged
      // (scale_b's map: its 128x128 blocks, or 1x128 x 1x128's columns).
      EXPECT_EQ(blockScalesFromStage(v.config, p, Target::sm90a()), rowsInStage && scaleBMapped);
      // 128x128 blocks of scale_b copied with the stage (sharedBlockScales) by every variant: the
      // rings fit the shared memory (128 bytes a stage and block), single blocks an SM.
      if (mode == Fp8Scaling::Block1x128x128x128) EXPECT_TRUE(scaleBMapped);
      expectBlockScaleWork(v, mode, cubin->cubin, rowsInStage, scaleBMapped);
    }
  }
  EXPECT_GE(checked, 7);  // the promoting variants; with per-column B scales, the single-step ones
}

// Block scales at M off 4 (tokens come in any number): scale_a's rows come into the stages through
// a flat map (sm90 staged_scales.cpp), so no pick's launch asks anything of M, and M off 4 picks
// as its neighbour on 4 does, in both block modes (1x128 x 1x128 had no variant for M = 61 while
// scale_a's map stepped rows of M floats).
TEST(GemmFp8Gates, BlockScalesAskNothingOfM) {
  for (Fp8Scaling mode : {Fp8Scaling::Block1x128x128x128, Fp8Scaling::Block1x128x1x128}) {
    auto program = fp8GemmProgram({mode}, "fp8_blockwise");
    auto pick = [&](int64_t m) {
      Fp8GemmProblem p{m, 7168, 2048};
      p.scaling = mode;
      ir::DiagnosticEngine diag;
      auto s = selectGemmFp8(p, Target::sm90a(), diag);
      EXPECT_TRUE(s) << m << ": " << diag.str();
      return s ? s->variant : nullptr;
    };
    for (auto [m, onFour] : {std::pair<int64_t, int64_t>{61, 64}, {1, 4}, {130, 132}, {4093, 4096}}) {
      SCOPED_TRACE(m);
      const Fp8GemmVariant* v = pick(m);
      const Fp8GemmVariant* w = pick(onFour);
      ASSERT_TRUE(v && w);
      EXPECT_EQ(v->name, w->name);
      ir::DiagnosticEngine diag;
      auto r = kiln::compile(*program, Target::sm90a(), v->config, diag);
      ASSERT_TRUE(r) << diag.str();
      for (const auto& [dim, multiple] : r->launch.divisibility) EXPECT_NE(dim, "M") << multiple;
    }
  }
}

TEST(GemmFp8Gates, HeuristicPicksNearTheMeasuredBestOnTheH200) {
  std::set<std::tuple<int64_t, int64_t, int64_t, bool>> judged, unjudged;  // (M, N, K, fast)
  for (const Recorded& rec : kRecorded) {
    const std::string file = std::string(rec.dir) + "/" + rec.file;
    int shapes = 0;
    double logRatio = 0;
    for (const JudgedShape& j : judgeRecordedRun(file, "vs_cublaslt", rec.loadsLate)) {
      const Fp8GemmProblem& p = j.problem;
      const auto key = std::make_tuple(p.m, p.n, p.k, p.fastAccum);
      if (j.picked < 0) {  // the pick was registered after this record
        unjudged.insert(key);
        continue;
      }
      judged.insert(key);
      ++shapes;
      logRatio += std::log(j.picked / j.best);
      EXPECT_GE(j.picked, rec.perShape * j.best)
          << file << " " << j.name << ": picked " << j.pick << " at " << j.picked << "x cuBLASLt, best " << j.best;
    }
    EXPECT_GE(shapes, rec.shapes - 1) << file << ": more than one shape's pick was not measured there";
    EXPECT_GE(std::exp(logRatio / shapes), rec.geomean) << file;
  }
  for (const auto& [m, n, k, fast] : unjudged)
    EXPECT_TRUE(judged.count({m, n, k, fast})) << m << "x" << n << "x" << k << (fast ? " fast" : " promoted")
                                               << ": no record measured the variant picked there";
}

// Rowwise and tensorwise scales, promoted (the default accumulation): the pick against the H100 run
// of every registered variant (bench/results/2026-12-06-h100-fp8/fp8_bench.json, 10 shapes a mode,
// vs cuBLASLt in the same run), which kPromotedSingleStepRate and kPromotedEpilogueSteps were
// fitted on: within 7% of the fastest measured at every shape (8192^3 tensorwise: the lone 128x160
// at 0.933 of its pair along M, which ran 0.6% ahead rowwise) and 0.98 in geometric mean per mode.
// The H200's terms picked at 0.969 tensorwise and 0.973 rowwise in geometric mean (8192^3 and
// 4096x4096x14336 at 0.89-0.91, 4096x7168x2048 tensorwise 0.946).
TEST(GemmFp8Gates, RowwiseAndTensorwisePicksNearTheMeasuredBestOnTheH100) {
  std::map<Fp8Scaling, std::pair<int, double>> modes;  // shapes, sum of log(picked / best)
  for (const JudgedShape& j : judgeRecordedRun("2026-12-06-h100-fp8/fp8_bench.json", "vs_cublaslt")) {
    const Fp8Scaling mode = j.problem.scaling;
    if (mode != Fp8Scaling::Rowwise && mode != Fp8Scaling::Tensorwise) continue;
    ASSERT_GT(j.picked, 0) << j.name << ": " << j.pick << " was not measured";
    EXPECT_GE(j.picked, 0.93 * j.best) << j.name << ": picked " << j.pick << " at " << j.picked
                                       << "x cuBLASLt, best " << j.best;
    modes[mode].first += 1;
    modes[mode].second += std::log(j.picked / j.best);
  }
  ASSERT_EQ(modes.size(), 2u);
  for (const auto& [mode, sum] : modes) {
    EXPECT_EQ(sum.first, 10) << fp8ScalingName(mode);
    EXPECT_GE(std::exp(sum.second / sum.first), 0.98) << fp8ScalingName(mode);
  }
}

// Block scales, both modes: the pick against GPU run 13 (H100) of every registered variant eligible
// in each mode (bench/results/2026-12-07-h100-run13/fp8_block.json, 5 shapes a mode: M = 64 and 128
// at K = 16384, 64x4096x7168, 4096x7168x16384, 8192^3), in TFLOP/s of kernels timed at the same
// shape in the same run, the first with every scale copied into the stage by the variants whose
// rings fit (blockScalesFromStage): within 3% of the fastest measured at every shape and 0.985 of
// it in geometric mean per mode. The terms before stagedRing (ops/gemm_fp8.cpp; fitted when every
// scale_a came from global memory, bench/results/2026-12-06-h100-final/) picked the K slices at
// M = 64 (0.947 and 0.958 of the unsplit 64x128 pairs), 128x128 pairs at 128x7168x16384 (0.933 of
// 64x128) and 64x128 at 64x4096x7168 (0.94 and 0.91 of 64x64).
// Both block modes of a recorded run, in TFLOP/s: each pick at least `perShape` of the fastest
// registered variant measured at its shape, `geomean` of it in geometric mean per mode, over
// `shapes` shapes a mode.
void expectBlockPicksNearTheBest(const std::string& file, double perShape, double geomean, int shapes) {
  std::map<Fp8Scaling, std::pair<int, double>> modes;  // shapes, sum of log(picked / best)
  for (const JudgedShape& j : judgeRecordedRun(file, "tflops")) {
    ASSERT_GT(j.picked, 0) << j.name << ": " << j.pick << " was not measured";
    EXPECT_GE(j.picked, perShape * j.best) << j.name << ": picked " << j.pick << " at " << j.picked
                                           << " TFLOP/s, best " << j.best;
    auto& [n, logRatio] = modes[j.problem.scaling];
    ++n;
    logRatio += std::log(j.picked / j.best);
  }
  ASSERT_EQ(modes.size(), 2u) << file;
  for (const auto& [mode, tally] : modes) {
    EXPECT_EQ(tally.first, shapes) << fp8ScalingName(mode);
    EXPECT_GE(std::exp(tally.second / tally.first), geomean) << fp8ScalingName(mode);
  }
}

TEST(GemmFp8Gates, BlockwisePicksNearTheMeasuredBest) {
  expectBlockPicksNearTheBest("2026-12-07-h100-run13/fp8_block.json", 0.97, 0.985, 5);
}

// The same picks held out: seven shapes a mode not fitted on (128x7168x2048, 4096x14336x4096,
// 4096x24576x1536, 4096x4096x14336, 4096x7168x2048, 64x24576x1536, 64x5120x5120), measured after the
// fit on an H200 (bench/results/2026-12-07-h200-run16/fp8_block_heldout.json). Predicted before
// the run: within 5% of the fastest at every shape, 0.98 in geometric mean. Measured: the fastest at
// 11 of 14, 0.965 at the worst (4096x4096x14336 1x128 x 128x128: 128x160 pairs along M against
// 128x128 pairs stored from registers), 0.991 and 0.995 in geometric mean.
TEST(GemmFp8Gates, BlockwisePicksNearTheMeasuredBestHeldOut) {
  expectBlockPicksNearTheBest("2026-12-07-h200-run16/fp8_block_heldout.json", 0.95, 0.98, 7);
}

}  // namespace
}  // namespace kiln::ops
