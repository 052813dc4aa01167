// GPU correctness of every GEMM layout and shape class Kiln takes (docs/layouts.md): A and B each
// row- or column-major (NN, NT, TN, TT), dense, with a leading dimension past the rows (a padded
// buffer, a slice) and at an unaligned offset, C dense or strided, and shapes whose rows are 16-byte
// aligned, odd in N, odd in K, odd everywhere and GEMV-like (M = 1). Each runs the schedule
// kiln::select picks for its dims and addresses on sm_90a (the family's automatic choice), checked
// against an fp64 host reference element by element and against cuBLAS called with the same layout,
// with outputs poisoned first; C's gaps must keep their poison. The "Sanitized" suite is a small
// subset for compute-sanitizer. Skips, saying why, where there is no Hopper GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <optional>

#include "bench/bench_support.h"
#include "kiln/config.h"
#include "kiln/float_formats.h"
#include "kiln/kernel.h"
#include "kiln/program_builder.h"
#include "kiln/runtime/driver.h"
#include "kiln/select.h"
#include "kiln/target.h"
#include "ops/default_schedule.h"
#include "tests/gpu/ops/gemm_reference.h"
#include "tests/unit/testing/output_check.h"

namespace kiln {
namespace {

struct Case {
  int M, N, K;
  bool aCol, bKMajor;
  int pad;     // leading dimensions this many elements past the rows (0: dense)
  int offset;  // A and B start this many elements into their buffers
  bool cStrided;
};

std::string name(const Case& c) {
  return std::string(c.aCol ? "T" : "N") + (c.bKMajor ? "T" : "N") + " M=" + std::to_string(c.M) +
         " N=" + std::to_string(c.N) + " K=" + std::to_string(c.K) + " pad=" + std::to_string(c.pad) +
         " offset=" + std::to_string(c.offset) + (c.cStrided ? " strided C" : "");
}

std::unique_ptr<ir::Module> program(const Case& c) {
  ProgramBuilder p("gemm_layouts");
  auto [M, N, K] = p.dims("M", "N", "K");
  auto [lda, ldb, ldc] = p.dims("lda", "ldb", "ldc");
  bool strided = c.pad > 0;
  Tensor A = strided ? p.input("A", bf16, {M, K}, c.aCol ? strides(1, lda) : strides(lda, 1))
                     : p.input("A", bf16, {M, K}, c.aCol ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{});
  Tensor B = strided ? p.input("B", bf16, {K, N}, c.bKMajor ? strides(1, ldb) : strides(ldb, 1))
                     : p.input("B", bf16, {K, N}, c.bKMajor ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{});
  Tensor C = c.cStrided ? p.output("C", bf16, {M, N}, strides(ldc, 1)) : p.output("C", bf16, {M, N});
  p.tile({M, N}, [&](Coord m, Coord n) {
    Tile acc = p.zeros(f32, {m, n});
    p.reduce(K, [&](Coord k) { acc = dot(A(m, k), B(k, n), acc); });
    C(m, n) = cast(bf16, acc);
  });
  return p.finish();
}

// `strategy`: when set, the strategy the family's pick must have (the gemv cases); `split`: whether
// its K must be split across blocks (split_k above 1) or not.
void run(const Case& c, cublasHandle_t handle, const runtime::Context& ctx, const std::string& strategy = "",
         std::optional<bool> split = std::nullopt, int alignB = 0) {
  SCOPED_TRACE(name(c));
  const int64_t lda = (c.aCol ? c.M : c.K) + c.pad, ldb = (c.bKMajor ? c.K : c.N) + c.pad;
  const int64_t ldc = c.N + (c.cStrided ? 5 : 0);  // an odd leading dimension: element stores
  const int64_t aElems = (c.aCol ? c.K : c.M) * lda, bElems = (c.bKMajor ? c.N : c.K) * ldb, cElems = c.M * ldc;
  auto A = bench::randomBf16(size_t(aElems + c.offset), 3 + c.M), B = bench::randomBf16(size_t(bElems + c.offset), 5 + c.N);
  bench::DeviceBuffer dA(A.size() * 2), dB(B.size() * 2), dC(size_t(cElems) * 2), dR(size_t(cElems) * 2);
  bench::check(cudaMemcpy(dA.ptr, A.data(), dA.bytes, cudaMemcpyHostToDevice), "copy A");
  bench::check(cudaMemcpy(dB.ptr, B.data(), dB.bytes, cudaMemcpyHostToDevice), "copy B");
  uint64_t pa = uint64_t(dA.ptr) + 2 * c.offset, pb = uint64_t(dB.ptr) + 2 * c.offset;
  std::map<std::string, int64_t> dims{{"M", c.M}, {"N", c.N}, {"K", c.K}, {"lda", lda}, {"ldb", ldb}, {"ldc", ldc}};
  auto prog = program(c);
  const Target target = Target::byName("sm_90a").value();
  const int base = c.offset % 8 ? 2 : 16;
  Selection pick = select(*prog, target, dims, {{"A", base}, {"B", base}});
  // A gemv case above the family's gemv rows (ops::gemvPreferredRows: on sm_90a M > 2, or M > 1
  // with a column-major A, where the sm90 tensor cores are picked): gemv's best-ranked config,
  // forced (its rows aligned to 16 bytes here: an offset view's pick is gemv already).
  if (strategy == "gemv" && Config::parse(pick.config).strategy != "gemv")
    for (const ops::RankedSchedule& r : ops::rankedSchedules(*prog->body().front(), target, dims))
      if (r.config.strategy == "gemv") {
        pick.config = r.config.str();
        break;
      }
  SCOPED_TRACE(pick.config);
  if (!strategy.empty()) EXPECT_EQ(Config::parse(pick.config).strategy, strategy);
  if (split) EXPECT_EQ(Config::parse(pick.config).splitK > 1, *split);
  if (alignB) EXPECT_EQ(Config::parse(pick.config).alignB, alignB);
  ir::DiagnosticEngine diag;
  auto kernel = Kernel::build(*prog, target, pick.config, diag);
  ASSERT_TRUE(kernel) << diag.str();
  bench::poisonBf16(dC, nullptr);
  kernel->launch(ctx, nullptr, {pa, pb, uint64_t(dC.ptr)}, {}, dims);
  bench::check(cudaDeviceSynchronize(), "kernel");
  std::vector<uint16_t> got(static_cast<size_t>(cElems));
  bench::check(cudaMemcpy(got.data(), dC.ptr, dC.bytes, cudaMemcpyDeviceToHost), "copy C");
  // Launched again (a split kernel on the workspace the first launch left, its flags zero): the same
  // bits, whichever blocks finished first.
  bench::poisonBf16(dC, nullptr);
  kernel->launch(ctx, nullptr, {pa, pb, uint64_t(dC.ptr)}, {}, dims);
  bench::check(cudaDeviceSynchronize(), "kernel, again");
  std::vector<uint16_t> again(got.size());
  bench::check(cudaMemcpy(again.data(), dC.ptr, dC.bytes, cudaMemcpyDeviceToHost), "copy C again");
  EXPECT_TRUE(again == got) << "a second launch gave different bits";
  // The fp64 reference, indexing the buffers by the layouts; the matrix part of C compared.
  auto at = [](const std::vector<uint16_t>& v, int64_t i) { return double(bf16BitsToFloat(v[size_t(i)])); };
  std::vector<double> ref(size_t(c.M) * c.N);
  std::vector<uint16_t> out(ref.size());
  size_t gapsWritten = 0;
  for (int64_t m = 0; m < c.M; ++m) {
    for (int64_t n = 0; n < c.N; ++n) {
      double s = 0;
      for (int64_t k = 0; k < c.K; ++k)
        s += at(A, c.offset + (c.aCol ? m + k * lda : m * lda + k)) * at(B, c.offset + (c.bKMajor ? k + n * ldb : k * ldb + n));
      ref[size_t(m * c.N + n)] = s;
      out[size_t(m * c.N + n)] = got[size_t(m * ldc + n)];
    }
    for (int64_t n = c.N; n < ldc; ++n) gapsWritten += got[size_t(m * ldc + n)] != 0x7f7f;
  }
  EXPECT_EQ(gapsWritten, 0u) << "the kernel wrote into C's gaps";
  testing::OutputCheck check = testing::checkOutput(out, ref, testing::kGemmRel, testing::kGemmAbsOfRms, bf16BitsToFloat);
  EXPECT_EQ(check.nonFinite, 0u) << "elements left unwritten (poison) or not finite";
  EXPECT_EQ(check.outOfBound, 0u) << check.str(out.size());
  EXPECT_LT(check.relFrobenius, 8e-3);
  bench::GemmLayout l{c.aCol, c.bKMajor, lda, ldb, ldc};
  bench::cublasGemmLayout(handle, c.M, c.N, c.K, reinterpret_cast<void*>(pa), reinterpret_cast<void*>(pb), dR.ptr, l,
                          nullptr, bench::Float16::BF16);
  bench::check(cudaDeviceSynchronize(), "cuBLAS");
  std::vector<uint16_t> r(static_cast<size_t>(cElems)), rm(out.size());
  bench::check(cudaMemcpy(r.data(), dR.ptr, dR.bytes, cudaMemcpyDeviceToHost), "copy cuBLAS");
  for (int64_t m = 0; m < c.M; ++m)
    for (int64_t n = 0; n < c.N; ++n) rm[size_t(m * c.N + n)] = r[size_t(m * ldc + n)];
  EXPECT_LT(bench::compareBf16(out, rm).relFrobenius, 1e-2) << "differs from cuBLAS";
}

std::vector<Case> cases(bool small) {
  struct Shape {
    int M, N, K;
  };
  // Aligned rows, odd N (a vocabulary-like size), odd K, odd everything, GEMV-like (the small set's
  // 1 x 512 x 8192: gemv with K split across blocks, its workspace under the sanitizer).
  const std::vector<Shape> shapes = small ? std::vector<Shape>{{64, 33, 40}, {1, 129, 77}, {1, 512, 8192}}
                                          : std::vector<Shape>{{256, 384, 512}, {200, 1001, 320}, {130, 256, 333},
                                                               {97, 211, 131}, {1, 4099, 1027}, {16, 3000, 2048}};
  std::vector<Case> out;
  for (const Shape& s : shapes)
    for (int layout = 0; layout < 4; ++layout)
      for (int view = 0; view < (small ? 2 : 3); ++view) {
        bool aCol = layout & 2, bK = layout & 1;
        int pad = view == 0 ? 0 : view == 1 ? 8 : 3;
        out.push_back({s.M, s.N, s.K, aCol, bK, pad, view == 2 ? 1 : 0, view == 1});
      }
  return out;
}

class GemmLayoutsGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!testing::needHopper(&why)) GTEST_SKIP() << "no Hopper GPU: " << why;
  }
  void runAll(bool small) {
    runtime::Context ctx = runtime::Context::primary(*runtime::Driver::get());
    cublasHandle_t handle;
    bench::check(cublasCreate(&handle), "cublasCreate");
    for (const Case& c : cases(small)) run(c, handle, ctx);
    cublasDestroy(handle);
  }
};

TEST_F(GemmLayoutsGpu, EveryLayoutAndShapeClassMatchesReferenceAndCublas) { runAll(false); }

// The gemv strategy (docs/gemv-strategy.md), the family's pick for few rows (M <= 2 on sm_90a, M = 1
// with a column-major A; up to 8 where no sm90 variant runs the problem, e.g. the offset views):
// M in {1, 2, 7, 16}, gemv forced where the family picks the tensor cores (7; 16, gemv's largest,
// runs the family's tensor-core pick), every layout, odd N and K, leading dimensions past the rows
// and at an unaligned offset, against fp64 and cuBLAS.
TEST_F(GemmLayoutsGpu, GemvSmallMInEveryLayout) {
  runtime::Context ctx = runtime::Context::primary(*runtime::Driver::get());
  cublasHandle_t handle;
  bench::check(cublasCreate(&handle), "cublasCreate");
  struct Shape {
    int N, K;
  };
  for (int m : {1, 2, 7, 16})
    for (Shape s : {Shape{4096, 512}, Shape{1001, 777}, Shape{8191, 520}})
      for (int layout = 0; layout < 4; ++layout) {
        if (s.N == 8191 && m != 1) continue;  // the long odd row at M = 1 only (the fp64 reference's time)
        for (int view = 0; view < 3; ++view) {
          bool aCol = layout & 2, bK = layout & 1;
          int pad = view == 0 ? 0 : view == 1 ? 8 : 3;
          run({m, s.N, s.K, aCol, bK, pad, view == 2 ? 1 : 0, view == 1}, handle, ctx, m <= 8 ? "gemv" : "");
        }
      }
  cublasDestroy(handle);
}

// A column-major A (TN, TT) under gemv loads A(m0 .. m0 + bm, k) along M, as wide as A's rows
// (M long, or lda) are aligned (docs/gemv-strategy.md, "A column-major A"): M = 2, 4, 6, 8, 16 dense
// (4-, 8-, 4-, 16-, 16-byte loads; at 4 and 6 the block's last rows a load masked off), with lda
// 8 past the rows and at an element offset (element loads), N and K aligned and odd, gemv forced
// where the family picks the tensor cores, against fp64 and cuBLAS, twice each.
TEST_F(GemmLayoutsGpu, GemvColumnMajorALoadsAlongM) {
  runtime::Context ctx = runtime::Context::primary(*runtime::Driver::get());
  cublasHandle_t handle;
  bench::check(cublasCreate(&handle), "cublasCreate");
  struct Shape {
    int N, K;
  };
  for (int m : {2, 4, 6, 8, 16})
    for (Shape s : {Shape{4096, 1024}, Shape{1001, 777}})
      for (bool bK : {false, true})
        for (int view = 0; view < 3; ++view) {
          int pad = view == 0 ? 0 : view == 1 ? 8 : 3;
          run({m, s.N, s.K, true, bK, pad, view == 2 ? 1 : 0, false}, handle, ctx, "gemv");
        }
  cublasDestroy(handle);
}

// gemv's split of K across blocks (split_k, docs/gemv-strategy.md "Split-K"), which the family
// picks where the block tiles alone make under three blocks per SM: M = 1 and 8 at 4096 x 4096 (128
// tiles, K in 3 slices; M = 8 forced: the family picks the tensor cores there on sm_90a), odd N and K, a K not a whole number of slices' steps, every layout and
// view, against fp64 and cuBLAS, each launched twice for the same bits.
TEST_F(GemmLayoutsGpu, GemvSplitKInEveryLayout) {
  runtime::Context ctx = runtime::Context::primary(*runtime::Driver::get());
  cublasHandle_t handle;
  bench::check(cublasCreate(&handle), "cublasCreate");
  struct Shape {
    int M, N, K;
  };
  for (Shape s : {Shape{1, 4096, 4096}, Shape{8, 4096, 4096}, Shape{3, 1000, 6001}, Shape{1, 2048, 4104},
                  Shape{1, 4096, 14336}})
    for (int layout = 0; layout < 4; ++layout)
      for (int view = 0; view < 3; ++view) {
        bool aCol = layout & 2, bK = layout & 1;
        int pad = view == 0 ? 0 : view == 1 ? 8 : 3;
        run({s.M, s.N, s.K, aCol, bK, pad, view == 2 ? 1 : 0, view == 1}, handle, ctx, "gemv", true);
      }
  cublasDestroy(handle);
}

// An odd N over a row-major B whose leading dimension keeps its rows 16-byte aligned (a padded
// buffer): the family's gemv pick keeps 16-byte loads (align_b=16) and the block over N's end loads
// its columns by elements (docs/gemv-strategy.md, "An odd N"), split (1 x 1001 x 512) and unsplit
// (3 x 1001 x 512, 1 x 50257 x 4096), M = 1 and 3, A row- and column-major, against fp64 and cuBLAS, twice each.
TEST_F(GemmLayoutsGpu, GemvOddNOverAnAlignedStridedB) {
  runtime::Context ctx = runtime::Context::primary(*runtime::Driver::get());
  cublasHandle_t handle;
  bench::check(cublasCreate(&handle), "cublasCreate");
  struct Shape {
    int M, N, K;
    std::optional<bool> split;
  };
  // M = 3 (bm = 4) takes the rule of about three blocks per SM: 8-column tiles, one K step, unsplit.
  for (Shape s : {Shape{1, 1001, 512, true}, Shape{3, 1001, 512, false}, Shape{1, 50257, 4096, false}})
    for (bool aCol : {false, true}) {
      const int pad = (8 - s.N % 8) % 8 + 8;  // ldb = N + pad: a multiple of 8 elements
      run({s.M, s.N, s.K, aCol, false, pad, 0, false}, handle, ctx, "gemv", s.split, 16);
    }
  cublasDestroy(handle);
}

// compute-sanitizer --tool memcheck (and racecheck) build/tests/kiln_gpu_tests --gtest_filter='GemmLayoutsGpu.Sanitized*'
TEST_F(GemmLayoutsGpu, SanitizedSubset) { runAll(true); }

TEST_F(GemmLayoutsGpu, BadStridesAreRefusedAtLaunchNamingTheArgument) {
  runtime::Context ctx = runtime::Context::primary(*runtime::Driver::get());
  Case c{64, 64, 64, false, false, 8, 0, false};
  auto prog = program(c);
  ir::DiagnosticEngine diag;
  auto kernel = Kernel::build(*prog, Target::byName("sm_90a").value(), "strategy=sm80_multistage bm=64 bn=64", diag);
  ASSERT_TRUE(kernel) << diag.str();
  bench::DeviceBuffer buf(1 << 20);
  uint64_t p = uint64_t(buf.ptr);
  try {
    kernel->launch(ctx, nullptr, {p, p + 65536, p + 131072}, {},
                   {{"M", 64}, {"N", 64}, {"K", 64}, {"lda", 60}, {"ldb", 72}, {"ldc", 64}});
    ADD_FAILURE() << "a leading dimension shorter than its row was launched";
  } catch (const ir::Error& e) {
    EXPECT_NE(std::string(e.what()).find("argument 'A': stride 'lda' = 60 of dim 0 (M) is less than the 64 elements"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace kiln
