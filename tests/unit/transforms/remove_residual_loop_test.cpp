// remove-residual-loop where lit cannot reach, and on the real sm90 GEMM:
//  * IR the verifier refuses, so that text IR cannot carry it to the pass: a value defined in the
//    residual loop and named after it, and an unregistered op in the loop, each keep the loop with
//    the reason recorded (the pass must not trust that it only ever sees verified IR);
//  * every sm90_ws_persistent variant of gemm_bf16, through kiln::compile, for both B layouts: the
//    final kern IR has no tile loop outside a role, and no kept loop; with
//    KILN_DISABLE_PASSES=remove-residual-loop it has exactly one (the residual), so the switch the
//    benchmark uses really turns the pass off;
//  * KILN_DISABLE_PASSES naming a pass that cannot be skipped is a user error, word for word.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <sstream>

#include "kiln/ir/parser.h"
#include "kiln/ir/verifier.h"
#include "ops/gemm_bf16.h"
#include "transforms/pass_registry.h"
#include "schedule/pipeline.h"

namespace kiln::transforms {
namespace {

// Sets (or, with nullopt, unsets) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* v = std::getenv(name)) old_ = v;
    if (value) setenv(name, value->c_str(), 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// Two role-local loops and the residual loop, whose body is `residual`, then `after`.
std::string kernelText(const std::string& residual, const std::string& after) {
  return R"(kern.kernel() {sym_name = "k", params = ["C", "M"], threads = 256, smem_bytes = 0, grid = [1]} {
^bb0(%C: ptr<f32>, %M: i32):
  %one = arith.constant() {value = 1} : i32
  %f = arith.constant() {value = 0.0} : f32
  %t = arith.constant() {value = true} : i1
  kern.role() {name = "producer", warpgroups = [0, 1]} {
    kern.tile_loop(%M, %M, %one) {tile = [64, 64], raster = "row"} {
    ^bb0(%i: i32, %m0: i32, %n0: i32, %b: i32):
    }
  }
  kern.role() {name = "consumer", warpgroups = [1, 1]} {
    kern.tile_loop(%M, %M, %one) {tile = [64, 64], raster = "row"} {
    ^bb0(%i: i32, %m0: i32, %n0: i32, %b: i32):
    }
  }
  kern.tile_loop(%M, %M, %one) {tile = [64, 64], raster = "row"} {
  ^bb0(%iter: i32, %m0: i32, %n0: i32, %b: i32):
)" + residual + "  }\n" + after + "}\n";
}

ir::Operation* residualLoop(ir::Module& m) {
  ir::Operation& kernel = *m.body().operations().front();
  ir::Operation* loop = nullptr;
  for (const auto& op : kernel.body().operations())
    if (op->is("kern.tile_loop")) loop = op.get();
  return loop;
}

ir::Operation* find(ir::Module& m, std::string_view name) {
  ir::Operation* found = nullptr;
  m.op().walk([&](ir::Operation& op) {
    if (!found && op.is(name)) found = &op;
  });
  return found;
}

TEST(RemoveResidualLoop, ValueUsedAfterTheLoopKeepsIt) {
  ir::DiagnosticEngine diag;
  auto m = ir::parseModule(kernelText("    %x = arith.addf(%f, %f) : f32\n", "  kern.st_global(%C, %t, %f)\n"), diag);
  ASSERT_TRUE(m) << diag.str();
  ASSERT_TRUE(ir::verify(*m, diag)) << diag.str();
  // Make the store after the loop name %x: a use the verifier refuses (%x is not visible there).
  find(*m, "kern.st_global")->setOperand(2, find(*m, "arith.addf")->result());
  ir::DiagnosticEngine check;
  EXPECT_FALSE(ir::verify(*m, check));

  ASSERT_TRUE(removeResidualLoopPass(*m, diag));
  ir::Operation* loop = residualLoop(*m);
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->stringAttr("kiln.kept"), "'arith.addf' defines %x, which 'kern.st_global' uses after the loop");
  ASSERT_EQ(diag.diagnostics().size(), 1u);
  EXPECT_EQ(diag.diagnostics()[0].severity, ir::Severity::Remark);
  EXPECT_EQ(diag.diagnostics()[0].message,
            "remove-residual-loop kept this loop: 'arith.addf' defines %x, which 'kern.st_global' uses after the loop");
}

TEST(RemoveResidualLoop, UnregisteredOpKeepsIt) {
  ir::DiagnosticEngine diag;
  auto m = ir::parseModule(kernelText("    test.opaque()\n", ""), diag, {"", true});
  ASSERT_TRUE(m) << diag.str();
  ASSERT_TRUE(removeResidualLoopPass(*m, diag));
  ir::Operation* loop = residualLoop(*m);
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->stringAttr("kiln.kept"), "'test.opaque' is not an op this pass recognises");
}

TEST(RemoveResidualLoop, PureSetupGoes) {
  ir::DiagnosticEngine diag;
  auto m = ir::parseModule(kernelText("    %x = arith.addf(%f, %f) : f32\n", "  kern.st_global(%C, %t, %f)\n"), diag);
  ASSERT_TRUE(m) << diag.str();
  ASSERT_TRUE(removeResidualLoopPass(*m, diag));
  EXPECT_EQ(residualLoop(*m), nullptr);
  EXPECT_TRUE(diag.diagnostics().empty()) << diag.str();
  EXPECT_TRUE(ir::verify(*m, diag)) << diag.str();
}

// Top-level tile loops in the kernel body (indented by two) and role-local ones (by four), as
// the pipeline leaves them: expand-tile-loop writes each out with one count of its walkers
// (kern.grid_dim, or kern.cluster_count) in the block that holds the loop.
std::pair<int, int> tileLoops(const std::string& kernIr) {
  int top = 0, inRole = 0;
  for (const char* walkers : {" = kern.grid_dim() {dim = \"x\"}", " = kern.cluster_count()"})
    for (size_t p = 0; (p = kernIr.find(walkers, p)) != std::string::npos; ++p) {
      size_t bol = kernIr.rfind('\n', p) + 1;
      size_t indent = kernIr.find_first_not_of(' ', bol) - bol;
      if (indent == 2) ++top;
      if (indent == 4) ++inRole;
    }
  return {top, inRole};
}

TEST(RemoveResidualLoop, Sm90GemmHasNoResidualLoopUnlessDisabled) {
  int variants = 0;
  for (const auto& v : ops::gemmBf16Variants()) {
    if (v.config.strategy != "sm90_ws_persistent") continue;
    ++variants;
    for (bool kMajor : {false, true}) {
      std::string what = v.name + (kMajor ? " (K-major B)" : " (row-major B)");
      for (bool disabled : {false, true}) {
        ScopedEnv env("KILN_DISABLE_PASSES", disabled ? std::optional<std::string>("remove-residual-loop") : std::nullopt);
        ir::DiagnosticEngine diag;
        auto r = v.compile(kMajor, Target::sm90a(), diag);
        ASSERT_TRUE(r) << what << ": " << diag.str();
        EXPECT_TRUE(diag.diagnostics().empty()) << what << ": " << diag.str();
        auto [top, inRole] = tileLoops(r->kernIr);
        EXPECT_EQ(inRole, 2) << what << ": one loop per role (producer, consumer)";
        EXPECT_EQ(top, disabled ? 1 : 0) << what << (disabled ? " with" : " without") << " KILN_DISABLE_PASSES";
        EXPECT_EQ(r->kernIr.find("kiln.kept"), std::string::npos) << what;
      }
    }
  }
  EXPECT_GE(variants, 4);
}

TEST(RemoveResidualLoop, DisablingAnotherPassIsAUserError) {
  for (const char* value : {"dce", "remove-residual-loop,partition-roles", "nonesuch"}) {
    ScopedEnv env("KILN_DISABLE_PASSES", std::string(value));
    ir::Module m;
    ir::DiagnosticEngine diag;
    EXPECT_FALSE(pipeline::runSteps(pipeline::pipelineSteps("sm90_ws_persistent"), m, diag));
    std::string name = std::string(value).substr(std::string(value).rfind(',') + 1);
    EXPECT_EQ(diag.str(), "error: KILN_DISABLE_PASSES names '" + name +
                              "', which is not a pass that can be turned off; those that can: "
                              "sm90-multistage-ring, remove-residual-loop\n");
  }
}

TEST(RemoveResidualLoop, DisabledStepIsSkipped) {
  std::ostringstream dump;
  ir::DiagnosticEngine diag;
  auto m = ir::parseModule(kernelText("", ""), diag);
  ASSERT_TRUE(m) << diag.str();
  pipeline::PipelineOptions opts;
  opts.disabled = {"remove-residual-loop"};
  opts.printIrAfterAll = true;
  opts.dump = &dump;
  ASSERT_TRUE(pipeline::runSteps({"remove-residual-loop"}, *m, diag, opts)) << diag.str();
  EXPECT_EQ(dump.str(), "// ----- remove-residual-loop skipped (KILN_DISABLE_PASSES) -----\n");
  EXPECT_NE(residualLoop(*m), nullptr);
}

}  // namespace
}  // namespace kiln::transforms
