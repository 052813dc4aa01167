// Benchmark rows for shapes a kernel does not support: a status, never an uncaught exception
// (kiln_gemm_bench aborted on the first unsupported shape before).
#include "bench/bench_rows.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "kiln/target.h"
#include "ops/gemm_bf16_sm90.h"

namespace kiln::bench {
namespace {

Kernel sm90Kernel() {
  const ops::GemmVariant* v = ops::findGemmBf16Variant("bf16_gemm_sm90_128x128x64_s6");
  EXPECT_NE(v, nullptr);
  ir::DiagnosticEngine diag;
  auto k = Kernel::build(*v->program(false), Target::sm90a(), v->config, diag);
  EXPECT_TRUE(k) << diag.str();
  return std::move(*k);
}

const std::vector<uint64_t> kPtrs = {0x7f0000000000, 0x7f1000000000, 0x7f2000000000};

TEST(BenchRows, ASupportedShapeHasNoStatus) {
  Kernel k = sm90Kernel();
  EXPECT_EQ(unsupportedShape(k, kPtrs, {}, {{"M", 4096}, {"N", 4096}, {"K", 4096}}), std::nullopt);
}

TEST(BenchRows, AnUnsupportedShapeIsAStatusNamingWhy) {
  Kernel k = sm90Kernel();
  auto status = unsupportedShape(k, kPtrs, {}, {{"M", 4096}, {"N", 4096}, {"K", 4100}});
  ASSERT_TRUE(status);
  EXPECT_EQ(status->rfind("unsupported: ", 0), 0u) << *status;
  EXPECT_NE(status->find("K"), std::string::npos) << *status;
  EXPECT_EQ(status->find('\n'), std::string::npos) << *status;
}

TEST(BenchRows, ExceptionsWhileMeasuringBecomeStatuses) {
  EXPECT_EQ(guardedRow([] {}), std::nullopt);
  EXPECT_EQ(guardedRow([] { throw ir::Error(ir::Location::unknown(), "dimension 'M' is 0"); }),
            "unsupported: dimension 'M' is 0");
  EXPECT_EQ(guardedRow([] { throw std::runtime_error("cudaMemcpy failed:\nout of memory"); }),
            "failed: cudaMemcpy failed:; out of memory");
}

}  // namespace
}  // namespace kiln::bench
