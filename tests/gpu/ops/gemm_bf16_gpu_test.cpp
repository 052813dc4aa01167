// GPU correctness of the sm80 BF16 GEMM variants against an fp64 host reference and cuBLAS:
// square, skinny and ragged shapes and M = 1, random-normal and patterned inputs, outputs poisoned
// (NaN) before every launch. Skips, saying why, where there is no GPU.
#include <gtest/gtest.h>

#include <cmath>

#include "bench/bench_support.h"
#include "examples/examples.h"
#include "kiln/float_formats.h"
#include "kiln/kernel.h"
#include "kiln/runtime/driver.h"
#include "kiln/target.h"
#include "ops/gemm_configs.h"
#include "schedule/config.h"
#include "tests/gpu/ops/gemm_checks.h"
#include "tests/gpu/ops/gemm_reference.h"
#include "tests/unit/testing/output_check.h"

namespace kiln {
namespace {

struct Shape {
  int M, N, K;
};
const Shape kShapes[] = {{128, 128, 64}, {64, 256, 128}, {256, 64, 96}, {77, 45, 40}, {1, 64, 32}, {200, 136, 264}};

std::vector<double> reference(const std::vector<uint16_t>& A, const std::vector<uint16_t>& B, Shape s, bool kMajor) {
  return testing::gemmReference(A, B, s.M, s.N, s.K, kMajor);
}

class GemmGpu : public ::testing::TestWithParam<std::string> {
 protected:
  // The kernels are compiled for sm_90a, which runs on a compute capability 9.0 GPU only.
  void SetUp() override {
    std::string why;
    if (!testing::needHopper(&why)) GTEST_SKIP() << "no Hopper GPU: " << why;
  }
};

TEST_P(GemmGpu, MatchesReferenceAndCublas) {
  runtime::Context ctx = runtime::Context::primary(*runtime::Driver::get());
  Target target = Target::byName("sm_90a").value();
  cublasHandle_t handle;
  bench::check(cublasCreate(&handle), "cublasCreate");
  for (bool kMajor : {false, true}) {
    auto program = kMajor ? examples::gemmKMajorB() : examples::gemmBf16();
    ir::DiagnosticEngine diag;
    auto kernel = Kernel::build(*program, target, Config::parse(GetParam()), diag);
    ASSERT_TRUE(kernel) << diag.str();
    for (const Shape& s : kShapes) {
      for (bool patterned : {false, true}) {
        SCOPED_TRACE(GetParam() + (kMajor ? " kmajor" : " rowmajor") + " M=" + std::to_string(s.M) + " N=" +
                     std::to_string(s.N) + " K=" + std::to_string(s.K) + (patterned ? " patterned" : " random"));
        std::map<std::string, int64_t> dims{{"M", s.M}, {"N", s.N}, {"K", s.K}};
        ir::DiagnosticEngine contract;
        if (!kernel->launchInfo().validate(dims, contract)) {
          // A shape outside the launch contract (16-byte aligned rows) must be refused, clearly:
          // naming the dim and the multiple it needs.
          EXPECT_NE(contract.str().find("to be a multiple of"), std::string::npos) << contract.str();
          EXPECT_NE(contract.str().find("rows must be aligned"), std::string::npos) << contract.str();
          continue;
        }
        auto A = patterned ? bench::patternedBf16(s.M, s.K, 1) : bench::randomBf16(size_t(s.M) * s.K, 11 + s.M);
        auto B = patterned ? bench::patternedBf16(kMajor ? s.N : s.K, kMajor ? s.K : s.N, 2)
                           : bench::randomBf16(size_t(s.K) * s.N, 12 + s.N);
        bench::DeviceBuffer dA(A.size() * 2), dB(B.size() * 2), dC(size_t(s.M) * s.N * 2), dR(size_t(s.M) * s.N * 2);
        bench::check(cudaMemcpy(dA.ptr, A.data(), dA.bytes, cudaMemcpyHostToDevice), "copy A");
        bench::check(cudaMemcpy(dB.ptr, B.data(), dB.bytes, cudaMemcpyHostToDevice), "copy B");
        bench::poisonBf16(dC, nullptr);
        kernel->launch(ctx, nullptr, {uint64_t(dA.ptr), uint64_t(dB.ptr), uint64_t(dC.ptr)}, {}, dims);
        bench::check(cudaDeviceSynchronize(), "kernel");
        std::vector<uint16_t> C(size_t(s.M) * s.N);
        bench::check(cudaMemcpy(C.data(), dC.ptr, dC.bytes, cudaMemcpyDeviceToHost), "copy C");
        testing::OutputCheck check = testing::checkOutput(C, reference(A, B, s, kMajor), testing::kGemmRel,
                                                          testing::kGemmAbsOfRms, bf16BitsToFloat);
        EXPECT_EQ(check.nonFinite, 0u) << "elements left unwritten (poison) or not finite";
        EXPECT_EQ(check.outOfBound, 0u) << check.str(C.size());
        // BF16 output: one rounding of relative size 2^-9 on average, so the Frobenius error sits near
        // 2e-3; patterned inputs are exact in f32, leaving the output rounding alone.
        EXPECT_LT(check.relFrobenius, 8e-3);
        bench::cublasGemmBf16(handle, s.M, s.N, s.K, dA.ptr, dB.ptr, dR.ptr, kMajor, nullptr);
        std::vector<uint16_t> R(C.size());
        bench::check(cudaMemcpy(R.data(), dR.ptr, dR.bytes, cudaMemcpyDeviceToHost), "copy cuBLAS");
        EXPECT_LT(bench::compareBf16(C, R).relFrobenius, 1e-2) << "differs from cuBLAS";
      }
    }
  }
  cublasDestroy(handle);
}

INSTANTIATE_TEST_SUITE_P(Variants, GemmGpu, ::testing::ValuesIn(ops::gemmBf16TestConfigs()), testing::ParamName());

TEST(GemmGpuLaunch, RejectsMisalignedPointerBeforeLaunching) {
  std::string why;
  if (!testing::needHopper(&why)) GTEST_SKIP() << "no Hopper GPU (the kernel is sm_90a): " << why;
  ir::DiagnosticEngine diag;
  auto kernel = Kernel::build(*examples::gemmBf16(), Target::byName("sm_90a").value(),
                              Config::parse(ops::gemmBf16TestConfigs().front()), diag);
  ASSERT_TRUE(kernel) << diag.str();
  ir::DiagnosticEngine v;
  EXPECT_FALSE(kernel->validate({0x1002, 0x2000, 0x4000}, {}, {{"M", 64}, {"N", 64}, {"K", 64}}, v));
  EXPECT_NE(v.str().find("argument 'A'"), std::string::npos) << v.str();
}

}  // namespace
}  // namespace kiln
