// The memory-bound examples on the GPU (tests/unit/schedule/rowwise/rowwise_sim_test.cpp runs the
// same schedules in the CPU simulator): compiled for the GPU present with the rowwise family's
// pick for each shape and with schedules that take each path of the kernel (rows in part of a
// warp, a warp, several warps; on chip and streaming; element accesses; a persistent grid),
// launched through kiln::Kernel on the interpreter's seeded inputs with every output poisoned,
// and compared element by element with the tile-IR interpreter (tests/unit/testing/example_runs.h's
// tolerance, which covers ex2.approx, lg2.approx, rsqrt.approx and tanh.approx) and, as a
// Frobenius norm, with the fp64 reference (1e-2 plus the output type's own rounding). Skips,
// saying why, where there is no GPU.
#include <gtest/gtest.h>

#include <cmath>

#include "bench/bench_support.h"
#include "examples/examples.h"
#include "interp/random_inputs.h"
#include "kiln/interp/interpreter.h"
#include "kiln/kernel.h"
#include "kiln/runtime/driver.h"
#include "ops/default_schedule.h"
#include "schedule/config.h"
#include "target/target.h"
#include "tests/unit/testing/example_runs.h"

namespace kiln {
namespace {

struct Shape {
  int64_t rows, cols;
};
// Ragged rows against every block; rows that fit and rows that stream for every pick; a
// vocabulary-sized row; columns no 16-byte vector divides (the picks then access elements).
const Shape kShapes[] = {{37, 96}, {130, 1000}, {9, 8200}, {5, 40000}, {9, 130000}, {17, 777}};

const char* const kConfigs[] = {
    "strategy=rowwise row_threads=8 block_threads=64 vectors=2",
    "strategy=rowwise row_threads=32 block_threads=128 vectors=1",
    "strategy=rowwise row_threads=256 block_threads=256 vectors=2",
    "strategy=rowwise row_threads=1024 block_threads=1024 vectors=1 blocks_per_sm=1",
    "strategy=rowwise row_threads=64 block_threads=256 vectors=4 scalar=true",
};

std::optional<Target> gpuTarget(const runtime::Context& ctx) {
  const auto& p = ctx.properties();
  return Target::byName("sm_" + std::to_string(p.ccMajor) + std::to_string(p.ccMinor) + (p.ccMajor == 9 ? "a" : ""));
}

// Half an ulp relative to the value: the Frobenius error that rounding to `t` alone may add (an
// e4m3 output has three mantissa bits, so its rounding is worth 2^-4 whatever the math did).
double unitRoundoff(ir::ScalarType t) {
  switch (t) {
    case ir::ScalarType::F8E4M3: return 0x1p-4;
    case ir::ScalarType::F8E5M2: return 0x1p-3;
    case ir::ScalarType::BF16: return 0x1p-8;
    case ir::ScalarType::F16: return 0x1p-11;
    default: return 0x1p-24;
  }
}

// One example at one shape under `config` ("" for the family's pick), against the interpreter and
// the fp64 reference.
void matches(const std::string& name, const Shape& s, const std::string& config) {
  runtime::Context ctx = runtime::Context::primary(*runtime::Driver::get());
  auto target = gpuTarget(ctx);
  ASSERT_TRUE(target) << "this GPU is not a Kiln target";
  auto module = examples::find(name)->build();
  const ir::Operation* program = module->body().front();
  auto names = program->stringsAttr("dims");
  std::map<std::string, int64_t> dims = {{names[0], s.rows}, {names[1], s.cols}};
  Config c = config.empty() ? ops::defaultSchedule(*program, *target, dims).config : Config::parse(config);
  SCOPED_TRACE(name + " " + std::to_string(s.rows) + "x" + std::to_string(s.cols) + " [" + c.str() + "]");
  ir::DiagnosticEngine diag;
  auto kernel = Kernel::build(*module, *target, c, diag);
  ASSERT_TRUE(kernel) << diag.str();
  // A fixed vector schedule on a row no vector divides: refused by the launch contract, nothing to run.
  if (!config.empty() && !kernel->launchInfo().validate(dims, diag)) return;
  auto args = interp::generateArguments(*program, dims, uint64_t(s.rows * 31 + s.cols));
  std::vector<std::unique_ptr<bench::DeviceBuffer>> buffers;
  std::vector<uint64_t> pointers;
  std::vector<double> scalars;
  for (const auto& op : program->body().operations()) {
    std::string n = op->stringAttr("name");
    if (op->is("tile.scalar")) scalars.push_back(args.request.scalars.at(n));
    if (!op->is("tile.input") && !op->is("tile.output")) continue;
    const interp::HostTensor& t = args.tensors.at(n);
    buffers.push_back(std::make_unique<bench::DeviceBuffer>(std::max<size_t>(t.bytes.size(), 1)));
    if (op->is("tile.output")) bench::check(cudaMemset(buffers.back()->ptr, 0xFF, t.bytes.size()), "poison");
    else bench::check(cudaMemcpy(buffers.back()->ptr, t.bytes.data(), t.bytes.size(), cudaMemcpyHostToDevice), n.c_str());
    pointers.push_back(uint64_t(buffers.back()->ptr));
  }
  kernel->launch(ctx, nullptr, pointers, scalars, dims);
  bench::check(cudaDeviceSynchronize(), "kernel");
  interp::RunRequest ref = args.request;
  std::map<std::string, std::vector<double>> wide;
  ASSERT_TRUE(interp::runReference(*program, ref, wide, diag)) << diag.str();
  ASSERT_TRUE(interp::run(*program, args.request, diag)) << diag.str();
  size_t bi = 0;
  for (const auto& op : program->body().operations()) {
    if (!op->is("tile.input") && !op->is("tile.output")) continue;
    const bench::DeviceBuffer& buf = *buffers[bi++];
    if (!op->is("tile.output")) continue;
    std::string n = op->stringAttr("name");
    const interp::HostTensor& want = args.tensors.at(n);
    interp::HostTensor got = want;
    bench::check(cudaMemcpy(got.bytes.data(), buf.ptr, got.bytes.size(), cudaMemcpyDeviceToHost), n.c_str());
    EXPECT_EQ(testing::compareToInterpreter(n, want, got), "");
    auto g = interp::toDoubles(got);
    const auto& r = wide.at(n);
    double num = 0, den = 0;
    for (size_t i = 0; i < g.size(); ++i)
      if (std::isfinite(r[i])) num += (g[i] - r[i]) * (g[i] - r[i]), den += r[i] * r[i];
    EXPECT_LT(std::sqrt(num / std::max(den, 1e-300)), 1e-2 + unitRoundoff(want.dtype))
        << n << " against the fp64 reference";
  }
}

class RowwiseGpu : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string why;
    if (!runtime::Driver::get(&why)) GTEST_SKIP() << "no GPU: " << why;
  }
};

TEST_P(RowwiseGpu, PicksMatchTheInterpreter) {
  for (const Shape& s : kShapes) matches(GetParam(), s, "");
}

TEST_P(RowwiseGpu, EveryPathMatchesTheInterpreter) {
  for (const char* config : kConfigs)
    for (const Shape& s : {kShapes[0], kShapes[3]}) matches(GetParam(), s, config);
}

std::vector<std::string> rowExamples() {
  std::vector<std::string> names;
  for (const auto& e : examples::all())
    if (!e.gemm) names.push_back(e.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Examples, RowwiseGpu, ::testing::ValuesIn(rowExamples()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace kiln
