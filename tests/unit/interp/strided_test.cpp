// The interpreter on strided tensors (tile dialect, tensor_layout.h): element (i, j) of a tensor
// with strides [s0, s1] is element i * s0 + j * s1 of its storage, gaps are neither read nor
// written, a batch stride 0 repeats one matrix, and an output whose elements share storage is
// refused. The reference indexes the buffers by hand, independently of the interpreter.
#include <gtest/gtest.h>

#include <random>

#include "interp_test_util.h"

namespace kiln::interp::testing {
namespace {

using ir::ScalarType;

// C[b] = A[b] B with A row-major of leading dimension lda and batch stride sa, one B (batch stride 0)
// stored column-major with leading dimension ldb, C f32 of leading dimension ldc, batch stride sc.
const char* kStridedBatchedGemm = R"(
tile.program() {sym_name = "strided", dims = ["Bt", "M", "N", "K", "lda", "sa", "ldb", "ldc", "sc"]} {
  %A = tile.input() {name = "A"} : tensor<bf16, [Bt, M, K], strides = ["sa", "lda", 1]>
  %B = tile.input() {name = "B"} : tensor<bf16, [Bt, K, N], strides = [0, 1, "ldb"]>
  %C = tile.output() {name = "C"} : tensor<f32, [Bt, M, N], strides = ["sc", "ldc", 1]>
  tile.for_tiles() {dims = ["M", "N"], batch = "Bt"} {
  ^bb0(%b: index, %m: coord<[M]>, %n: coord<[N]>):
    %0 = tile.constant() {value = 0.0} : tile<f32, [M, N]>
    %acc = tile.reduce(%0) {dim = "K"} : tile<f32, [M, N]> {
    ^bb0(%k: coord<[K]>, %c: tile<f32, [M, N]>):
      %1 = tile.load(%A, %b, %m, %k) : tile<bf16, [M, K]>
      %2 = tile.load(%B, %b, %k, %n) : tile<bf16, [K, N]>
      %3 = tile.dot(%1, %2, %c) : tile<f32, [M, N]>
      tile.yield(%3)
    }
    tile.store(%C, %b, %m, %n, %acc)
    tile.yield()
  }
}
)";

TEST(InterpStrided, BatchedGemmThroughStrides) {
  auto mod = parseProgram(kStridedBatchedGemm);
  ASSERT_TRUE(mod);
  const int64_t bt = 3, m = 37, n = 29, k = 45, lda = 50, sa = lda * m + 11, ldb = 47, ldc = 33, sc = ldc * m + 5;
  std::mt19937_64 rng(3);
  std::normal_distribution<double> normal;
  auto fill = [&](int64_t count) {
    std::vector<double> v(static_cast<size_t>(count));
    for (double& x : v) x = normal(rng);
    return v;
  };
  HostTensor A = makeStridedHostTensor(ScalarType::BF16, {bt, m, k}, fill((bt - 1) * sa + (m - 1) * lda + k));
  HostTensor B = makeStridedHostTensor(ScalarType::BF16, {bt, k, n}, fill(k + (n - 1) * ldb));
  const int64_t cElems = (bt - 1) * sc + (m - 1) * ldc + n;
  HostTensor C = makeStridedHostTensor(ScalarType::F32, {bt, m, n}, std::vector<double>(size_t(cElems), 7.0));
  RunRequest req{{{"Bt", bt}, {"M", m}, {"N", n}, {"K", k}, {"lda", lda}, {"sa", sa}, {"ldb", ldb}, {"ldc", ldc}, {"sc", sc}},
                 {{"A", &A}, {"B", &B}, {"C", &C}},
                 {}};
  ir::DiagnosticEngine diag;
  ASSERT_TRUE(run(programOf(*mod), req, diag)) << diag.str();
  std::vector<double> want(size_t(cElems), 7.0), tol(size_t(cElems), 0.0);
  for (int64_t b = 0; b < bt; ++b)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0, abs = 0;
        for (int64_t x = 0; x < k; ++x) {
          double p = getElement(A, b * sa + i * lda + x) * getElement(B, x + j * ldb);
          sum += p, abs += std::fabs(p);
        }
        want[size_t(b * sc + i * ldc + j)] = sum;
        tol[size_t(b * sc + i * ldc + j)] = 1e-5 * abs + 1e-6;
      }
  expectWithin(C, want, tol, "strided C (its gaps must keep 7)");
}

TEST(InterpStrided, OutputWithSharedStorageIsRefused) {
  std::string text = kStridedBatchedGemm;
  auto mod = parseProgram(text);
  ASSERT_TRUE(mod);
  HostTensor A = makeStridedHostTensor(ScalarType::BF16, {2, 4, 4}, std::vector<double>(64, 1.0));
  HostTensor B = makeStridedHostTensor(ScalarType::BF16, {2, 4, 4}, std::vector<double>(16, 1.0));
  HostTensor C = makeStridedHostTensor(ScalarType::F32, {2, 4, 4}, std::vector<double>(24, 0.0));
  RunRequest req{{{"Bt", 2}, {"M", 4}, {"N", 4}, {"K", 4}, {"lda", 4}, {"sa", 16}, {"ldb", 4}, {"ldc", 4}, {"sc", 8}},
                 {{"A", &A}, {"B", &B}, {"C", &C}},
                 {}};
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(run(programOf(*mod), req, diag));
  EXPECT_NE(diag.str().find("output 'C' has strides [8, 4, 1] under which two of its elements share storage; an "
                            "output's elements must not overlap"),
            std::string::npos)
      << diag.str();
}

TEST(InterpStrided, StorageSizeFollowsTheStrides) {
  auto mod = parseProgram(kStridedBatchedGemm);
  ASSERT_TRUE(mod);
  HostTensor A = makeStridedHostTensor(ScalarType::BF16, {2, 4, 4}, std::vector<double>(30, 1.0));  // 31 needed
  HostTensor B = makeStridedHostTensor(ScalarType::BF16, {2, 4, 4}, std::vector<double>(16, 1.0));
  HostTensor C = makeStridedHostTensor(ScalarType::F32, {2, 4, 4}, std::vector<double>(32, 0.0));
  RunRequest req{{{"Bt", 2}, {"M", 4}, {"N", 4}, {"K", 4}, {"lda", 4}, {"sa", 15}, {"ldb", 4}, {"ldc", 4}, {"sc", 16}},
                 {{"A", &A}, {"B", &B}, {"C", &C}},
                 {}};
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(run(programOf(*mod), req, diag));
  EXPECT_NE(diag.str().find("tensor 'A' has 60 bytes, but its 31 bf16 elements (strided) need 62"), std::string::npos)
      << diag.str();
}

}  // namespace
}  // namespace kiln::interp::testing
