// Assembly gates for gemm_bf16's gemv variants (docs/gemv-strategy.md), on the CPU: every registered
// gemv variant, adapted by configFor to a 4096 x 4096 problem of its bm rows, in every layout of A
// and B, on sm_80 and sm_90a, assembles without spills, its K loop loads B with 16-byte loads
// (LDG.E.128: `vectors` per thread and step on the N path, `vectors` x the warp's N rows on the K
// path, plus a row-major A's; a column-major A's along M, 4 to 16 bytes by bm), and on both
// targets every one of a step's loads is issued before the
// step's first FMA (the family's 4096 x 4096 configs split K, its hand-over included).
// Needs nvJitLink and a SASS disassembler (skips, saying why, without one).
#include <gtest/gtest.h>

#include <algorithm>

#include "backend/assembler.h"
#include "kiln/program_builder.h"
#include "kiln/sass_stats.h"
#include "ops/gemm_bf16.h"
#include "tests/unit/testing/sass_loop.h"

namespace kiln::ops {
namespace {

std::unique_ptr<ir::Module> program(bool aCol, bool bKMajor) {
  ProgramBuilder pb("gemv_gate");
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

TEST(GemmBf16GemvGates, VariantsAssembleSpillFreeWithBatchedWideLoads) {
  {
    ir::DiagnosticEngine diag;
    if (!backend::sassStats({}, diag) && diag.str().find("install") != std::string::npos)
      GTEST_SKIP() << "no SASS disassembler: " << diag.str();
  }
  int checked = 0;
  for (const auto& v : gemmBf16Variants()) {
    if (v.config.strategy != "gemv") continue;
    for (const Target& t : {Target::sm80(), Target::sm90a()})
      for (bool aCol : {false, true})
        for (bool bK : {false, true}) {
          GemmProblem p;
          p.m = v.config.bm;
          p.n = p.k = 4096;
          p.aRowMajor = !aCol;
          p.bKMajor = bK;
          p.alignA = aCol ? 2 * int(std::min<int64_t>(8, p.m)) : 16;  // a column-major A's rows are M long
          const Config c = v.configFor(p, t.referenceSms);
          SCOPED_TRACE(t.name + " " + v.name + (aCol ? " T" : " N") + (bK ? "T " : "N ") + c.str());
          ir::DiagnosticEngine diag;
          auto r = kiln::compile(*program(aCol, bK), t, c, diag);
          auto cubin = r ? backend::assemble(r->ptx, t.ptxTarget, diag) : std::nullopt;
          auto sass = cubin ? backend::sassStats(cubin->cubin, diag) : std::nullopt;
          ASSERT_TRUE(sass) << diag.str();
          const auto& rep = cubin->resources.begin()->second;
          EXPECT_FALSE(rep.spills()) << rep.str();
          EXPECT_EQ(rep.stackFrameBytes, 0) << rep.str();
          std::vector<std::string> loop = testing::loopSequence(sass->text);
          // B's loads, and on the K path a row-major A's (one 16-byte vector per row of M and step).
          const int rows = bK ? c.bn / (c.blockThreads / 32) : 1;
          const int aVectors = bK && !aCol ? c.bm : 0;
          // A column-major A's loads run along M, VM = min(bm, 8) rows each (its rows are bm
          // elements long here): bm / VM a step on the N path, 8 x bm / VM on the K path (one per
          // k of the lane's 16-byte vector of B), none by elements past bm = 1.
          const int vm = aCol ? std::min(c.bm, 8) : 1;
          const int aColLoads = aCol ? c.vectors * (bK ? 8 : 1) * c.bm / vm : 0;
          const auto count = [&](const char* op) { return int(std::count(loop.begin(), loop.end(), std::string(op))); };
          EXPECT_EQ(count("LDG.E.128"), c.vectors * (rows + aVectors) + (vm == 8 ? aColLoads : 0));
          EXPECT_EQ(count("LDG.E.64"), vm == 4 ? aColLoads : 0);
          EXPECT_EQ(count("LDG.E"), vm == 2 ? aColLoads : 0);
          // Element loads: a row-major A's on the N path (one a row and step), a column-major A's at bm = 1.
          EXPECT_EQ(count("LDG.E.U16"), aCol ? (vm == 1 ? aColLoads : 0) : bK ? 0 : c.vectors * c.bm);
          ++checked;
          // ptxas keeps the lowering's order, every load of the step before its first FFMA, on both
          // targets: on sm_90a only under the kernel's register limit (.maxnreg; without it ptxas
          // issued each load just before its FMAs, two in flight). Checked where the family prefers
          // gemv (bm <= 8); at bm = 16 ptxas interleaves.
          if (c.bm > 8) continue;
          auto lastLoad = std::find(loop.rbegin(), loop.rend(), std::string("LDG.E.128"));
          auto firstFma = std::find(loop.begin(), loop.end(), std::string("FFMA"));
          ASSERT_NE(firstFma, loop.end());
          EXPECT_LT(loop.rend() - lastLoad - 1, firstFma - loop.begin()) << "a load issued after the step's first FFMA";
        }
  }
  EXPECT_EQ(checked, 5 * 2 * 4);
}

// A column-major A over a K-major B (TT) at M = 8 (4096 x 4096, the family's config): the bm
// elements of one k are contiguous, so a lane loads A(0 .. 7, k) as one 16-byte vector, V of them a
// step, as many 16-byte loads as a row-major A's (NT: bm vectors of V), and the K loop is about as
// long as NT's. Before, TT loaded A by elements, bm x V 2-byte loads a step, each warp-wide load
// touching 32 cache lines (lanes 8 k, 128 bytes, apart): 64 LDG.E.U16 and 1360 SASS instructions
// against NT's 8 LDG.E.128 and 1152, and 163.5 us against NT's 32.1 on the H100
// (docs/gemv-strategy.md, "A column-major A").
TEST(GemmBf16GemvGates, ColumnMajorALoadsAlongMAsWideAsARowMajorOne) {
  {
    ir::DiagnosticEngine diag;
    if (!backend::sassStats({}, diag) && diag.str().find("install") != std::string::npos)
      GTEST_SKIP() << "no SASS disassembler: " << diag.str();
  }
  const GemmVariant* m8 = nullptr;
  for (const auto& v : gemmBf16Variants())
    if (v.name == "bf16_gemv_m8") m8 = &v;
  ASSERT_NE(m8, nullptr);
  for (const Target& t : {Target::sm80(), Target::sm90a()}) {
    std::vector<std::string> loops[2];
    for (bool aCol : {false, true}) {
      GemmProblem p;
      p.m = 8;
      p.n = p.k = 4096;
      p.aRowMajor = !aCol;
      p.bKMajor = true;
      const Config c = m8->configFor(p, t.referenceSms);
      SCOPED_TRACE(t.name + (aCol ? " TT " : " NT ") + c.str());
      ir::DiagnosticEngine diag;
      auto r = kiln::compile(*program(aCol, true), t, c, diag);
      auto cubin = r ? backend::assemble(r->ptx, t.ptxTarget, diag) : std::nullopt;
      auto sass = cubin ? backend::sassStats(cubin->cubin, diag) : std::nullopt;
      ASSERT_TRUE(sass) << diag.str();
      EXPECT_FALSE(cubin->resources.begin()->second.spills());
      loops[aCol] = testing::loopSequence(sass->text);
    }
    auto count = [](const std::vector<std::string>& l, const char* op) { return std::count(l.begin(), l.end(), std::string(op)); };
    SCOPED_TRACE(t.name);
    EXPECT_EQ(count(loops[1], "LDG.E.128"), count(loops[0], "LDG.E.128"));
    EXPECT_EQ(count(loops[1], "LDG.E.U16"), 0);
    EXPECT_EQ(count(loops[1], "FFMA"), count(loops[0], "FFMA"));
    // The same loads and FMAs; TT's 8 addresses a step (k + v, A's leading dimension apart) against
    // NT's 8 (a row of M each) differ by a few instructions (436 against 430 on both targets).
    EXPECT_LE(loops[1].size() * 20, loops[0].size() * 21) << "TT's K loop is more than 5% longer than NT's";
  }
}

}  // namespace
}  // namespace kiln::ops
