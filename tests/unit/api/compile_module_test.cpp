// kiln::compile takes a module holding one tile.program and nothing else. A module with a
// hand-written kern.kernel beside its program used to compile: both kernels went into the PTX and
// the launch contract described the hand-written one, so a launch would have run the wrong kernel
// (found while fuzzing the compile pipeline, tests/fuzz/compile_fuzz.cpp).
#include <gtest/gtest.h>

#include "kiln/compile.h"
#include "kiln/dialects.h"
#include "kiln/ir/parser.h"
#include "kiln/target.h"

namespace kiln {
namespace {

constexpr const char* kProgram = R"(tile.program() {sym_name = "copy", dims = ["M"]} {
  %X = tile.input() {name = "X"} : tensor<f32, [M]>
  %Y = tile.output() {name = "Y"} : tensor<f32, [M]>
  tile.for_tiles() {dims = ["M"]} {
  ^bb0(%m: coord<[M]>):
    %x = tile.load(%X, %m) : tile<f32, [M]>
    tile.store(%Y, %m, %x)
    tile.yield()
  }
}
)";

constexpr const char* kKernel = R"(kern.kernel() {sym_name = "k", params = ["M"], threads = 32, smem_bytes = 0, grid = [1, 1]} {
^bb0(%M: i32):
  kern.barrier()
}
)";

std::unique_ptr<ir::Module> parse(const std::string& text) {
  registerAllDialects();
  ir::DiagnosticEngine diag;
  auto m = ir::parseModule(text, diag, {"input.kiln"});
  EXPECT_TRUE(m) << diag.str();
  return m;
}

TEST(CompileModule, TheProgramAloneCompiles) {
  auto m = parse(kProgram);
  ASSERT_TRUE(m);
  ir::DiagnosticEngine diag;
  auto r = compile(*m, Target::sm80(), "strategy=rowwise", diag);
  ASSERT_TRUE(r) << diag.str();
  EXPECT_EQ(r->launch.kernelName, "copy");
}

TEST(CompileModule, AnOpBesideTheProgramIsRefusedWithItsPlace) {
  auto m = parse(std::string(kProgram) + kKernel);
  ASSERT_TRUE(m);
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(compile(*m, Target::sm80(), "strategy=rowwise", diag));
  EXPECT_NE(diag.str().find("input.kiln:11:1: error: kiln::compile compiles a module holding one tile.program and "
                            "nothing else; this module also has a 'kern.kernel'; remove it"),
            std::string::npos)
      << diag.str();
}

}  // namespace
}  // namespace kiln
