// Assembly gates for the layouts and alignments the gemm_bf16 family adapts its sm80 variants to
// (GemmVariant::configFor, docs/layouts.md), on the CPU:
//   * rows aligned to 2 bytes (odd K and N): every variant the family finds eligible for element
//     loads through registers assembles spill-free on sm_80 and sm_90a (the register budget rule
//     in gemm_bf16.cpp is what this proves), its K loop with no LDGSTS, the element loads and the
//     MMAs its tile implies;
//   * a column-major A: every variant eligible for it on sm_90a, spill-free, A's fragments through the transposing
//     ldmatrix (LDSM.16.MT88.4) as B's are, the same HMMAs;
//   * rows aligned to 4 bytes: every bk = 64 variant on sm_90a, spill-free, four LDGSTS where a
//     16-byte row copy had one.
// Needs nvJitLink and a SASS disassembler (skips, saying why, without one).
#include <gtest/gtest.h>

#include <future>

#include "backend/assembler.h"
#include "kiln/program_builder.h"
#include "kiln/sass_stats.h"
#include "ops/gemm_bf16.h"
#include "tests/unit/testing/sass_loop.h"

namespace kiln::ops {
namespace {

using testing::countPrefix;
using testing::loopOpcodes;

std::unique_ptr<ir::Module> program(bool aCol, bool bKMajor) {
  ProgramBuilder pb("layout_gate");
  auto [M, N, K] = pb.dims("M", "N", "K");
  auto A = aCol ? pb.input("A", bf16, {M, K}, {0, 1}) : pb.input("A", bf16, {M, K});
  auto B = bKMajor ? pb.input("B", bf16, {K, N}, {0, 1}) : pb.input("B", bf16, {K, N});
  auto C = pb.output("C", bf16, {M, N});
  pb.tile({M, N}, [&](Coord m, Coord n) {
    Tile acc = pb.zeros(f32, {m, n});
    pb.reduce(K, [&](Coord k) { acc = dot(A(m, k), B(k, n), acc); });
    C(m, n) = cast(bf16, acc);
  });
  return pb.finish();
}

struct Job {
  const GemmVariant* variant;
  Target target;
  bool aCol;
  int align;  // of A's and B's rows, and C's
};

struct Outcome {
  std::string errors;
  backend::ResourceReport report;
  std::map<std::string, int> loop;
  bool ok = false;
};

Outcome runJob(const Job& j) {
  Outcome o;
  GemmProblem p;
  p.m = p.n = p.k = 4096;
  p.aRowMajor = !j.aCol;
  p.alignA = p.alignB = p.alignC = j.align;
  ir::DiagnosticEngine diag;
  auto r = kiln::compile(*program(j.aCol, false), j.target, j.variant->configFor(p), diag);
  auto cubin = r ? backend::assemble(r->ptx, j.target.ptxTarget, diag) : std::nullopt;
  auto sass = cubin ? backend::sassStats(cubin->cubin, diag) : std::nullopt;
  if (!sass) {
    o.errors = diag.str();
    return o;
  }
  o.report = cubin->resources.begin()->second;
  o.loop = loopOpcodes(sass->text);
  o.ok = true;
  return o;
}

TEST(GemmBf16LayoutGates, AdaptedVariantsAssembleSpillFreeWithTheirInstructionMix) {
  {
    ir::DiagnosticEngine diag;
    if (!backend::sassStats({}, diag) && diag.str().find("install") != std::string::npos)
      GTEST_SKIP() << "no SASS disassembler: " << diag.str();
  }
  std::vector<Job> jobs;
  GemmProblem odd;
  odd.m = odd.n = odd.k = 4095;
  odd.alignA = odd.alignB = odd.alignC = 2;
  for (const auto& v : gemmBf16Variants()) {
    if (v.config.strategy != "sm80_multistage") continue;
    for (const Target& t : {Target::sm80(), Target::sm90a()})
      if (v.eligible(odd, t)) jobs.push_back({&v, t, false, 2});
    GemmProblem colMajorA;
    colMajorA.m = colMajorA.n = colMajorA.k = 4096;
    colMajorA.aRowMajor = false;
    if (v.eligible(colMajorA, Target::sm90a())) {
      jobs.push_back({&v, Target::sm90a(), true, 16});
      if (v.config.bk == 64) jobs.push_back({&v, Target::sm90a(), false, 4});
    }
  }
  ASSERT_GE(jobs.size(), 30u);
  std::vector<Outcome> outcomes(jobs.size());
  auto worker = [&](size_t first) {
    for (size_t i = first; i < jobs.size(); i += 2) outcomes[i] = runJob(jobs[i]);
  };
  auto other = std::async(std::launch::async, worker, 1);
  worker(0);
  other.get();
  for (size_t i = 0; i < jobs.size(); ++i) {
    const Job& j = jobs[i];
    const Outcome& o = outcomes[i];
    const Config& c = j.variant->config;
    std::string what = j.variant->name + " on " + j.target.name + (j.aCol ? ", column-major A" : "") + ", rows aligned to " +
                       std::to_string(j.align);
    ASSERT_TRUE(o.ok) << what << ": " << o.errors;
    EXPECT_EQ(o.report.stackFrameBytes, 0) << what;
    EXPECT_EQ(o.report.spillStoreBytes, 0) << what;
    EXPECT_EQ(o.report.spillLoadBytes, 0) << what;
    int hmma = (c.bm / 16) * (c.bn / 8) * (c.bk / 16) / c.warps();
    int ldsm = (c.warpTileM() / 16 + c.warpTileN() / 16) * (c.bk / 16);
    EXPECT_EQ(countPrefix(o.loop, "HMMA.16816.F32.BF16"), hmma) << what;
    EXPECT_EQ(countPrefix(o.loop, "LDSM"), ldsm) << what;
    int chunks = int((int64_t(c.bm) * c.bk + int64_t(c.bk) * c.bn) * 2 / 16 / c.threads());  // 16-byte chunks per thread
    if (j.align == 2) {
      EXPECT_EQ(countPrefix(o.loop, "LDGSTS"), 0) << what;
      EXPECT_EQ(countPrefix(o.loop, "LDG.E.U16"), 8 * chunks) << what;  // eight elements per chunk
    } else if (j.align == 4) {
      EXPECT_EQ(countPrefix(o.loop, "LDGSTS"), 4 * chunks) << what;
    }
    if (j.aCol) EXPECT_EQ(countPrefix(o.loop, "LDSM.16.MT88.4"), ldsm) << what;  // A and B both transposed
  }
}

}  // namespace
}  // namespace kiln::ops
