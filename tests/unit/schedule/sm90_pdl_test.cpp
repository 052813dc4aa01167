// sm90 pdl (programmatic dependent launch): the kernel waits (griddepcontrol.wait) before its first
// global access and lets its dependents launch; its launch contract says to launch it with
// programmatic stream serialization; without pdl none of it. The products in the simulator (where
// one grid has nothing to wait for) with split-K, stream-K and the ragged walk, whose scheduler
// reads global memory. The verifier refuses the ops outside such a kernel.
#include <gtest/gtest.h>

#include <string>

#include "examples/examples.h"
#include "kiln/compile.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/verifier.h"
#include "kiln/target.h"
#include "schedule/config.h"
#include "tests/unit/schedule/sm90_sim_check.h"

namespace kiln {
namespace {
using namespace sm90sim;

CompileResult compileGemm(const std::string& config) {
  auto program = examples::gemmBf16();
  ir::DiagnosticEngine diag;
  auto r = compile(*program, Target::sm90a(), Config::parse(config), diag);
  EXPECT_TRUE(r) << diag.str();
  return r ? *r : CompileResult{};
}

// The kern IR ops that touch global memory: the operands' and the output's TMA copies, loads,
// stores, split-K's and stream-K's flags.
bool touchesGlobal(const ir::Operation& op) {
  for (const char* n : {"kern.tma_load", "kern.tma_store", "kern.ld_global", "kern.st_global", "kern.red_release",
                        "kern.spin_wait", "kern.prefetch_global"})
    if (op.is(n)) return true;
  return false;
}

TEST(Sm90Pdl, WaitsBeforeTheFirstGlobalAccess) {
  for (const char* extra : {"", " split_k=2", " stream_k=1", " epilogue=tma", " cluster_m=2"}) {
    CompileResult r = compileGemm(std::string(k128) + " pdl=true" + extra);
    EXPECT_TRUE(r.launch.programmatic) << extra;
    ir::DiagnosticEngine diag;
    auto kern = ir::parseModule(r.kernIr, diag);
    ASSERT_TRUE(kern) << diag.str();
    int waits = 0, launches = 0, globalBeforeWait = 0;
    kern->body().front()->walk([&](ir::Operation& op) {
      if (op.is("kern.griddep_wait")) ++waits;
      if (op.is("kern.griddep_launch_dependents")) ++launches;
      if (touchesGlobal(op) && waits == 0) ++globalBeforeWait;
    });
    EXPECT_EQ(waits, 1) << extra;
    EXPECT_EQ(launches, 1) << extra;
    EXPECT_EQ(globalBeforeWait, 0) << extra << ": a global access before griddepcontrol.wait";
    // In the PTX: the wait before the first TMA copy, the mbarrier inits before the wait (the
    // prologue that overlaps the previous kernel).
    size_t wait = r.ptx.find("griddepcontrol.wait"), copy = r.ptx.find("cp.async.bulk.tensor"),
           init = r.ptx.find("mbarrier.init");
    ASSERT_NE(wait, std::string::npos);
    EXPECT_LT(wait, copy) << extra;
    EXPECT_LT(init, wait) << extra;
    EXPECT_NE(r.ptx.find("griddepcontrol.launch_dependents"), std::string::npos);
  }
}

TEST(Sm90Pdl, OffByDefault) {
  CompileResult r = compileGemm(k128);
  EXPECT_FALSE(r.launch.programmatic);
  EXPECT_EQ(r.ptx.find("griddepcontrol"), std::string::npos);
  EXPECT_EQ(Config::parse(k128).str().find("pdl=false"), Config::parse(k128).str().size() - 9);
}

TEST(Sm90Pdl, ProductsInTheSimulator) {
  check(std::string(k128) + " pdl=true", {200, 136, 264, false, 0, 2});
  check(std::string(k128) + " pdl=true split_k=2", {128, 136, 520, false, 0, 3});
  check("strategy=sm90_ws_persistent bm=128 bn=128 bk=64 stages=3 warps_m=2 warps_n=1 epilogue=tma stream_k=1 pdl=true",
        {264, 136, 392, false, 0, 3});
}

TEST(Sm90Pdl, TheVerifierRefusesTheOpsOutsideAProgrammaticKernel) {
  const char* text = R"(kern.kernel() {sym_name = "k", params = [], threads = 32, smem_bytes = 0, grid = [1]} {
  kern.griddep_wait()
}
)";
  ir::DiagnosticEngine diag;
  auto m = ir::parseModule(text, diag);
  ASSERT_TRUE(m) << diag.str();
  EXPECT_FALSE(ir::verify(*m, diag));
  EXPECT_NE(diag.str().find("'kern.griddep_wait' needs a kernel launched as a programmatic dependent "
                            "({programmatic = true}): elsewhere the runtime gives it no grid to wait for"),
            std::string::npos)
      << diag.str();
}

}  // namespace
}  // namespace kiln
