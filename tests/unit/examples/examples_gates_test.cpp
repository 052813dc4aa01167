// Assembly gates for the GEMM example programs (DESIGN.md, "Testing"), on the CPU: every one
// compiles with the schedule tests/unit/testing/example_configs.h gives it, assembles with a
// 0-byte stack and no spills, and its K loop runs exactly the MMAs its tile implies. The FP8
// example is checked on every FP8 target: sm_89 and sm_120 have a native FP8 mma.sync
// (QMMA.16832.F32.E4M3.E4M3 in SASS); sm_90a has none, and ptxas widens the e4m3 bytes to f16
// (F2FP.F16.E4M3.UNPACK_B) and issues two HMMA.16816.F32 per m16n8k32 (the opcode names are what
// nvdisasm prints for CUDA 13.0). Needs nvJitLink (always linked) and a SASS disassembler (skips,
// saying why, without one). The resource table is written to the test temp dir.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "backend/assembler.h"
#include "backend/sass_stats.h"
#include "examples/examples.h"
#include "kiln/compile.h"
#include "schedule/config.h"
#include "target/target.h"
#include "tests/unit/testing/example_configs.h"
#include "tests/unit/testing/sass_loop.h"

namespace kiln {
namespace {

struct Assembled {
  backend::ResourceReport report;
  backend::SassStats sass;
  std::map<std::string, int> loop;
  int64_t smem = 0;
};

// Compiles and assembles one example; fails the test (and returns nullopt) when either step fails.
std::optional<Assembled> build(const std::string& example, const Target& target) {
  std::string config = testing::exampleConfig(example);
  EXPECT_NE(config, "") << "no schedule for example '" << example << "': add one to tests/unit/testing/example_configs.h";
  if (config.empty()) return std::nullopt;
  ir::DiagnosticEngine diag;
  auto r = compile(*examples::find(example)->build(), target, Config::parse(config), diag);
  EXPECT_TRUE(r) << example << " on " << target.name << ": " << diag.str();
  if (!r) return std::nullopt;
  auto cubin = backend::assemble(r->ptx, target.ptxTarget, diag);
  EXPECT_TRUE(cubin) << example << " on " << target.name << ": " << diag.str();
  if (!cubin) return std::nullopt;
  auto sass = backend::sassStats(cubin->cubin, diag);
  EXPECT_TRUE(sass) << diag.str();
  if (!sass) return std::nullopt;
  Assembled a{cubin->resources.begin()->second, *sass, testing::loopOpcodes(sass->text), r->launch.dynamicSmemBytes};
  return a;
}

bool haveDisassembler(std::string* why) {
  ir::DiagnosticEngine diag;
  if (!backend::sassStats({}, diag) && diag.str().find("install") != std::string::npos) {
    *why = diag.str();
    return false;
  }
  return true;
}

TEST(ExamplesGates, EveryExampleAssemblesSpillFreeForSm90a) {
  std::string why;
  if (!haveDisassembler(&why)) GTEST_SKIP() << "no SASS disassembler: " << why;
  std::ostringstream table;
  table << "| example | config | regs | smem B | stack | spill st/ld | MMA/iter |\n|---|---|---|---|---|---|---|\n";
  for (const auto& e : examples::all()) {
    if (!e.gemm) continue;  // the memory-bound ones: tests/unit/schedule/rowwise/rowwise_gates_test.cpp
    SCOPED_TRACE(e.name);
    auto a = build(e.name, Target::sm90a());
    if (!a) continue;
    EXPECT_EQ(a->report.stackFrameBytes, 0);
    EXPECT_EQ(a->report.spillStoreBytes, 0);
    EXPECT_EQ(a->report.spillLoadBytes, 0);
    Config c = Config::parse(testing::exampleConfig(e.name));
    // m16n8k16 per warp and iteration; the FP8 example's m16n8k32 is two HMMAs on sm_90a, so the
    // count per K element is the same.
    int hmma = (c.bm / 16) * (c.bn / 8) * (c.bk / 16) / c.warps();
    EXPECT_EQ(testing::countPrefix(a->loop, "HMMA.16816.F32"), hmma);
    table << "| " << e.name << " | " << testing::exampleConfig(e.name) << " | " << a->report.registers << " | " << a->smem << " | "
          << a->report.stackFrameBytes << " | " << a->report.spillStoreBytes << "/" << a->report.spillLoadBytes << " | "
          << testing::countPrefix(a->loop, "HMMA") << " |\n";
  }
  std::string out = ::testing::TempDir() + "examples_gates_sm90a.md";
  std::ofstream(out) << table.str();
  std::printf("%s(examples gates table: %s)\n", table.str().c_str(), out.c_str());
}

TEST(ExamplesGates, Fp8ExampleUsesTheFp8MmaOnEveryFp8Target) {
  std::string why;
  if (!haveDisassembler(&why)) GTEST_SKIP() << "no SASS disassembler: " << why;
  Config c = Config::parse(testing::exampleConfig("fp8_rowwise_gemm"));
  int mmas = (c.bm / 16) * (c.bn / 8) * (c.bk / 32) / c.warps();  // m16n8k32 per warp and iteration
  int ldsm = (c.warpTileM() / 16 + c.warpTileN() / 16) * (c.bk / 32);
  for (const Target& t : {Target::sm89(), Target::sm90a(), Target::sm120()}) {
    SCOPED_TRACE(t.name);
    auto a = build("fp8_rowwise_gemm", t);
    if (!a) continue;
    EXPECT_EQ(a->report.stackFrameBytes, 0);
    EXPECT_EQ(a->report.spillStoreBytes, 0);
    EXPECT_EQ(a->report.spillLoadBytes, 0);
    if (t.sm == 90) {
      EXPECT_EQ(a->sass.count("QMMA"), 0);
      EXPECT_EQ(testing::countPrefix(a->loop, "HMMA.16816.F32"), 2 * mmas);
      EXPECT_GT(testing::countPrefix(a->loop, "F2FP.F16.E4M3.UNPACK_B"), 0);
    } else {
      EXPECT_EQ(testing::countPrefix(a->loop, "QMMA.16832.F32.E4M3.E4M3"), mmas);
      EXPECT_EQ(a->sass.count("HMMA"), 0);
    }
    // Operands: ldmatrix .x4 only (B's .x2 pairs fused), no transposed form for bytes.
    EXPECT_EQ(testing::countPrefix(a->loop, "LDSM.16.M88.4"), ldsm);
    EXPECT_EQ(testing::countPrefix(a->loop, "LDSM"), ldsm);
    EXPECT_EQ(testing::countPrefix(a->loop, "LDGSTS"), int(a->smem / c.stages / 16 / c.threads()));
    std::printf("fp8_rowwise_gemm on %s: %d registers, %lld bytes smem, stack %d, spills %d/%d, loop: %d QMMA, %d "
                "HMMA, %d LDSM\n",
                t.name.c_str(), a->report.registers, static_cast<long long>(a->smem), a->report.stackFrameBytes,
                a->report.spillStoreBytes, a->report.spillLoadBytes, testing::countPrefix(a->loop, "QMMA"),
                testing::countPrefix(a->loop, "HMMA"), testing::countPrefix(a->loop, "LDSM"));
  }
}

TEST(ExamplesGates, GroupedExampleAssemblesForEveryMmaSyncTarget) {
  std::string why;
  if (!haveDisassembler(&why)) GTEST_SKIP() << "no SASS disassembler: " << why;
  Config c = Config::parse(testing::exampleConfig("grouped_gemm"));
  int hmma = (c.bm / 16) * (c.bn / 8) * (c.bk / 16) / c.warps();
  for (const Target& t : {Target::sm80(), Target::sm120()}) {
    SCOPED_TRACE(t.name);
    auto a = build("grouped_gemm", t);
    if (!a) continue;
    EXPECT_EQ(a->report.spillStoreBytes + a->report.spillLoadBytes + a->report.stackFrameBytes, 0);
    EXPECT_EQ(testing::countPrefix(a->loop, "HMMA.16816.F32.BF16"), hmma);
  }
}

}  // namespace
}  // namespace kiln
