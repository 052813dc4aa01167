// The CPU twin of tests/gpu/ops/examples_gpu_test.cpp: every GEMM example program compiled for sm_90a
// with the schedule tests/unit/testing/example_configs.h gives it, run in the kern IR simulator
// (tests/unit/testing/kern_sim.h) on the interpreter's seeded random inputs with the output
// poisoned, and compared with the tile-IR interpreter under the GPU test's own tolerance
// (tests/unit/testing/example_runs.h). It checks, without a GPU, that every example has a correct
// sm80_multistage kernel and that the GPU test's harness (dims, argument order, comparison) holds.
#include <gtest/gtest.h>

#include <cstring>

#include "examples/examples.h"
#include "interp/random_inputs.h"
#include "kiln/compile.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/parser.h"
#include "schedule/config.h"
#include "target/target.h"
#include "tests/unit/testing/example_configs.h"
#include "tests/unit/testing/example_runs.h"
#include "tests/unit/testing/kern_sim.h"

namespace kiln {
namespace {

class ExamplesSim : public ::testing::TestWithParam<std::string> {};

TEST_P(ExamplesSim, MatchesTheInterpreter) {
  const examples::Example* example = examples::find(GetParam());
  ASSERT_NE(example, nullptr);
  std::string config = testing::exampleConfig(example->name);
  ASSERT_NE(config, "") << "no schedule for this example in tests/unit/testing/example_configs.h";
  auto module = example->build();
  const ir::Operation* program = module->body().front();
  ir::DiagnosticEngine diag;
  auto compiled = compile(*module, Target::sm90a(), Config::parse(config), diag);
  ASSERT_TRUE(compiled) << diag.str();
  auto kern = ir::parseModule(compiled->kernIr, diag);
  ASSERT_TRUE(kern) << diag.str();

  for (const auto& shape : testing::kExampleShapes) {
    auto dims = testing::exampleDims(*program, shape);
    SCOPED_TRACE("M=" + std::to_string(shape.m) + " N=" + std::to_string(shape.n) + " K=" + std::to_string(shape.k));
    ASSERT_TRUE(compiled->launch.validate(dims, diag)) << diag.str();
    auto args = interp::generateArguments(*program, dims, /*seed=*/uint64_t(7 * shape.m + shape.n));
    testing::GlobalMemory mem;
    std::map<std::string, uint64_t> addr;
    for (const auto& [name, t] : args.tensors) {
      std::vector<uint8_t> bytes = t.bytes;
      for (const auto& op : program->body().operations())
        if (op->is("tile.output") && op->stringAttr("name") == name) std::memset(bytes.data(), 0xFF, bytes.size());
      addr[name] = mem.add(std::move(bytes));
    }
    testing::SimLaunch launch;
    launch.kernel = kern->body().front();
    launch.timing = testing::CopyTiming::Late;
    for (const auto& p : compiled->launch.params) {
      if (p.kind == KernelParam::Kind::Pointer) launch.args.push_back(addr.at(p.name));
      else if (p.kind == KernelParam::Kind::Dim) launch.args.push_back(uint32_t(int32_t(dims.at(p.name))));
      else FAIL() << "the examples have no scalar arguments; add their bits here";
    }
    auto grid = compiled->launch.gridFor(dims);
    for (int i = 0; i < 3; ++i) launch.grid[i] = uint32_t(grid[size_t(i)]);
    ASSERT_EQ(testing::simulate(launch, mem), "");

    ASSERT_TRUE(interp::run(*program, args.request, diag)) << diag.str();
    for (const auto& op : program->body().operations()) {
      if (!op->is("tile.output")) continue;
      std::string name = op->stringAttr("name");
      const interp::HostTensor& want = args.tensors.at(name);
      interp::HostTensor got = want;
      std::memcpy(got.bytes.data(), mem.at(addr.at(name)).data(), got.bytes.size());
      EXPECT_EQ(testing::compareToInterpreter(name, want, got), "");
    }
  }
}

std::vector<std::string> exampleNames() {
  std::vector<std::string> names;
  for (const auto& e : examples::all())
    if (e.gemm) names.push_back(e.name);  // the memory-bound ones: tests/unit/schedule/rowwise/rowwise_sim_test.cpp
  return names;
}

INSTANTIATE_TEST_SUITE_P(Examples, ExamplesSim, ::testing::ValuesIn(exampleNames()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace kiln
