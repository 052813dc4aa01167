// Assembly gates for the rowwise strategy (DESIGN.md, "Testing"), on the CPU: every memory-bound
// example, with the rowwise family's pick at the LLM shapes the benchmark times, assembles for
// sm_80 and sm_90a with a 0-byte stack and no spills, and moves its rows with 128-bit global
// accesses only: every narrower LDG / STG is one of the per-row values (a label, a loss, a scale).
// Needs nvJitLink (always linked) and a SASS disassembler (skips, saying why, without one). The
// table of resources and instruction counts is printed and written to the test temp dir.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "backend/assembler.h"
#include "backend/sass_stats.h"
#include "examples/examples.h"
#include "kiln/compile.h"
#include "ops/default_schedule.h"
#include "target/target.h"

namespace kiln {
namespace {

struct Shape {
  const char* example;
  int64_t rows, cols;
};

// The benchmark's default cases (bench/rowwise_bench.cpp, kDefaultCases).
const Shape kShapes[] = {
    {"softmax", 4096, 4096},        {"softmax", 32768, 8192},       {"softmax", 8192, 128256},
    {"log_softmax", 4096, 4096},    {"log_softmax", 32768, 8192},   {"rms_norm", 4096, 4096},
    {"rms_norm", 32768, 8192},      {"layer_norm", 4096, 4096},     {"layer_norm", 32768, 8192},
    {"add_rms_norm", 4096, 4096},   {"add_rms_norm", 32768, 8192},  {"silu_and_mul", 16384, 14336},
    {"cross_entropy", 8192, 128256}, {"cross_entropy", 4096, 32000}, {"fp8_quant", 4096, 4096},
    {"fp8_quant", 32768, 8192},
};

bool haveDisassembler(std::string* why) {
  ir::DiagnosticEngine diag;
  if (!backend::sassStats({}, diag) && diag.str().find("install") != std::string::npos) {
    *why = diag.str();
    return false;
  }
  return true;
}

// The program's per-row accesses: tile.load / tile.store of a rank-1 tensor over the rows.
int perRowAccesses(const ir::Operation& program) {
  std::string rows = program.body().back()->stringsAttr("dims").front();
  int n = 0;
  program.walk([&](const ir::Operation& op) {
    if ((op.is("tile.load") || op.is("tile.store")) && op.operand(0)->type().rank() == 1 &&
        op.operand(0)->type().shape()[0] == ir::Extent::of(rows))
      ++n;
  });
  return n;
}

TEST(RowwiseGates, PicksAssembleSpillFreeWith128BitRowAccesses) {
  std::string why;
  if (!haveDisassembler(&why)) GTEST_SKIP() << "no SASS disassembler: " << why;
  std::ostringstream table;
  table << "| example | shape | target | pick | regs | smem B | LDG.128 | STG.128 | other LDG/STG |\n"
           "|---|---|---|---|---|---|---|---|---|\n";
  for (const Shape& s : kShapes)
    for (const Target& t : {Target::sm80(), Target::sm90a()}) {
      if (std::string(s.example) == "fp8_quant" && !t.cvtFp8) continue;
      SCOPED_TRACE(std::string(s.example) + " " + t.name);
      auto module = examples::find(s.example)->build();
      const ir::Operation& program = *module->body().front();
      auto names = program.stringsAttr("dims");
      ops::DefaultSchedule d = ops::defaultSchedule(program, t, {{names[0], s.rows}, {names[1], s.cols}});
      ASSERT_TRUE(d.fromFamily) << d.why;
      ir::DiagnosticEngine diag;
      auto r = compile(*module, t, d.config, diag);
      ASSERT_TRUE(r) << diag.str();
      auto cubin = backend::assemble(r->ptx, t.ptxTarget, diag);
      ASSERT_TRUE(cubin) << diag.str();
      const auto& report = cubin->resources.begin()->second;
      SCOPED_TRACE(d.why);
      EXPECT_EQ(report.stackFrameBytes, 0);
      EXPECT_EQ(report.spillStoreBytes, 0);
      EXPECT_EQ(report.spillLoadBytes, 0);
      auto sass = backend::sassStats(cubin->cubin, diag);
      ASSERT_TRUE(sass) << diag.str();
      int wide = 0, ldg128 = 0, stg128 = 0, narrow = 0;
      for (const auto& [opcode, n] : sass->opcodes) {
        bool ldg = opcode.rfind("LDG", 0) == 0, stg = opcode.rfind("STG", 0) == 0;
        if (!ldg && !stg) continue;
        bool is128 = opcode.find(".128") != std::string::npos;
        (is128 ? wide : narrow) += n;
        if (is128) (ldg ? ldg128 : stg128) += n;
      }
      EXPECT_GT(ldg128, 0);
      EXPECT_GT(wide, 0);
      // Each per-row access appears at most once per path of the kernel (on chip, streaming).
      EXPECT_LE(narrow, 2 * perRowAccesses(program)) << sass->text;
      table << "| " << s.example << " | " << s.rows << "x" << s.cols << " | " << t.name << " | "
            << d.why.substr(d.why.find(": ") + 2, d.why.find(" (") - d.why.find(": ") - 2) << " | " << report.registers
            << " | " << r->launch.dynamicSmemBytes << " | " << ldg128 << " | " << stg128 << " | " << narrow << " |\n";
    }
  std::string out = ::testing::TempDir() + "rowwise_gates.md";
  std::ofstream(out) << table.str();
  std::printf("%s(rowwise gates table: %s)\n", table.str().c_str(), out.c_str());
}

}  // namespace
}  // namespace kiln
