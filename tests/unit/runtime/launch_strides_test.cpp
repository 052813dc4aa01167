// validateLaunch on strided parameters (TensorParam::strides, runtime/launch_strides.h): the stride
// dims come from the launch's dims, and each rule names the argument and the stride.
#include <gtest/gtest.h>

#include "kiln/runtime/launch_args.h"
#include "tests/unit/runtime/launch_args_fixture.h"

namespace kiln::runtime {
namespace {

using namespace testing;

// C[M, N] = A[M, K] B[K, N] with A row-major of leading dimension lda, B column-major (K
// contiguous) of leading dimension ldb, C row-major of leading dimension ldc.
KernelSignature stridedSignature() {
  KernelSignature s;
  s.dims = {"M", "N", "K", "lda", "ldb", "ldc"};
  s.tensors = {
      {"A", ScalarType::BF16, {Extent::of("M"), Extent::of("K")}, {}, 16, false, {Extent::of("lda"), Extent::of(1)}},
      {"B", ScalarType::BF16, {Extent::of("K"), Extent::of("N")}, {}, 16, false, {Extent::of(1), Extent::of("ldb")}},
      {"C", ScalarType::BF16, {Extent::of("M"), Extent::of("N")}, {}, 4, true, {Extent::of("ldc"), Extent::of(1)}},
  };
  return s;
}

// M = 100, N = 60, K = 30 in buffers with padded rows: A 100 x 40, B 60 x 32, C 100 x 64.
LaunchArgs stridedArgs() {
  LaunchArgs a;
  a.dims = {{"M", 100}, {"N", 60}, {"K", 30}, {"lda", 40}, {"ldb", 32}, {"ldc", 64}};
  a.tensors = {
      {0x100000, ScalarType::BF16, {100, 30}, {}},
      {0x200000, ScalarType::BF16, {30, 60}, {}},
      {0x300000, ScalarType::BF16, {100, 60}, {}},
  };
  return a;
}

TEST(LaunchStrides, PaddedLeadingDimensionsPass) {
  EXPECT_EQ(check(stridedSignature(), stridedArgs()), Messages{});
  auto args = stridedArgs();
  args.tensors[0].strides = {40, 1};  // the strides a caller (a torch view) gives must agree
  EXPECT_EQ(check(stridedSignature(), args), Messages{});
}

TEST(LaunchStrides, GivenStridesMustBeTheDims) {
  auto args = stridedArgs();
  args.tensors[0].strides = {48, 1};
  EXPECT_EQ(check(stridedSignature(), args),
            Messages{"argument 'A': strides are [48, 1] but the kernel's are [40, 1] at these dims ([lda, 1])"});
}

TEST(LaunchStrides, LeadingDimensionShorterThanTheRow) {
  auto args = stridedArgs();
  args.dims["lda"] = 24;
  args.dims["ldb"] = 16;
  EXPECT_EQ(check(stridedSignature(), args),
            (Messages{"argument 'A': stride 'lda' = 24 of dim 0 (M) is less than the 30 elements of dim 1 it steps "
                      "over, so its rows would overlap; it must be at least 30 (a leading dimension is at least the "
                      "row's length)",
                      "argument 'B': stride 'ldb' = 16 of dim 1 (N) is less than the 30 elements of dim 0 it steps "
                      "over, so its rows would overlap; it must be at least 30 (a leading dimension is at least the "
                      "row's length)"}));
}

TEST(LaunchStrides, RowsMustStartAligned) {
  auto args = stridedArgs();
  args.dims["lda"] = 44;  // 88-byte rows: 8-byte aligned, not 16
  args.dims["ldc"] = 61;  // odd: the pair stores need 4-byte rows
  EXPECT_EQ(check(stridedSignature(), args),
            (Messages{"argument 'A': stride 'lda' = 44 of dim 0 (M) elements is 88 bytes, not a multiple of 16: the "
                      "kernel assumes every row starts 16-byte aligned; pad the rows to a multiple of 8 elements, or "
                      "use a kernel compiled for less alignment",
                      "argument 'C': stride 'ldc' = 61 of dim 0 (M) elements is 122 bytes, not a multiple of 4: the "
                      "kernel assumes every row starts 4-byte aligned; pad the rows to a multiple of 2 elements, or "
                      "use a kernel compiled for less alignment"}));
}

TEST(LaunchStrides, AnOutputMayNotShareStorage) {
  KernelSignature sig;
  sig.dims = {"Bt", "M", "N", "sc"};
  sig.tensors = {{"C", ScalarType::F32, {Extent::of("Bt"), Extent::of("M"), Extent::of("N")}, {}, 4, true,
                  {Extent::of("sc"), Extent::of("N"), Extent::of(1)}}};
  LaunchArgs args;
  args.dims = {{"Bt", 3}, {"M", 8}, {"N", 16}, {"sc", 128}};
  args.tensors = {{0x100000, ScalarType::F32, {3, 8, 16}, {}}};
  EXPECT_EQ(check(sig, args), Messages{});
  args.dims["sc"] = 64;  // batches 64 elements apart, each 128 long
  EXPECT_EQ(check(sig, args),
            Messages{"argument 'C': stride 'sc' = 64 of dim 0 (Bt) makes two elements of the output share storage "
                     "(the dims inside it span 128 elements); an output is written once per element: give it its "
                     "own storage"});
}

TEST(LaunchStrides, AnInputMayRepeatAMatrix) {
  // One B for every batch (a constant batch stride 0): inputs may share storage.
  KernelSignature sig;
  sig.dims = {"Bt", "K", "N"};
  sig.tensors = {{"B", ScalarType::BF16, {Extent::of("Bt"), Extent::of("K"), Extent::of("N")}, {}, 16, false,
                  {Extent::of(0), Extent::of("N"), Extent::of(1)}}};
  LaunchArgs args;
  args.dims = {{"Bt", 5}, {"K", 8}, {"N", 16}};
  args.tensors = {{0x100000, ScalarType::BF16, {5, 8, 16}, {}}};
  EXPECT_EQ(check(sig, args), Messages{});
  // Its bytes are one matrix's: an output right after it does not overlap.
  EXPECT_EQ(tensorByteSpans(sig, args)[0].end, 0x100000u + 8 * 16 * 2);
}

TEST(LaunchStrides, AMissingStrideDimIsReportedOnce) {
  auto args = stridedArgs();
  args.dims.erase("ldb");
  EXPECT_EQ(check(stridedSignature(), args),
            Messages{"dimension 'ldb' was not given; the kernel needs M, N, K, lda, ldb, ldc"});
}

TEST(LaunchStrides, ParamStridesEvaluateTheDims) {
  EXPECT_EQ(paramStrides(stridedSignature().tensors[1], stridedArgs().dims), (std::vector<int64_t>{1, 32}));
  EXPECT_EQ(paramStrides(gemmSignature().tensors[0], gemmArgs().dims), std::vector<int64_t>{});
}

}  // namespace
}  // namespace kiln::runtime
