// Assembly gates for the sm90 variants of gemm_bf16 (DESIGN.md, "Testing"): on the CPU, every
// bf16_gemm_sm90_* variant, for sm_90a and both B layouts,
//   * compiles and assembles (through the PTX compiler library: ptx_compiler.h) with a 0-byte stack
//     frame and no spill stores or loads;
//   * runs its MMAs on the Hopper tensor-core path: exactly (bk / 16) * (m64 blocks per consumer
//     warpgroup) HGMMA.64xBNx16.F32.BF16 (one K step, emitted once: the K loop is not unrolled),
//     with .tnspB exactly for row-major B, and no HMMA anywhere;
//   * loads operands with TMA: one UTMALDG for A and 1 (K-major B) or bn / 64 (row-major B) for B;
//     with cluster_m=2 twice that many for B (one copy per cluster rank), every one of them
//     UTMALDG.2D.MULTICAST, and two cluster barriers (UCGABAR_ARV / UCGABAR_WAIT);
//     with epilogue=tma stores the output with bn / 64 UTMASTG and no STG (direct stores otherwise);
//   * when its config splits registers (two consumer warpgroups), honours setmaxnreg: the SASS has
//     USETMAXREG (DEALLOC for the producer, TRY_ALLOC for the consumers) and no 'setmaxnreg
//     ignored' advisory was reported; otherwise the PTX has no setmaxnreg at all;
//   * is eligible only on sm_90a.
// Needs a SASS disassembler (skips, saying why, without one).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <future>
#include <sstream>

#include "backend/assembler.h"
#include "backend/ptx_compiler.h"
#include "examples/examples.h"
#include "kiln/sass_stats.h"
#include "ops/gemm_bf16_sm90.h"

namespace kiln::ops {
namespace {

struct Job {
  const GemmVariant* variant;
  bool kMajor;
  bool f16 = false;  // the FP16 program (examples::gemmF16) through the variant's config
};

struct Outcome {
  std::string errors, ptx;
  backend::ResourceReport report;
  std::vector<ir::Diagnostic> warnings;
  std::optional<backend::SassStats> sass;
};

Outcome runJob(const Job& j) {
  Outcome o;
  ir::DiagnosticEngine diag;
  Target t = Target::sm90a();
  auto r = j.f16 ? compile(*examples::gemmF16(j.kMajor), t, j.variant->config, diag)
                 : j.variant->compile(j.kMajor, t, diag);
  if (!r) {
    o.errors = diag.str();
    return o;
  }
  o.ptx = r->ptx;
  auto cubin = backend::assemble(r->ptx, t.ptxTarget, diag);
  if (!cubin) {
    o.errors = diag.str();
    return o;
  }
  o.report = cubin->resources.begin()->second;
  o.warnings = cubin->warnings;
  o.sass = backend::sassStats(cubin->cubin, diag);
  if (!o.sass) o.errors = diag.str();
  return o;
}

// Why the SASS gates cannot run here (no disassembler), or "" when they can.
std::string noDisassembler() {
  ir::DiagnosticEngine diag;
  return !backend::sassStats({}, diag) && diag.str().find("install") != std::string::npos ? diag.str() : "";
}

// A variant with its config replaced (the gates of configs not registered).
GemmVariant withConfig(const std::string& config) {
  GemmVariant v = *findGemmBf16Variant("bf16_gemm_sm90_128x256x64_s4_tma");
  v.config = Config::parse(config);
  return v;
}

std::vector<const GemmVariant*> sm90Variants() {
  std::vector<const GemmVariant*> v;
  for (const auto& x : gemmBf16Variants())
    if (x.config.strategy == "sm90_ws_persistent") v.push_back(&x);
  return v;
}

TEST(GemmBf16Sm90Gates, TableHasTheHopperVariants) {
  std::set<std::string> names;
  for (const GemmVariant* v : sm90Variants()) names.insert(v->name);
  for (const char* want : {"bf16_gemm_sm90_128x128x64_s6", "bf16_gemm_sm90_128x256x64_s4",
                           "bf16_gemm_sm90_256x128x64_s4", "bf16_gemm_sm90_64x128x64_s8",
                           "bf16_gemm_sm90_128x256x64_s4_tma_c2", "bf16_gemm_sm90_128x128x64_s5_tma_pp_c2",
                           "bf16_gemm_sm90_128x128x64_s6_tma_sk2", "bf16_gemm_sm90_128x192x64_s4_tma",
                           "bf16_gemm_sm90_208x128x64_s4_tma_swap_wn2", "bf16_gemm_sm90_160x256x64_s3_tma_1slot_swap_wn2"})
    EXPECT_TRUE(names.count(want)) << want;
}

TEST(GemmBf16Sm90Gates, EligibleOnlyOnSm90a) {
  GemmProblem p{4096, 4096, 4096};
  for (const GemmVariant* v : sm90Variants()) {
    std::string why;
    EXPECT_TRUE(v->eligible(p, Target::sm90a(), &why)) << v->name << ": " << why;
    for (const Target& t : {Target::sm80(), Target::sm90(), Target::sm100a(), Target::sm120()}) {
      EXPECT_FALSE(v->eligible(p, t, &why)) << v->name << " on " << t.name;
      EXPECT_NE(why.find("wgmma"), std::string::npos) << why;
    }
  }
  std::string why;
  EXPECT_FALSE(sm90Variants().front()->eligible(GemmProblem{64, 60, 64}, Target::sm90a(), &why));
  EXPECT_EQ(why, "N = 60 is not a multiple of 8 (16-byte TMA strides)");
  EXPECT_FALSE(sm90Variants().front()->eligible(GemmProblem{64, 64, 60}, Target::sm90a(), &why));
  EXPECT_EQ(why, "K = 60 is not a multiple of 8 (16-byte TMA strides)");
  GemmProblem colMajorA{64, 64, 64};
  colMajorA.aRowMajor = false;
  EXPECT_FALSE(sm90Variants().front()->eligible(colMajorA, Target::sm90a(), &why));
  EXPECT_EQ(why, "A is column-major; the sm90 variants read A row-major (K contiguous)");
  GemmProblem strided{64, 64, 64};
  strided.strided = true;
  EXPECT_FALSE(sm90Variants().front()->eligible(strided, Target::sm90a(), &why));
  EXPECT_EQ(why, "a tensor is strided; the sm90 variants address dense tensors");
}

TEST(GemmBf16Sm90Gates, SelectionPrefersHopperSchedulesOnSm90a) {
  ir::DiagnosticEngine diag;
  auto big = selectGemmBf16(GemmProblem{8192, 8192, 8192}, Target::sm90a(), diag);
  ASSERT_TRUE(big) << diag.str();
  EXPECT_EQ(big->variant->config.strategy, "sm90_ws_persistent");
  EXPECT_EQ(big->variant->config.bm * big->variant->config.bn, 128 * 256) << big->str();
  auto smallM = selectGemmBf16(GemmProblem{64, 5120, 5120}, Target::sm90a(), diag);
  ASSERT_TRUE(smallM) << diag.str();
  EXPECT_EQ(smallM->variant->config.bm, 64) << smallM->str();
  // The cluster variants stay behind their single-CTA twins until H200 numbers decide.
  for (GemmProblem p : {GemmProblem{8192, 8192, 8192}, GemmProblem{4096, 4096, 4096}, GemmProblem{2048, 8192, 1024},
                        GemmProblem{64, 5120, 5120}}) {
    auto pick = selectGemmBf16(p, Target::sm90a(), diag);
    ASSERT_TRUE(pick) << diag.str();
    EXPECT_EQ(pick->variant->config.clusterM, 1) << pick->str();
  }
  auto sm80 = selectGemmBf16(GemmProblem{8192, 8192, 8192}, Target::sm80(), diag);
  ASSERT_TRUE(sm80) << diag.str();
  EXPECT_EQ(sm80->variant->config.strategy, "sm80_multistage");
}

TEST(GemmBf16Sm90Gates, EveryVariantAssemblesSpillFreeOnHgmmaAndTma) {
  if (std::string why = noDisassembler(); !why.empty()) GTEST_SKIP() << "no SASS disassembler: " << why;
  std::vector<Job> jobs;
  for (const GemmVariant* v : sm90Variants())
    for (bool kMajor : {false, true}) jobs.push_back({v, kMajor});
  // stream_k is not registered (it lost to its twin on the H200), but it is a config users can ask
  // for: its hand-over passes the same gates.
  static const std::vector<GemmVariant> streamK = [] {
    std::vector<GemmVariant> v;
    for (int w : {1, 2}) {
      GemmVariant x = *findGemmBf16Variant("bf16_gemm_sm90_128x256x64_s4_tma");
      x.name += "_stream_k" + std::to_string(w);
      x.config.streamK = w;
      v.push_back(x);
    }
    return v;
  }();
  for (const GemmVariant& v : streamK)
    for (bool kMajor : {false, true}) jobs.push_back({&v, kMajor});
  std::vector<Outcome> outcomes(jobs.size());
  auto worker = [&](size_t first) {
    for (size_t i = first; i < jobs.size(); i += 2) outcomes[i] = runJob(jobs[i]);
  };
  auto other = std::async(std::launch::async, worker, 1);
  worker(0);
  other.get();

  std::ostringstream table;
  table << "| variant | B | threads | regs | smem B | stack | spill st/ld | HGMMA | UTMALDG | UTMASTG | USETMAXREG |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (size_t i = 0; i < jobs.size(); ++i) {
    const Job& j = jobs[i];
    const Outcome& o = outcomes[i];
    const Config& c = j.variant->config;
    std::string what = j.variant->name + (j.kMajor ? " (K-major B)" : " (row-major B)");
    ASSERT_TRUE(o.sass) << what << ": " << o.errors;
    EXPECT_EQ(o.report.stackFrameBytes, 0) << what;
    EXPECT_EQ(o.report.spillStoreBytes, 0) << what;
    EXPECT_EQ(o.report.spillLoadBytes, 0) << what;
    // m64 blocks per consumer warpgroup: its share of the tile (or with ping-pong the whole tile),
    // each as wide as the tile; swap_ab: its 64-column blocks (the tile's, or with warps_n its share
    // of them), each as wide as its rows.
    // The MN-major operand of a row-major B is wgmma's B (tnspB), or swapped its A (tnspA).
    int rows = c.consumers == Consumers::Pingpong ? c.bm : c.bm / c.warpsM;
    int blocks = c.swapAB ? c.bn / c.warpsN / 64 : rows / 64, width = c.swapAB ? rows : c.bn;
    std::string hgmma = "HGMMA.64x" + std::to_string(width) + "x16.F32.BF16";
    EXPECT_EQ(o.sass->count(hgmma), (c.bk / 16) * blocks) << what;
    EXPECT_EQ(o.sass->count("HGMMA"), (c.bk / 16) * blocks) << what;
    EXPECT_EQ(o.sass->count("HMMA"), 0) << what;
    // Descriptors on the uniform datapath (docs/sm90-strategy.md, "Uniform where ptxas can see it").
    EXPECT_EQ(o.sass->wgmmaBatchR2ur, 0) << what;
    auto occurrences = [&](const char* s) {
      int n = 0;
      for (size_t pos = 0; (pos = o.sass->text.find(s, pos)) != std::string::npos; ++pos) ++n;
      return n;
    };
    EXPECT_EQ(occurrences(c.swapAB ? "tnspA" : "tnspB"), j.kMajor ? 0 : (c.bk / 16) * blocks) << what;
    EXPECT_EQ(occurrences(c.swapAB ? "tnspB" : "tnspA"), 0) << what;
    // With cluster_m=2 each block's producer holds two copies of its half of the B loads (one per
    // cluster rank), all multicast; with cluster_n=cn, cn copies of its piece of the A load, all
    // multicast; with both, four of each; and a clustered kernel opens and closes with a cluster barrier.
    // l2_hint=reuse: an operand whose copies cover whole 128-byte L2 fills (here both) may stream (sm90/producer.cpp); each of its copies then exists twice,
    // evict_first and plain, picked per launch.
    int bBoxes = j.kMajor ? 1 : c.bn / 64;
    bool cluster = c.clusterM * c.clusterN > 1;
    Sm90StreamRules rules = sm90StreamRules(c, j.kMajor, 2, 2);
    bool streamsA = rules.a.possible, streamsB = rules.b.possible;
    // In a 2 x 2 cluster each of the four ranks' branches copies an A piece and a half of every B box.
    int cs = c.clusterM * c.clusterN;
    bool square = c.clusterM > 1 && c.clusterN > 1;
    int aCopies = (square ? cs : c.clusterN) * (streamsA ? 2 : 1);
    int bCopies = (square ? cs : c.clusterM) * bBoxes * (streamsB ? 2 : 1);
    EXPECT_EQ(o.sass->count("UTMALDG"), aCopies + bCopies) << what;
    EXPECT_EQ(o.sass->count("UTMALDG.2D.MULTICAST"), (c.clusterM > 1 ? bCopies : 0) + (c.clusterN > 1 ? aCopies : 0))
        << what;
    EXPECT_EQ(o.ptx.find("createpolicy.fractional.L2::evict_first") != std::string::npos, streamsA || streamsB) << what;
    EXPECT_EQ(o.sass->count("UCGABAR_ARV"), cluster ? 2 : 0) << what;
    EXPECT_EQ(o.sass->count("UCGABAR_WAIT"), cluster ? 2 : 0) << what;
    bool tmaStore = c.epilogue == EpilogueStore::Tma;
    // A warpgroup's boxes, each in store_pieces row pieces.
    int pieces = std::max(1, c.storePieces);
    EXPECT_EQ(o.sass->count("UTMASTG"), tmaStore ? c.bn / c.warpsN / 64 * pieces : 0) << what;
    EXPECT_EQ(o.sass->count("UTMACCTL.PF"), tmaStore ? 3 : 2) << what << ": one descriptor prefetch per tensor map";
    // The staged epilogue writes shared memory with four st.shared.b32 per 16 x 16 block and
    // thread, or (stage_store=stmatrix) one stmatrix .x4 per block and warp; per m64 block of a
    // consumer warpgroup there are width / 16 such blocks per warp (swap_ab: stored transposed,
    // and a last 8 columns of the block, or of each of its row pieces, by .x2).
    bool stsm = c.stageStore == StageStore::Stmatrix;
    EXPECT_EQ(o.sass->count("STSM.16.M88.4"), tmaStore && stsm && !c.swapAB ? (width / 16) * blocks : 0) << what;
    int piece = width / pieces;
    EXPECT_EQ(o.sass->count("STSM.16.MT88.4"), c.swapAB ? (piece / 16) * pieces * blocks : 0) << what;
    EXPECT_EQ(o.sass->count("STSM.16.MT88.2"), c.swapAB ? (piece % 16 / 8) * pieces * blocks : 0) << what;
    EXPECT_EQ(o.sass->count("STS"), tmaStore && !stsm ? 4 * (c.bn / 16) * blocks : 0) << what;
    // split_k, stream_k: each consumer thread hands its accumulators over in 16-byte stores (the
    // units that do not finish their tile) and adds the others' in 16-byte loads (the one that
    // does: S - 1 slices unrolled, or stream-K's loop over its peers' slots), with one GPU-scope
    // release (MEMBAR.ALL.GPU + REDG) and an acquiring poll.
    int quads = blocks * width / 2 / 4;
    bool handOver = c.splitK > 1 || c.streamK;
    EXPECT_EQ(o.sass->count("STG.E.128"), handOver ? quads : 0) << what;
    EXPECT_EQ(o.sass->count("LDG.E.128"), c.streamK ? quads : quads * (c.splitK - 1)) << what;
    EXPECT_EQ(o.sass->count("REDG.E.ADD.S32.STRONG.GPU"), handOver ? 1 : 0) << what;
    EXPECT_EQ(o.sass->count("LDG.E.STRONG.GPU") > 0, handOver) << what;
    // (Besides those and the flag's reset, STG is the direct epilogue's.)
    EXPECT_EQ(o.sass->count("STG") > (quads + 1) * handOver, !tmaStore) << what
                                                                    << ": direct stores exactly without the TMA store";
    bool splits = sm90Shape(c, 2).regsProducer != 0;
    if (splits) {
      EXPECT_TRUE(backend::havePtxCompiler()) << "sm_90a needs the PTX compiler library to honour setmaxnreg";
      EXPECT_EQ(o.sass->count("USETMAXREG.DEALLOC"), 1) << what;
      EXPECT_EQ(o.sass->count("USETMAXREG.TRY_ALLOC"), 1) << what;
      for (const auto& w : o.warnings)
        EXPECT_EQ(w.message.find("'setmaxnreg' ignored"), std::string::npos) << what << ": " << w.message;
    } else {
      EXPECT_EQ(o.ptx.find("setmaxnreg"), std::string::npos) << what;
      EXPECT_EQ(o.sass->count("USETMAXREG"), 0) << what;
    }
    table << "| " << j.variant->name << " | " << (j.kMajor ? "K-major" : "row") << " | " << sm90Shape(c, 2).threads
          << " | " << o.report.registers << " | " << sm90Shape(c, 2).smemBytes << " | " << o.report.stackFrameBytes
          << " | " << o.report.spillStoreBytes << "/" << o.report.spillLoadBytes << " | " << o.sass->count("HGMMA")
          << " | " << o.sass->count("UTMALDG") << " (" << o.sass->count("UTMALDG.2D.MULTICAST") << " multicast) | "
          << o.sass->count("UTMASTG") << " | "
          << o.sass->count("USETMAXREG") << " |\n";
  }
  const char* path = std::getenv("KILN_SM90_GATES_TABLE");
  std::string out = path ? path : ::testing::TempDir() + "gemm_bf16_sm90_gates.md";
  std::ofstream(out) << table.str();
  std::printf("gemm_bf16 sm90 gates table: %s\n%s", out.c_str(), table.str().c_str());
}

// An unregistered config for both B layouts: assembled without stack or spills, then `check`ed.
using ConfigCheck = std::function<void(const Config& c, bool kMajor, const backend::SassStats& sass)>;
void gateBothLayouts(const std::string& config, const ConfigCheck& check) {
  GemmVariant v = withConfig(config);
  for (bool kMajor : {false, true}) {
    SCOPED_TRACE(config + (kMajor ? " (K-major B)" : " (row-major B)"));
    Outcome o = runJob({&v, kMajor});
    ASSERT_TRUE(o.sass) << o.errors;
    EXPECT_EQ(o.report.stackFrameBytes, 0);
    EXPECT_EQ(o.report.spillStoreBytes + o.report.spillLoadBytes, 0);
    check(v.config, kMajor, *o.sass);
  }
}

// Tiles whose bn is not a multiple of 64: wgmma N = bn, every row-major B box copied whole
// (ceil(bn / 64) UTMALDG), the whole 64-column output boxes stored by TMA and the rest directly
// (STG), without spills.
TEST(GemmBf16Sm90Gates, NarrowTilesRunOnHgmmaOfTheirWidth) {
  if (std::string why = noDisassembler(); !why.empty()) GTEST_SKIP() << "no SASS disassembler: " << why;
  const std::string base = "strategy=sm90_ws_persistent bk=64 warps_n=1 raster=grouped group_m=8 ";
  for (const char* extra : {"bm=128 bn=160 stages=4 warps_m=2 epilogue=tma",
                            "bm=192 bn=144 stages=4 warps_m=3 epilogue=tma store_slots=1",
                            "bm=128 bn=208 stages=4 warps_m=2 epilogue=tma", "bm=128 bn=96 stages=6 warps_m=2"}) {
    gateBothLayouts(base + extra, [](const Config& c, bool kMajor, const backend::SassStats& sass) {
      int blocks = c.bm / c.warpsM / 64;
      EXPECT_EQ(sass.count("HGMMA.64x" + std::to_string(c.bn) + "x16.F32.BF16"), (c.bk / 16) * blocks);
      EXPECT_EQ(sass.count("HGMMA"), (c.bk / 16) * blocks);
      Sm90StreamRules rules = sm90StreamRules(c, kMajor, 2, 2);
      int bBoxes = kMajor ? 1 : (c.bn + 63) / 64;
      EXPECT_EQ(sass.count("UTMALDG"), (rules.a.possible ? 2 : 1) + bBoxes * (rules.b.possible ? 2 : 1));
      bool tma = c.epilogue == EpilogueStore::Tma;
      EXPECT_EQ(sass.count("UTMASTG"), tma ? c.bn / 64 : 0);
      EXPECT_EQ(sass.count("STG") > 0, !tma || c.bn % 64 != 0);
    });
  }
}

// swap_ab: per K step bn / 64 HGMMA of the warpgroup's rows as N (104 of a 208-row tile), B's
// stage read MN-major as wgmma's A; the tile staged by stmatrix .trans (STSM.16.MT88: .4 per 16 x
// 16 block, .2 for a last 8 rows) and stored by TMA only, without spills.
TEST(GemmBf16Sm90Gates, SwappedOperandsRunOnHgmmaOfTheirHeight) {
  if (std::string why = noDisassembler(); !why.empty()) GTEST_SKIP() << "no SASS disassembler: " << why;
  const std::string base = "strategy=sm90_ws_persistent bk=64 warps_n=1 raster=grouped group_m=8 l2_hint=reuse "
                           "swap_ab=true epilogue=tma stage_store=stmatrix ";
  for (const char* extra : {"bm=208 bn=128 stages=4 warps_m=2", "bm=192 bn=192 stages=4 warps_m=2 store_slots=1"}) {
    gateBothLayouts(base + extra, [](const Config& c, bool, const backend::SassStats& sass) {
      int rows = c.bm / c.warpsM, blocks = c.bn / 64;
      EXPECT_EQ(sass.count("HGMMA.64x" + std::to_string(rows) + "x16.F32.BF16"), (c.bk / 16) * blocks);
      EXPECT_EQ(sass.count("HGMMA"), (c.bk / 16) * blocks);
      EXPECT_EQ(sass.count("HMMA"), 0);
      EXPECT_EQ(sass.count("STSM.16.MT88.4"), blocks * (rows / 16));
      EXPECT_EQ(sass.count("STSM.16.MT88.2"), blocks * (rows % 16 / 8));
      EXPECT_EQ(sass.count("STSM.16.M88"), 0);
      EXPECT_EQ(sass.count("UTMASTG"), blocks);
      EXPECT_EQ(sass.count("STG"), 0);
    });
  }
}

// 2 x 2 clusters: each rank's branch copies one A piece (to its row of the cluster) and one half
// of every B box (to its column), so 4 x (1 + B boxes) UTMALDG, all multicast; HGMMA as alone.
TEST(GemmBf16Sm90Gates, SquareClustersMulticastBothOperands) {
  if (std::string why = noDisassembler(); !why.empty()) GTEST_SKIP() << "no SASS disassembler: " << why;
  const std::string base =
      "strategy=sm90_ws_persistent bk=64 warps_n=1 raster=grouped group_m=8 cluster_m=2 cluster_n=2 ";
  for (const char* extra : {"bm=128 bn=256 stages=4 warps_m=2 epilogue=tma",
                            "bm=192 bn=192 stages=4 warps_m=3 epilogue=tma store_slots=1"}) {
    gateBothLayouts(base + extra, [](const Config& c, bool kMajor, const backend::SassStats& sass) {
      int bBoxes = kMajor ? 1 : c.bn / 64;
      EXPECT_EQ(sass.count("UTMALDG"), 4 * (1 + bBoxes));
      EXPECT_EQ(sass.count("UTMALDG.2D.MULTICAST"), 4 * (1 + bBoxes));
      EXPECT_EQ(sass.count("HGMMA"), (c.bk / 16) * (c.bm / c.warpsM / 64));
      EXPECT_EQ(sass.count("UCGABAR_ARV"), 2);
    });
  }
}

// The FP16 program (examples::gemmF16) through the schedules of a few registered variants: the
// same kernels on FP16 wgmma (HGMMA.64xBNx16.F32, no .BF16), with the FP16 output packed by
// F2FP.F16.F32.PACK_AB, and the same resources (the operand format changes no register).
TEST(GemmBf16Sm90Gates, F16ProgramsRunOnF16Hgmma) {
  if (std::string why = noDisassembler(); !why.empty()) GTEST_SKIP() << "no SASS disassembler: " << why;
  for (const char* name : {"bf16_gemm_sm90_128x256x64_s4_tma_c2", "bf16_gemm_sm90_64x128x64_s8",
                           "bf16_gemm_sm90_128x128x64_s5_tma_pp", "bf16_gemm_sm90_192x192x64_s4_tma_c2_1slot"}) {
    const GemmVariant* v = findGemmBf16Variant(name);
    ASSERT_NE(v, nullptr) << name;
    const Config& c = v->config;
    for (bool kMajor : {false, true}) {
      std::string what = std::string(name) + (kMajor ? " f16 (K-major B)" : " f16 (row-major B)");
      Outcome o = runJob({v, kMajor, true}), bf16 = runJob({v, kMajor});
      ASSERT_TRUE(o.sass) << what << ": " << o.errors;
      ASSERT_TRUE(bf16.sass) << name << ": " << bf16.errors;
      const auto& sass = o.sass;
      EXPECT_NE(o.ptx.find("wgmma.mma_async.sync.aligned.m64n" + std::to_string(c.bn) + "k16.f32.f16.f16"),
                std::string::npos)
          << what;
      EXPECT_EQ(o.report.stackFrameBytes, 0) << what;
      EXPECT_EQ(o.report.spillStoreBytes + o.report.spillLoadBytes, 0) << what;
      int blocks = (c.consumers == Consumers::Pingpong ? c.bm : c.bm / c.warpsM) / 64;
      EXPECT_EQ(sass->count("HGMMA.64x" + std::to_string(c.bn) + "x16.F32"), (c.bk / 16) * blocks) << what;
      EXPECT_EQ(sass->count("HGMMA.64x" + std::to_string(c.bn) + "x16.F32.BF16"), 0) << what;
      EXPECT_EQ(sass->count("HMMA"), 0) << what;
      EXPECT_GT(sass->count("F2FP.F16.F32.PACK_AB"), 0) << what;
      EXPECT_EQ(sass->count("F2FP.BF16.F32.PACK_AB"), 0) << what;
      EXPECT_EQ(o.report.registers, bf16.report.registers) << what;
    }
  }
}

}  // namespace
}  // namespace kiln::ops
