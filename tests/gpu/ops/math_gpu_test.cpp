// The GPU's math against the interpreter's: each tile math op (tests/unit/testing/math_programs.h)
// through the rowwise strategy on random inputs, every element within the error
// codegen/ptx/emit_math.cpp states for its unit plus the rounding of the f32 ops around it; prints
// each op's worst relative error. Skips, saying why, where there is no GPU.
#include <gtest/gtest.h>

#include <cmath>

#include "bench/bench_support.h"
#include "interp/random_inputs.h"
#include "kiln/interp/interpreter.h"
#include "kiln/kernel.h"
#include "kiln/runtime/driver.h"
#include "schedule/config.h"
#include "target/target.h"
#include "tests/unit/testing/math_programs.h"

namespace kiln {
namespace {

TEST(MathGpu, EveryOpIsWithinItsStatedError) {
  std::string why;
  if (!runtime::Driver::get(&why)) GTEST_SKIP() << "no GPU: " << why;
  runtime::Context ctx = runtime::Context::primary(*runtime::Driver::get());
  const auto& props = ctx.properties();
  auto target = Target::byName("sm_" + std::to_string(props.ccMajor) + std::to_string(props.ccMinor) +
                               (props.ccMajor == 9 ? "a" : ""));
  ASSERT_TRUE(target);
  std::map<std::string, int64_t> dims = {{"M", 64}, {"N", 4096}};
  for (const testing::MathOp& op : testing::mathOps()) {
    SCOPED_TRACE(op.name);
    auto module = testing::mathProgram(op);
    const ir::Operation* program = module->body().front();
    ir::DiagnosticEngine diag;
    auto kernel = Kernel::build(*module, *target, Config::parse("strategy=rowwise row_threads=128 vectors=2"), diag);
    ASSERT_TRUE(kernel) << diag.str();
    auto args = interp::generateArguments(*program, dims, 5);
    interp::HostTensor& x = args.tensors.at("X");
    interp::HostTensor& y = args.tensors.at("Y");
    bench::DeviceBuffer dx(x.bytes.size()), dy(y.bytes.size());
    bench::check(cudaMemcpy(dx.ptr, x.bytes.data(), x.bytes.size(), cudaMemcpyHostToDevice), "X");
    bench::check(cudaMemset(dy.ptr, 0xff, y.bytes.size()), "poison");
    kernel->launch(ctx, nullptr, {uint64_t(dx.ptr), uint64_t(dy.ptr)}, {}, dims);
    bench::check(cudaDeviceSynchronize(), "kernel");
    ASSERT_TRUE(interp::run(*program, args.request, diag)) << diag.str();
    interp::HostTensor got = y;
    bench::check(cudaMemcpy(got.bytes.data(), dy.ptr, got.bytes.size(), cudaMemcpyDeviceToHost), "Y");
    auto g = interp::toDoubles(got), r = interp::toDoubles(y), in = interp::toDoubles(x);
    double worst = 0;
    int bad = 0;
    for (size_t i = 0; i < g.size(); ++i) {
      double err = std::fabs(g[i] - r[i]), bound = op.rel * std::fabs(r[i]) + op.abs;
      worst = std::max(worst, err / (std::fabs(r[i]) + 1e-30));
      if (!(err <= bound) && bad++ < 3)
        ADD_FAILURE() << op.name << "(" << in[i] << "): gpu " << g[i] << ", interpreter " << r[i] << ", error " << err
                      << " > " << bound;
    }
    std::printf("%-8s worst relative error %.2e over %zu elements\n", op.name, worst, g.size());
  }
}

}  // namespace
}  // namespace kiln
