// sm90 pdl=true on the GPU: kernels launched as programmatic dependents, back to back on one
// stream, where each reads what the one before wrote (C1 = A·B, then C2 = C1·B2) and the same
// output is written twice in a row; a missing or misplaced griddepcontrol.wait would read a
// partial C1 (poisoned first) or let the two writes of C interleave. Against an fp64 reference of
// the GPU's own C1. Also: the residual epilogue's pair loads refuse a residual pointer off 4 bytes
// before launching. Skips, saying why, where there is no Hopper GPU.
#include <gtest/gtest.h>

#include "bench/bench_support.h"
#include "examples/examples.h"
#include "kiln/float_formats.h"
#include "kiln/kernel.h"
#include "kiln/runtime/driver.h"
#include "kiln/target.h"
#include "schedule/config.h"
#include "tests/gpu/ops/gemm_checks.h"
#include "tests/gpu/ops/gemm_reference.h"
#include "tests/unit/testing/output_check.h"

namespace kiln {
namespace {

class Sm90PdlGpu : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string why;
    if (!testing::needHopper(&why)) GTEST_SKIP() << "no Hopper GPU: " << why;
  }
};

TEST_P(Sm90PdlGpu, ChainedKernelsSeeEachOthersResults) {
  runtime::Context ctx = runtime::Context::primary(*runtime::Driver::get());
  ir::DiagnosticEngine diag;
  auto kernel = Kernel::build(*examples::gemmBf16(), Target::byName("sm_90a").value(), Config::parse(GetParam()), diag);
  ASSERT_TRUE(kernel) << diag.str();
  ASSERT_TRUE(kernel->launchInfo().programmatic);
  const int M = 1024, N = 512, K = 1536;  // C1 [M, N], then C2 = C1 [M, N] x B2 [N, N]
  auto A = bench::randomBf16(size_t(M) * K, 3), B = bench::randomBf16(size_t(K) * N, 4),
       B2 = bench::randomBf16(size_t(N) * N, 5);
  bench::DeviceBuffer dA(A.size() * 2), dB(B.size() * 2), dB2(B2.size() * 2), dC1(size_t(M) * N * 2),
      dC2(size_t(M) * N * 2);
  bench::check(cudaMemcpy(dA.ptr, A.data(), dA.bytes, cudaMemcpyHostToDevice), "copy A");
  bench::check(cudaMemcpy(dB.ptr, B.data(), dB.bytes, cudaMemcpyHostToDevice), "copy B");
  bench::check(cudaMemcpy(dB2.ptr, B2.data(), dB2.bytes, cudaMemcpyHostToDevice), "copy B2");
  cudaStream_t s;
  bench::check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream");
  for (int round = 0; round < 20; ++round) {
    bench::poisonBf16(dC1, s);
    bench::poisonBf16(dC2, s);
    std::map<std::string, int64_t> d1{{"M", M}, {"N", N}, {"K", K}}, d2{{"M", M}, {"N", N}, {"K", N}};
    kernel->launch(ctx, s, {uint64_t(dA.ptr), uint64_t(dB.ptr), uint64_t(dC1.ptr)}, {}, d1);
    kernel->launch(ctx, s, {uint64_t(dA.ptr), uint64_t(dB.ptr), uint64_t(dC1.ptr)}, {}, d1);  // C1 again
    kernel->launch(ctx, s, {uint64_t(dC1.ptr), uint64_t(dB2.ptr), uint64_t(dC2.ptr)}, {}, d2);
    bench::check(cudaStreamSynchronize(s), "chain");
    std::vector<uint16_t> C1(size_t(M) * N), C2(size_t(M) * N);
    bench::check(cudaMemcpy(C1.data(), dC1.ptr, dC1.bytes, cudaMemcpyDeviceToHost), "copy C1");
    bench::check(cudaMemcpy(C2.data(), dC2.ptr, dC2.bytes, cudaMemcpyDeviceToHost), "copy C2");
    SCOPED_TRACE("round " + std::to_string(round));
    testing::OutputCheck c1 = testing::checkOutput(C1, testing::gemmReference(A, B, M, N, K, false), testing::kGemmRel,
                                                   testing::kGemmAbsOfRms, bf16BitsToFloat);
    ASSERT_EQ(c1.nonFinite, 0u);
    ASSERT_EQ(c1.outOfBound, 0u) << c1.str(C1.size());
    testing::OutputCheck c2 = testing::checkOutput(C2, testing::gemmReference(C1, B2, M, N, N, false), testing::kGemmRel,
                                                   testing::kGemmAbsOfRms, bf16BitsToFloat);
    ASSERT_EQ(c2.nonFinite, 0u) << "C2 read C1 before it was written";
    ASSERT_EQ(c2.outOfBound, 0u) << c2.str(C2.size());
  }
  cudaStreamDestroy(s);
}

INSTANTIATE_TEST_SUITE_P(
    Configs, Sm90PdlGpu,
    ::testing::Values("strategy=sm90_ws_persistent bm=128 bn=128 bk=64 stages=4 warps_m=2 warps_n=1 epilogue=tma pdl=true",
                      "strategy=sm90_ws_persistent bm=128 bn=128 bk=64 stages=4 warps_m=2 warps_n=1 epilogue=tma "
                      "split_k=2 pdl=true",
                      "strategy=sm90_ws_persistent bm=128 bn=256 bk=64 stages=4 warps_m=2 warps_n=1 epilogue=tma "
                      "stream_k=1 pdl=true"),
    testing::ParamName());

TEST(Sm90ResidualPairsGpu, RefusesAResidualOffFourBytes) {
  std::string why;
  if (!testing::needHopper(&why)) GTEST_SKIP() << "no Hopper GPU: " << why;
  ir::DiagnosticEngine diag;
  auto kernel = Kernel::build(*examples::gemmBiasSiluResidual(), Target::byName("sm_90a").value(),
                              Config::parse("strategy=sm90_ws_persistent bm=128 bn=128 bk=64 stages=4 warps_m=2 "
                                            "warps_n=1 epilogue=tma"),
                              diag);
  ASSERT_TRUE(kernel) << diag.str();
  ir::DiagnosticEngine v;
  // A, B, bias, R (2 bytes off a 4-byte boundary), C
  EXPECT_FALSE(kernel->validate({0x10000, 0x20000, 0x30000, 0x40002, 0x50000}, {}, {{"M", 64}, {"N", 64}, {"K", 64}}, v));
  EXPECT_NE(v.str().find("argument 'R'"), std::string::npos) << v.str();
}

}  // namespace
}  // namespace kiln
