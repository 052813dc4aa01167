// Every GEMM example program (examples::all()) on the GPU: compiled for sm_90a with the schedule
// tests/unit/testing/example_configs.h gives it, launched through kiln::Kernel on the interpreter's
// seeded random inputs (src/interp/random_inputs.h: N(0, 1) rounded to each dtype, valid group
// ids), every output poisoned first (all bits set: NaN in every float dtype), and compared element
// by element with the tile-IR interpreter, the numerical oracle (shapes, dims and tolerance in
// tests/unit/testing/example_runs.h; tests/unit/examples/examples_sim_test.cpp runs the same
// kernels in the CPU simulator). Skips, saying why, where there is no Hopper GPU. The grouped GEMM runs
// through sm90_ws_persistent too (on a Hopper GPU).
#include <gtest/gtest.h>

#include "bench/bench_support.h"
#include "examples/examples.h"
#include "interp/random_inputs.h"
#include "kiln/interp/interpreter.h"
#include "kiln/kernel.h"
#include "kiln/runtime/driver.h"
#include "kiln/target.h"
#include "schedule/config.h"
#include "tests/gpu/ops/gemm_reference.h"
#include "tests/unit/testing/example_configs.h"
#include "tests/unit/testing/example_runs.h"

namespace kiln {
namespace {

class ExamplesGpu : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    // The kernels are compiled for sm_90a, which runs on a compute capability 9.0 GPU only.
    std::string why;
    if (!testing::needHopper(&why)) GTEST_SKIP() << "no Hopper GPU: " << why;
  }
};

// The example `name` compiled with `config`, against the interpreter at every example shape.
void matchesTheInterpreter(const std::string& name, const std::string& config) {
  runtime::Context ctx = runtime::Context::primary(*runtime::Driver::get());
  const examples::Example* example = examples::find(name);
  ASSERT_NE(example, nullptr);
  auto module = example->build();
  const ir::Operation* program = module->body().front();
  ir::DiagnosticEngine diag;
  auto kernel = Kernel::build(*module, Target::sm90a(), Config::parse(config), diag);
  ASSERT_TRUE(kernel) << diag.str();

  for (const auto& s : testing::kExampleShapes) {
    auto dims = testing::exampleDims(*program, s);
    SCOPED_TRACE(example->name + " [" + config + "] M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) +
                 " K=" + std::to_string(s.k));
    auto args = interp::generateArguments(*program, dims, /*seed=*/uint64_t(7 * s.m + s.n));
    // Device copies of every tensor, in declaration order (outputs poisoned), and the scalars.
    std::vector<std::unique_ptr<bench::DeviceBuffer>> buffers;
    std::vector<uint64_t> pointers;
    std::vector<double> scalars;
    std::vector<std::string> outputs;
    for (const auto& op : program->body().operations()) {
      std::string name = op->stringAttr("name");
      if (op->is("tile.scalar")) scalars.push_back(args.request.scalars.at(name));
      if (!op->is("tile.input") && !op->is("tile.output")) continue;
      const interp::HostTensor& t = args.tensors.at(name);
      buffers.push_back(std::make_unique<bench::DeviceBuffer>(std::max<size_t>(t.bytes.size(), 1)));
      if (op->is("tile.output")) {
        outputs.push_back(name);
        bench::check(cudaMemset(buffers.back()->ptr, 0xFF, t.bytes.size()), "poison");
      } else {
        bench::check(cudaMemcpy(buffers.back()->ptr, t.bytes.data(), t.bytes.size(), cudaMemcpyHostToDevice), name.c_str());
      }
      pointers.push_back(uint64_t(buffers.back()->ptr));
    }
    kernel->launch(ctx, nullptr, pointers, scalars, dims);
    bench::check(cudaDeviceSynchronize(), "kernel");

    // The oracle.
    ir::DiagnosticEngine idiag;
    ASSERT_TRUE(interp::run(*program, args.request, idiag)) << idiag.str();
    size_t bi = 0;
    for (const auto& op : program->body().operations()) {
      if (!op->is("tile.input") && !op->is("tile.output")) continue;
      const bench::DeviceBuffer& buf = *buffers[bi++];
      if (!op->is("tile.output")) continue;
      std::string name = op->stringAttr("name");
      const interp::HostTensor& want = args.tensors.at(name);
      interp::HostTensor got = want;
      bench::check(cudaMemcpy(got.bytes.data(), buf.ptr, got.bytes.size(), cudaMemcpyDeviceToHost), name.c_str());
      std::string diff = testing::compareToInterpreter(name, want, got);
      EXPECT_EQ(diff, "");
    }
  }
}

TEST_P(ExamplesGpu, MatchesTheInterpreter) {
  std::string config = testing::exampleConfig(GetParam());
  ASSERT_NE(config, "") << "no schedule for this example in tests/unit/testing/example_configs.h";
  matchesTheInterpreter(GetParam(), config);
}

// The grouped GEMM (MoE) through sm90_ws_persistent: the producer reads each tile's group id and
// loads B from that group's matrix (the B map's third coordinate). Tiles of 64 rows (the example's
// align), alone with the TMA-store epilogue and in pairs along N.
TEST(ExamplesGpuSm90, GroupedGemmPicksBPerTile) {
  std::string why;
  if (!testing::needHopper(&why)) GTEST_SKIP() << "no Hopper GPU: " << why;
  for (const char* config :
       {"strategy=sm90_ws_persistent bm=64 bn=128 bk=64 stages=4 warps_m=1 warps_n=1 epilogue=tma",
        "strategy=sm90_ws_persistent bm=64 bn=64 bk=64 stages=8 warps_m=1 warps_n=1 cluster_n=2"}) {
    SCOPED_TRACE(config);
    matchesTheInterpreter("grouped_gemm", config);
  }
}

// epilogue_loads=early: the bias row (gemm_bias_gelu) and the FP8 scales loaded before the K
// loop, through the boxes of the TMA-store epilogue and the columns past them (bn = 160), straight
// from registers, and transposed (swap_ab), at every example shape (ragged edges included); and
// epilogue_loads=prefetch, their lines prefetched there (a prefetch changes no value: a wrong
// one could only fault, out of bounds).
TEST(ExamplesGpuSm90, EpilogueVectorsLoadedBeforeTheKLoop) {
  std::string why;
  if (!testing::needHopper(&why)) GTEST_SKIP() << "no Hopper GPU: " << why;
  for (const char* loads : {" epilogue_loads=early", " epilogue_loads=prefetch"}) {
    for (const char* config :
         {"strategy=sm90_ws_persistent bm=128 bn=160 bk=64 stages=3 warps_m=2 warps_n=1 epilogue=tma",
          "strategy=sm90_ws_persistent bm=128 bn=128 bk=64 stages=4 warps_m=2 warps_n=1",
          "strategy=sm90_ws_persistent bm=64 bn=128 bk=64 stages=4 warps_m=1 warps_n=1 swap_ab=true epilogue=tma "
          "stage_store=stmatrix"}) {
      SCOPED_TRACE(std::string(config) + loads);
      matchesTheInterpreter("gemm_bias_gelu", config + std::string(loads));
    }
    SCOPED_TRACE(loads);
    matchesTheInterpreter("fp8_rowwise_gemm", "strategy=sm90_ws_persistent bm=128 bn=128 bk=128 stages=4 warps_m=2 "
                                              "warps_n=1 epilogue=tma consumers=pingpong" + std::string(loads));
    matchesTheInterpreter("fp8_rowwise_gemm", "strategy=sm90_ws_persistent bm=128 bn=160 bk=128 stages=4 warps_m=2 "
                                              "warps_n=1 epilogue=tma fp8_accum=promote" + std::string(loads));
  }
}

// A residual [M, N] read in the epilogue (gemm_bias_silu_residual) under the schedules kiln tune
// draws from: the TMA-store epilogue (boxes and the columns past them), stored from registers,
// swapped operands, ping-pong, split-K and stream-K (the finishing block applies the epilogue once),
// a cluster, and the bias loaded early.
TEST(ExamplesGpuSm90, AResidualReadInTheEpilogue) {
  std::string why;
  if (!testing::needHopper(&why)) GTEST_SKIP() << "no Hopper GPU: " << why;
  const std::string base = "strategy=sm90_ws_persistent bk=64 l2_hint=reuse raster=grouped ";
  for (const char* config : {"bm=128 bn=160 stages=4 warps_m=2 epilogue=tma", "bm=128 bn=128 stages=5 warps_m=2",
                             "bm=136 bn=128 stages=4 warps_m=1 warps_n=2 swap_ab=true epilogue=tma stage_store=stmatrix",
                             "bm=128 bn=128 stages=5 warps_m=2 consumers=pingpong epilogue=tma",
                             "bm=128 bn=128 stages=6 warps_m=2 split_k=3 epilogue=tma",
                             "bm=128 bn=192 stages=4 warps_m=2 stream_k=1 epilogue=tma",
                             "bm=128 bn=256 stages=4 warps_m=2 cluster_m=2 epilogue=tma epilogue_loads=early"}) {
    SCOPED_TRACE(config);
    matchesTheInterpreter("gemm_bias_silu_residual", base + config);
  }
}

std::vector<std::string> exampleNames() {
  std::vector<std::string> names;
  for (const auto& e : examples::all())
    if (e.gemm) names.push_back(e.name);  // the memory-bound ones: tests/gpu/ops/rowwise_gpu_test.cpp
  return names;
}

INSTANTIATE_TEST_SUITE_P(Examples, ExamplesGpu, ::testing::ValuesIn(exampleNames()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace kiln
