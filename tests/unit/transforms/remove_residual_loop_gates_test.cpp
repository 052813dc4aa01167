// What remove-residual-loop changes in the machine code, checked on the CPU (DESIGN.md: every claim
// about the generated code is checkable without a GPU). For every sm90_ws_persistent variant of
// gemm_bf16 (row-major B, the benchmark's layout), built with the pass and without it
// (KILN_DISABLE_PASSES=remove-residual-loop):
//   * with the pass the PTX is shorter: the residual loop (the tile walk with its divisions) is gone;
//   * the pass costs nothing: no more registers, no spills, and no more SASS instructions than
//     ptxas's allocation noise (two; padding NOPs aside).
// It prints the table (registers, SASS instructions, PTX lines, identical cubin) that says what the
// GPU benchmark (bench/residual_bench.cpp) can expect: where ptxas deletes the empty residual loop
// itself, the cubins are the same and any time difference is noise. Needs a SASS disassembler
// (skips, saying why, without one).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <future>
#include <optional>
#include <sstream>

#include "backend/assembler.h"
#include "kiln/sass_stats.h"
#include "ops/gemm_bf16.h"

namespace kiln::ops {
namespace {

struct Build {
  std::string ptx, errors;
  std::optional<backend::AssembledKernel> cubin;
  std::optional<backend::SassStats> sass;
};

// kiln::compile with the pass run (on) or skipped (off); the environment is restored.
std::optional<CompileResult> compileWith(const GemmVariant& v, bool passOn, ir::DiagnosticEngine& diag) {
  const char* before = std::getenv("KILN_DISABLE_PASSES");
  std::optional<std::string> saved = before ? std::optional<std::string>(before) : std::nullopt;
  if (passOn) unsetenv("KILN_DISABLE_PASSES");
  else setenv("KILN_DISABLE_PASSES", "remove-residual-loop", 1);
  auto r = v.compile(false, Target::sm90a(), diag);
  if (saved) setenv("KILN_DISABLE_PASSES", saved->c_str(), 1);
  else unsetenv("KILN_DISABLE_PASSES");
  return r;
}

void assembleInto(Build& b) {
  ir::DiagnosticEngine diag;
  b.cubin = backend::assemble(b.ptx, Target::sm90a().ptxTarget, diag);
  if (b.cubin) b.sass = backend::sassStats(b.cubin->cubin, diag);
  if (!b.sass) b.errors = diag.str();
}

int lines(const std::string& s) { return int(std::count(s.begin(), s.end(), '\n')); }

TEST(RemoveResidualLoopGates, NeverCostsRegistersOrInstructions) {
  {
    ir::DiagnosticEngine diag;
    if (!backend::sassStats({}, diag) && diag.str().find("install") != std::string::npos)
      GTEST_SKIP() << "no SASS disassembler: " << diag.str();
  }
  std::vector<const GemmVariant*> variants;
  for (const auto& v : gemmBf16Variants())
    if (v.config.strategy == "sm90_ws_persistent") variants.push_back(&v);
  ASSERT_FALSE(variants.empty());
  // Compile one after another (the switch is the environment), assemble on two threads.
  std::vector<Build> builds(2 * variants.size());
  for (size_t i = 0; i < builds.size(); ++i) {
    ir::DiagnosticEngine diag;
    auto r = compileWith(*variants[i / 2], i % 2 == 1, diag);
    ASSERT_TRUE(r) << variants[i / 2]->name << ": " << diag.str();
    builds[i].ptx = r->ptx;
  }
  auto worker = [&](size_t first) {
    for (size_t i = first; i < builds.size(); i += 2) assembleInto(builds[i]);
  };
  auto other = std::async(std::launch::async, worker, 1);
  worker(0);
  other.get();

  std::ostringstream table;
  table << "| variant | regs off / on | SASS off / on | PTX lines off / on | same cubin |\n|---|---|---|---|---|\n";
  for (size_t v = 0; v < variants.size(); ++v) {
    const Build& off = builds[2 * v];
    const Build& on = builds[2 * v + 1];
    const std::string& name = variants[v]->name;
    ASSERT_TRUE(off.sass) << name << " (off): " << off.errors;
    ASSERT_TRUE(on.sass) << name << " (on): " << on.errors;
    const auto& ro = off.cubin->resources.begin()->second;
    const auto& rn = on.cubin->resources.begin()->second;
    EXPECT_LT(lines(on.ptx), lines(off.ptx)) << name << ": the pass removed nothing from the PTX";
    EXPECT_LE(rn.registers, ro.registers) << name;
    // Instructions, not the NOPs that pad the function to its alignment; within two of the kernel
    // without the pass: ptxas's uniform-register allocation differs a little with the dead loop
    // present (128x64 s8: one UMOV more with the pass, seven NOPs of padding with it).
    auto work = [](const backend::SassStats& s) { return s.total() - s.count("NOP"); };
    EXPECT_LE(work(*on.sass), work(*off.sass) + 2) << name;
    EXPECT_FALSE(rn.spills()) << name;
    table << "| " << name << " | " << ro.registers << " / " << rn.registers << " | " << off.sass->total() << " / "
          << on.sass->total() << " | " << lines(off.ptx) << " / " << lines(on.ptx) << " | "
          << (off.cubin->cubin == on.cubin->cubin ? "yes" : "no") << " |\n";
  }
  std::printf("remove-residual-loop, off vs on (row-major B, sm_90a):\n%s", table.str().c_str());
}

}  // namespace
}  // namespace kiln::ops
