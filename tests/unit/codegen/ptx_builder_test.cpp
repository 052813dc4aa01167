// The PTX builder: deterministic names, declarations, immediates; the emitter's refusals.
#include <gtest/gtest.h>

#include "codegen/ptx/emitter.h"
#include "codegen/ptx/ptx_builder.h"
#include "kiln/ir/parser.h"

namespace kiln::ptx {
namespace {

TEST(PtxBuilder, RegistersAndLabelsAreNumberedInOrder) {
  PtxBuilder b;
  EXPECT_EQ(b.reg(RegClass::B32).str(), "%r0");
  EXPECT_EQ(b.reg(RegClass::B32).str(), "%r1");
  EXPECT_EQ(b.reg(RegClass::B64).str(), "%rd0");
  EXPECT_EQ(b.reg(RegClass::Pred).str(), "%p0");
  EXPECT_EQ(b.label(), "$L0");
  EXPECT_EQ(b.label(), "$L1");
  EXPECT_EQ(b.declarations(), "\t.reg .pred %p<1>;\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<1>;\n");
}

TEST(PtxBuilder, InstructionsCommentsAndPredicates) {
  PtxBuilder b;
  Reg p = b.reg(RegClass::Pred);
  b.comment("kiln: kern.barrier at f.kiln:3:1\nsecond line");
  b.inst("bar.sync 0");
  b.instIf(p, "bra $L0", /*negate=*/true);
  EXPECT_EQ(b.body(), "\t// kiln: kern.barrier at f.kiln:3:1 second line\n\tbar.sync 0;\n\t@!%p0 bra $L0;\n");
}

TEST(PtxBuilder, ExactImmediates) {
  EXPECT_EQ(f32Immediate(1.0), "0f3F800000");
  EXPECT_EQ(f32Immediate(-0.0), "0f80000000");
  EXPECT_EQ(f32Immediate(0.044715), "0f3D372713");
}

TEST(PtxEmitter, RefusesAModuleWithoutKernels) {
  ir::DiagnosticEngine diag;
  ir::Module m;
  EXPECT_FALSE(emitModule(m, Target::sm80(), diag));
  EXPECT_EQ(diag.str(), "error: the module has no kern.kernel to emit; lower the tile program first\n");
}

TEST(PtxEmitter, RefusesAConversionItCannotWrite) {
  ir::DiagnosticEngine diag;
  auto m = ir::parseModule(
      "kern.kernel() {sym_name = \"k\", params = [\"x\"], threads = 32, smem_bytes = 0, grid = [1]} {\n"
      "^bb0(%x: i64):\n"
      "  %y = arith.cast(%x) : f32\n"
      "}\n",
      diag, {"k.kiln"});
  ASSERT_TRUE(m) << diag.str();
  EXPECT_FALSE(emitModule(*m, Target::sm80(), diag));
  EXPECT_EQ(diag.str(), "k.kiln:3:8: error: cannot emit PTX for 'arith.cast': no conversion from i64 to f32\n");
}

}  // namespace
}  // namespace kiln::ptx
