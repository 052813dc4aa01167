// Every tile math op (tests/unit/testing/math_programs.h) lowered by rowwise and run in the kern
// simulator against the interpreter: the lowering's formulas (log through log2, pow by squaring or
// through exp2 and log2, gelu_erf through erf, sigmoid) compute the op. The simulator's functions
// are exact, so this checks the formulas; tests/gpu/ops/math_gpu_test.cpp checks the GPU's units.
#include <gtest/gtest.h>

#include "tests/unit/testing/math_programs.h"
#include "tests/unit/testing/sim_run.h"

namespace kiln {
namespace {

TEST(RowwiseMathSim, EveryOpMatchesTheInterpreter) {
  for (const testing::MathOp& op : testing::mathOps()) {
    SCOPED_TRACE(op.name);
    auto run = testing::simulateAgainstInterpreter(*testing::mathProgram(op),
                                                   Config::parse("strategy=rowwise row_threads=16 block_threads=64"),
                                                   Target::sm80(), {{"M", 5}, {"N", 200}}, 3);
    EXPECT_EQ(run.error, "");
  }
}

}  // namespace
}  // namespace kiln
