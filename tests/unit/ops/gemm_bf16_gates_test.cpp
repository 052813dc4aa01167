// Assembly gates for the gemm_bf16 family (DESIGN.md, "Testing"): on the CPU, every sm80 variant, for
// sm_80, sm_90a and sm_120 and both B layouts,
//   * compiles, or (only when its shared memory exceeds the target's limit) is refused with the
//     shared-memory diagnostic;
//   * assembles with a 0-byte stack frame and no spill stores or loads;
//   * loads MMA operands only with ldmatrix .x4 (LDSM.16.M88.4 / LDSM.16.MT88.4);
//   * runs, per main-loop iteration, exactly the HMMAs its tile implies:
//       (bm / 16) * (bn / 8) * (bk / 16) / warps  per warp (the SASS is per thread = per warp),
//     and the LDSMs: (warp tile m / 16 + warp tile n / 16) * (bk / 16).
// Needs nvJitLink (always linked) and a SASS disassembler (skips, saying why, without one).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <regex>
#include <sstream>

#include "backend/assembler.h"
#include "tests/unit/testing/sass_loop.h"
#include "backend/sass_stats.h"
#include "ops/gemm_bf16.h"

namespace kiln::ops {
namespace {

using testing::countPrefix;
using testing::loopOpcodes;

struct Job {
  const GemmVariant* variant;
  Target target;
  bool kMajor;
};

struct Outcome {
  bool refused = false;
  std::string errors;
  backend::ResourceReport report;
  std::optional<backend::SassStats> sass;
  std::map<std::string, int> loop;
};

Outcome runJob(const Job& j) {
  Outcome o;
  ir::DiagnosticEngine diag;
  auto r = j.variant->compile(j.kMajor, j.target, diag);
  if (!r) {
    o.refused = true;
    o.errors = diag.str();
    return o;
  }
  auto cubin = backend::assemble(r->ptx, j.target.ptxTarget, diag);
  if (!cubin) {
    o.errors = diag.str();
    return o;
  }
  o.report = cubin->resources.begin()->second;
  o.sass = backend::sassStats(cubin->cubin, diag);
  if (!o.sass) {
    o.errors = diag.str();
    return o;
  }
  o.loop = loopOpcodes(o.sass->text);
  return o;
}

TEST(GemmBf16Gates, EveryVariantAssemblesSpillFreeWithTheIntendedInstructionMix) {
  {
    ir::DiagnosticEngine diag;
    if (!backend::sassStats({}, diag) && diag.str().find("install") != std::string::npos)
      GTEST_SKIP() << "no SASS disassembler: " << diag.str();
  }
  std::vector<Job> jobs;
  for (const auto& v : gemmBf16Variants())
    for (const Target& t : {Target::sm80(), Target::sm90a(), Target::sm120()})
      if (v.config.strategy == "sm80_multistage")  // the sm90 variants: gemm_bf16_sm90_gates_test.cpp
        for (bool kMajor : {false, true}) jobs.push_back({&v, t, kMajor});
  std::vector<Outcome> outcomes(jobs.size());
  // Two workers: the gates are ptxas-bound.
  auto worker = [&](size_t first) {
    for (size_t i = first; i < jobs.size(); i += 2) outcomes[i] = runJob(jobs[i]);
  };
  auto other = std::async(std::launch::async, worker, 1);
  worker(0);
  other.get();

  std::ostringstream table;
  table << "| variant | target | B | regs | smem B | stack | spill st/ld | HMMA/iter | LDSM.x4/iter |\n"
           "|---|---|---|---|---|---|---|---|---|\n";
  for (size_t i = 0; i < jobs.size(); ++i) {
    const Job& j = jobs[i];
    const Outcome& o = outcomes[i];
    const Config& c = j.variant->config;
    std::string what = j.variant->name + " on " + j.target.name + (j.kMajor ? " (K-major B)" : "");
    int64_t smem = c.pipelineSmemBytes(2, 2);
    if (o.refused) {
      EXPECT_GT(smem, j.target.maxSmemPerBlock) << what << " was refused: " << o.errors;
      EXPECT_NE(o.errors.find("bytes of shared memory"), std::string::npos) << what << ": " << o.errors;
      continue;
    }
    EXPECT_LE(smem, j.target.maxSmemPerBlock) << what << " should have been refused";
    ASSERT_TRUE(o.sass) << what << ": " << o.errors;
    EXPECT_EQ(o.report.stackFrameBytes, 0) << what;
    EXPECT_EQ(o.report.spillStoreBytes, 0) << what;
    EXPECT_EQ(o.report.spillLoadBytes, 0) << what;
    // Operand loads: only the .x4 forms, anywhere in the kernel.
    for (const auto& [op, n] : o.sass->opcodes)
      if (op.rfind("LDSM", 0) == 0) EXPECT_TRUE(op == "LDSM.16.M88.4" || op == "LDSM.16.MT88.4") << what << ": " << op;
    int warps = c.warps();
    int hmma = (c.bm / 16) * (c.bn / 8) * (c.bk / 16) / warps;
    int ldsm = (c.warpTileM() / 16 + c.warpTileN() / 16) * (c.bk / 16);
    EXPECT_EQ(countPrefix(o.loop, "HMMA.16816.F32.BF16"), hmma) << what;
    EXPECT_EQ(countPrefix(o.loop, "HMMA"), hmma) << what;
    EXPECT_EQ(countPrefix(o.loop, "LDSM"), ldsm) << what;
    EXPECT_EQ(countPrefix(o.loop, "LDSM.16.MT88.4"), j.kMajor ? 0 : (c.warpTileN() / 16) * (c.bk / 16)) << what;
    EXPECT_EQ(countPrefix(o.loop, "LDGSTS"), int(smem / c.stages / 16 / c.threads())) << what;
    if (!j.kMajor)
      table << "| " << j.variant->name << " | " << j.target.name << " | row | " << o.report.registers << " | " << smem
            << " | " << o.report.stackFrameBytes << " | " << o.report.spillStoreBytes << "/" << o.report.spillLoadBytes
            << " | " << countPrefix(o.loop, "HMMA") << " | " << countPrefix(o.loop, "LDSM") << " |\n";
  }
  // The table is part of the evidence (docs/sm80-strategy.md): written where GoogleTest keeps
  // temporary files (KILN_GATES_TABLE overrides), never into the source tree.
  const char* path = std::getenv("KILN_GATES_TABLE");
  std::string out = path ? path : ::testing::TempDir() + "gemm_bf16_gates.md";
  std::ofstream(out) << table.str();
  std::printf("gemm_bf16 gates table: %s\n", out.c_str());
}

}  // namespace
}  // namespace kiln::ops
