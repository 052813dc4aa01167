// GPU correctness of the gemm_fp8 family (src/ops/gemm_fp8.h): every fp8_gemm_sm90_* variant,
// compiled for sm_90a and launched through kiln::Kernel on the interpreter's seeded random inputs
// (N(0, 1) rounded to e4m3, f32 scales), the output poisoned first, and compared element by element
// with the tile-IR interpreter (tolerance in tests/unit/testing/example_runs.h). The shapes are
// ragged against every tile (M, N not multiples of 64, K a multiple of 16 but not of 128), small
// M, more tiles than SMs, and a long K (256 K steps): there the variants that promote each K
// step's sums meet the interpreter's tolerance, and the "_fastacc" ones cuBLASLt FAST_ACCUM's
// looser contract. Skips, saying why, where there is no Hopper GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <memory>

#include "bench/bench_support.h"
#include "bench/fp8_scaled.h"
#include "interp/random_inputs.h"
#include "kiln/compile.h"
#include "kiln/interp/interpreter.h"
#include "kiln/kernel.h"
#include "kiln/runtime/driver.h"
#include "kiln/target.h"
#include "ops/gemm_fp8.h"
#include "schedule/config.h"
#include "tests/gpu/ops/gemm_reference.h"
#include "tests/unit/schedule/sm90_config_draw.h"
#include "tests/unit/testing/example_runs.h"

namespace kiln {
namespace {

const testing::ExampleShape kShapes[] = {{200, 136, 272}, {64, 1032, 1040}, {1000, 1064, 2048}, {128, 384, 32768}};

// The interpreter's inputs and outputs for one shape, computed once for all variants.
struct Oracle {
  interp::GeneratedArguments args;
};

const Oracle& oracleFor(const ir::Operation& program, const testing::ExampleShape& s) {
  static std::map<std::tuple<int64_t, int64_t, int64_t>, std::unique_ptr<Oracle>> cache;
  auto& slot = cache[{s.m, s.n, s.k}];
  if (!slot) {
    slot = std::make_unique<Oracle>();
    // The request points into the tensors, so the interpreter's C lands beside the inputs.
    slot->args = interp::generateArguments(program, testing::exampleDims(program, s), uint64_t(3 * s.m + s.k));
    ir::DiagnosticEngine diag;
    EXPECT_TRUE(interp::run(program, slot->args.request, diag)) << diag.str();
  }
  return *slot;
}

// Runs `config` on every shape and compares C with the interpreter's.
void matchesTheInterpreter(const std::string& label, const Config& config) {
  runtime::Context ctx = runtime::Context::primary(*runtime::Driver::get());
  auto module = ops::fp8ScaledGemmProgram();
  const ir::Operation& program = *module->body().front();
  ir::DiagnosticEngine diag;
  auto kernel = Kernel::build(*module, Target::sm90a(), config, diag);
  ASSERT_TRUE(kernel) << diag.str();
  for (const auto& s : kShapes) {
    SCOPED_TRACE(label + " M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k));
    const Oracle& o = oracleFor(program, s);
    std::vector<std::unique_ptr<bench::DeviceBuffer>> buffers;
    std::vector<uint64_t> pointers;
    for (const char* name : {"A", "B", "scale_a", "scale_b", "C"}) {
      const interp::HostTensor& t = o.args.tensors.at(name);
      buffers.push_back(std::make_unique<bench::DeviceBuffer>(t.bytes.size()));
      if (std::string(name) == "C")
        bench::check(cudaMemset(buffers.back()->ptr, 0xFF, t.bytes.size()), "poison");
      else
        bench::check(cudaMemcpy(buffers.back()->ptr, t.bytes.data(), t.bytes.size(), cudaMemcpyHostToDevice), name);
      pointers.push_back(uint64_t(buffers.back()->ptr));
    }
    kernel->launch(ctx, nullptr, pointers, {}, testing::exampleDims(program, s));
    bench::check(cudaDeviceSynchronize(), "kernel");
    const interp::HostTensor& want = o.args.tensors.at("C");
    interp::HostTensor got = want;
    bench::check(cudaMemcpy(got.bytes.data(), buffers.back()->ptr, got.bytes.size(), cudaMemcpyDeviceToHost), "C");
    if (config.fp8Accum == Fp8Accum::Fast && s.k > 4096) {
      // Fast accumulation keeps the sum of all K steps in the tensor cores' accumulator, which
      // keeps fewer bits than f32 (about 14 past the leading one, DeepSeek-V3's report): over 256
      // K steps its error reaches ~1% of the output's scale, past one BF16 rounding, and how far
      // depends on the inputs. The contract checked is cuBLASLt FAST_ACCUM's on the same inputs:
      // Kiln's largest error against the interpreter within twice cuBLASLt's (the same
      // accumulator, summed in another order), which a dropped K step or a wrong scale (errors of
      // the output's own size) still fails by far. Without cuBLASLt's FP8 GEMM, 2^-7 of max |C|.
      auto worstOf = [&](const interp::HostTensor& c) {
        double worst = 0;
        for (int64_t i = 0, n = interp::numElements(want); i < n; ++i) {
          double d = std::fabs(interp::getElement(c, i) - interp::getElement(want, i));
          worst = std::isnan(d) ? INFINITY : std::max(worst, d);
        }
        return worst;
      };
      double scale = 0;
      for (int64_t i = 0, n = interp::numElements(want); i < n; ++i)
        scale = std::max(scale, std::fabs(interp::getElement(want, i)));
      const double worst = worstOf(got);
      cublasLtHandle_t lt;
      bench::check(cublasLtCreate(&lt), "cublasLtCreate");
      bench::DeviceBuffer workspace(32u << 20), ltC(got.bytes.size());
      bench::LtScaledGemm ref(lt, {int(s.m), int(s.n), int(s.k)}, ops::Fp8Scaling::Rowwise, buffers[2]->ptr,
                              buffers[3]->ptr, /*fastAccum=*/true, workspace);
      if (ref.ok()) {
        ref.run(buffers[0]->ptr, buffers[1]->ptr, ltC.ptr, nullptr);
        bench::check(cudaDeviceSynchronize(), "cuBLASLt");
        interp::HostTensor lc = want;
        bench::check(cudaMemcpy(lc.bytes.data(), ltC.ptr, lc.bytes.size(), cudaMemcpyDeviceToHost), "cuBLASLt C");
        const double ltWorst = worstOf(lc);
        EXPECT_LE(worst, 2 * ltWorst) << "largest |C - interpreter| against cuBLASLt FAST_ACCUM's " << ltWorst
                                      << " (max |C| = " << scale << ")";
      } else {
        std::printf("cuBLASLt FP8 unavailable (%s): bound 2^-7 max |C|\n", ref.why().c_str());
        EXPECT_LE(worst, std::ldexp(scale, -7)) << "largest |C - interpreter| against max |C| = " << scale;
      }
      cublasLtDestroy(lt);
    } else {
      EXPECT_EQ(testing::compareToInterpreter("C", want, got), "");
    }
  }
}

class GemmFp8Gpu : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string why;
    if (!testing::needHopper(&why)) GTEST_SKIP() << "no Hopper GPU: " << why;
  }
};

TEST_P(GemmFp8Gpu, MatchesTheInterpreter) {
  const ops::Fp8GemmVariant* v = ops::findGemmFp8Variant(GetParam());
  ASSERT_NE(v, nullptr);
  matchesTheInterpreter(v->name, v->config);
}

std::vector<std::string> variantNames() {
  std::vector<std::string> names;
  for (const auto& v : ops::gemmFp8Variants()) names.push_back(v.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Variants, GemmFp8Gpu, ::testing::ValuesIn(variantNames()),
                         [](const auto& info) { return info.param; });

// The config sweep's FP8 draws (tests/unit/schedule/sm90_config_draw.h) on the hardware: the first
// twelve of its seed that compile, against the interpreter as above.
TEST(GemmFp8GpuSweep, DrawnConfigsMatchTheInterpreter) {
  std::string why;
  if (!testing::needHopper(&why)) GTEST_SKIP() << "no Hopper GPU: " << why;
  auto configs = sm90draw::firstAccepted(true, 12, [](const std::string& text) {
    ir::DiagnosticEngine diag;
    return compile(*ops::fp8ScaledGemmProgram(), Target::sm90a(), Config::parse(text), diag).has_value();
  });
  ASSERT_EQ(configs.size(), 12u);
  for (const std::string& text : configs) matchesTheInterpreter(text, Config::parse(text));
}

}  // namespace
}  // namespace kiln
