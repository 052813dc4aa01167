// validateLaunch: counts, dims, pointers, dtypes, ranks, extents, scalars.
// Strides and aliasing are in launch_args_layout_test.cpp.
#include "kiln/runtime/launch_args.h"

#include <gtest/gtest.h>

#include "tests/unit/runtime/launch_args_fixture.h"

namespace kiln::runtime {
namespace {

using namespace testing;

TEST(LaunchArgs, ValidGemmLaunchPasses) {
  EXPECT_EQ(check(gemmSignature(), gemmArgs()), Messages{});
}

TEST(LaunchArgs, WrongTensorCountIsReportedAlone) {
  auto args = gemmArgs();
  args.tensors.pop_back();
  args.tensors[0].ptr = 0;  // not reported: with a missing argument, positions mean nothing
  EXPECT_EQ(check(gemmSignature(), args),
            Messages{"kernel expects 4 tensor arguments (A, B, bias, C) but 3 were given"});
}

TEST(LaunchArgs, WrongScalarCount) {
  auto args = gemmArgs();
  args.scalars = {1.0, 2.0};
  EXPECT_EQ(check(gemmSignature(), args),
            Messages{"kernel expects 1 scalar argument (alpha) but 2 were given"});
  auto sig = gemmSignature();
  sig.scalars.clear();
  args.scalars = {1.0};
  EXPECT_EQ(check(sig, args), Messages{"kernel expects 0 scalar arguments but 1 was given"});
}

TEST(LaunchArgs, MissingDim) {
  auto args = gemmArgs();
  args.dims.erase("K");
  // The tensors using K cannot be checked against it, so only the dim is reported.
  EXPECT_EQ(check(gemmSignature(), args),
            Messages{"dimension 'K' was not given; the kernel needs M, N, K"});
}

TEST(LaunchArgs, UnknownDim) {
  auto args = gemmArgs();
  args.dims["Q"] = 4;
  EXPECT_EQ(check(gemmSignature(), args),
            Messages{"unknown dimension 'Q'; the kernel's dimensions are M, N, K"});
  KernelSignature none;
  LaunchArgs onlyDim;
  onlyDim.dims["Q"] = 4;
  EXPECT_EQ(check(none, onlyDim), Messages{"unknown dimension 'Q'; the kernel has no dimensions"});
}

TEST(LaunchArgs, ZeroDimIsAnErrorWithAHint) {
  auto args = gemmArgs();
  args.dims["M"] = 0;
  args.tensors[0].shape = {0, 32};
  args.tensors[3].shape = {0, 64};
  EXPECT_EQ(check(gemmSignature(), args),
            Messages{"dimension 'M' is 0; dimensions must be positive (skip the launch when a "
                     "dimension is 0: there is nothing to compute)"});
}

TEST(LaunchArgs, NegativeDim) {
  auto args = gemmArgs();
  args.dims["M"] = -3;
  EXPECT_EQ(check(gemmSignature(), args),
            Messages{"dimension 'M' is -3; dimensions must be positive"});
}

TEST(LaunchArgs, DimNotAMultiple) {
  auto args = gemmArgs();
  args.dims["K"] = 36;
  args.tensors[0].shape = {128, 36};
  args.tensors[1].shape = {36, 64};
  // A's rows are 72 bytes: the contiguous-layout row rule fires as well, naming the tensor.
  EXPECT_EQ(check(gemmSignature(), args),
            (Messages{"dimension 'K' is 36, not a multiple of 8 (the kernel was compiled for K % 8 "
                      "== 0); pad K to 40",
                      "argument 'A': stride of dim 0 (M) is 36 elements = 72 bytes (contiguous "
                      "layout), not a multiple of 16 bytes; every row must start 16-byte aligned "
                      "(TMA and 16-byte vector loads): pad rows to a multiple of 8 elements"}));
}

TEST(LaunchArgs, NullPointer) {
  auto args = gemmArgs();
  args.tensors[1].ptr = 0;
  EXPECT_EQ(check(gemmSignature(), args), Messages{"argument 'B': pointer is null"});
}

TEST(LaunchArgs, MisalignedPointer) {
  auto args = gemmArgs();
  args.tensors[0].ptr = 0x1002;
  EXPECT_EQ(
      check(gemmSignature(), args),
      Messages{"argument 'A': pointer 0x1002 is not aligned to 16 bytes (required for 16-byte "
               "vector loads); allocate with cudaMalloc or pad the offset"});
}

TEST(LaunchArgs, AlignmentFollowsTheParameter) {
  auto sig = gemmSignature();
  sig.tensors[2].alignBytes = 4;  // bias read with scalar loads
  auto args = gemmArgs();
  args.tensors[2].ptr = 0x30004;
  EXPECT_EQ(check(sig, args), Messages{});
  args.tensors[2].ptr = 0x30002;
  EXPECT_EQ(check(sig, args),
            Messages{"argument 'bias': pointer 0x30002 is not aligned to 4 bytes (required for "
                     "4-byte vector loads); allocate with cudaMalloc or pad the offset"});
}

TEST(LaunchArgs, WrongDtype) {
  auto args = gemmArgs();
  args.tensors[0].dtype = ScalarType::F16;
  EXPECT_EQ(check(gemmSignature(), args),
            Messages{"argument 'A': dtype is f16 but the kernel was compiled for bf16"});
}

TEST(LaunchArgs, WrongRank) {
  auto args = gemmArgs();
  args.tensors[0].shape = {2, 64, 32};
  EXPECT_EQ(
      check(gemmSignature(), args),
      Messages{
          "argument 'A': rank is 3 (shape [2, 64, 32]) but the kernel expects rank 2 ([M, K])"});
}

TEST(LaunchArgs, ExtentDisagreesWithDim) {
  auto args = gemmArgs();
  args.tensors[3].shape = {100, 64};
  EXPECT_EQ(check(gemmSignature(), args),
            Messages{"argument 'C': extent 0 is 100 but dimension 'M' is 128 (the kernel expects "
                     "shape [M, N])"});
}

TEST(LaunchArgs, ExtentDisagreesWithConstant) {
  auto sig = gemmSignature();
  sig.tensors[2].shape = {Extent::of(64)};
  auto args = gemmArgs();
  args.tensors[2].shape = {48};
  EXPECT_EQ(check(sig, args),
            Messages{"argument 'bias': extent 0 is 48 but the kernel expects 64 (shape [64])"});
}

// Grouped GEMM: the group count G is a dim like any other.
TEST(LaunchArgs, GroupCountMustMatchG) {
  KernelSignature sig;
  sig.dims = {"G", "M", "N", "K"};
  sig.tensors = {
      {"A", ScalarType::BF16, {Extent::of("M"), Extent::of("K")}, {}, 16, false},
      {"B", ScalarType::BF16, {Extent::of("G"), Extent::of("K"), Extent::of("N")}, {}, 16, false},
      {"offsets", ScalarType::I32, {Extent::of("G")}, {}, 4, false}};
  LaunchArgs args;
  args.dims = {{"G", 8}, {"M", 256}, {"N", 64}, {"K", 32}};
  args.tensors = {{0x100000, ScalarType::BF16, {256, 32}, {}},
                  {0x200000, ScalarType::BF16, {8, 32, 64}, {}},
                  {0x300000, ScalarType::I32, {8}, {}}};
  EXPECT_EQ(check(sig, args), Messages{});
  args.tensors[1].shape = {4, 32, 64};
  args.tensors[2].shape = {7};
  EXPECT_EQ(
      check(sig, args),
      (Messages{
          "argument 'B': extent 0 is 4 but dimension 'G' is 8 (the kernel expects shape [G, K, N])",
          "argument 'offsets': extent 0 is 7 but dimension 'G' is 8 (the kernel expects shape "
          "[G])"}));
}

TEST(LaunchArgs, SeveralViolationsGiveOneDiagnosticEach) {
  auto args = gemmArgs();
  args.tensors[0].ptr = 0;
  args.tensors[1].dtype = ScalarType::F32;
  args.dims["N"] = 60;
  args.tensors[1].shape = {32, 60};
  args.tensors[2].shape = {60};
  args.tensors[3].shape = {128, 60};
  auto m = check(gemmSignature(), args);
  ASSERT_EQ(m.size(), 5u) << ::testing::PrintToString(m);
  EXPECT_EQ(m[0],
            "dimension 'N' is 60, not a multiple of 8 (the kernel was compiled for N % 8 == 0); "
            "pad N to 64");
  EXPECT_EQ(m[1], "argument 'A': pointer is null");
  EXPECT_EQ(m[2], "argument 'B': dtype is f32 but the kernel was compiled for bf16");
  // B's and C's 120-byte rows break the row rule too; bias (rank 1) has no rows.
  EXPECT_EQ(
      m[3].rfind("argument 'B': stride of dim 0 (K) is 60 elements = 120 bytes (contiguous layout)",
                 0),
      0u)
      << m[3];
  EXPECT_EQ(
      m[4].rfind("argument 'C': stride of dim 0 (M) is 60 elements = 120 bytes (contiguous layout)",
                 0),
      0u)
      << m[4];
}

TEST(LaunchArgs, IntegerScalarMustBeAnIntegerInRange) {
  KernelSignature sig;
  sig.scalars = {{"k", ScalarType::I32}, {"flag", ScalarType::I1}, {"n", ScalarType::I64}};
  LaunchArgs args;
  args.scalars = {7, 1, -9223372036854775808.0};
  EXPECT_EQ(check(sig, args), Messages{});
  args.scalars = {1.5, 2, 9223372036854775808.0};
  EXPECT_EQ(check(sig, args),
            (Messages{"argument 'k': value 1.5 is not an integer, but the kernel takes i32",
                      "argument 'flag': value 2 is out of range for i1",
                      "argument 'n': value 9.223372036854776e+18 is out of range for i64"}));
  args.scalars = {2147483648.0, 0, 0};
  EXPECT_EQ(check(sig, args), Messages{"argument 'k': value 2147483648 is out of range for i32"});
}

TEST(LaunchArgs, FloatScalarsAcceptAnyValue) {
  auto args = gemmArgs();
  args.scalars = {std::numeric_limits<double>::infinity()};
  EXPECT_EQ(check(gemmSignature(), args), Messages{});
}

TEST(LaunchArgsDeathTest, InconsistentSignatureIsACompilerBug) {
  auto sig = gemmSignature();
  sig.tensors[0].shape = {Extent::of("M"), Extent::of("Z")};
  EXPECT_DEATH(check(sig, gemmArgs()), "tensor 'A' uses undeclared dim 'Z'");
  sig = gemmSignature();
  sig.tensors[0].order = {0, 0};
  EXPECT_DEATH(check(sig, gemmArgs()), "not a permutation");
  sig = gemmSignature();
  sig.dimMultipleOf["Z"] = 8;
  EXPECT_DEATH(check(sig, gemmArgs()), "dimMultipleOf names undeclared dim 'Z'");
}

}  // namespace
}  // namespace kiln::runtime

namespace kiln::runtime::testing {
namespace {

// Dims are packed as int32: one past INT32_MAX would wrap on the device.
TEST(LaunchArgs, DimsAreAtMostInt32Max) {
  auto args = gemmArgs();
  args.dims["M"] = 2147483647;
  args.tensors[0].shape[0] = args.tensors[3].shape[0] = 2147483647;
  args.tensors[3].ptr = uint64_t(1) << 44;  // C far past A's 128 GiB
  EXPECT_EQ(check(gemmSignature(), args), Messages{});
  args.dims["M"] = 2147483648;
  args.tensors[0].shape[0] = args.tensors[3].shape[0] = 2147483648;
  EXPECT_EQ(check(gemmSignature(), args),
            Messages{"dimension 'M' is 2147483648, over the limit of 2147483647 (the kernel takes its dims as "
                     "int32); split the problem along M"});
  EXPECT_EQ(packDim(2147483647).bits, 0x7fffffffu);
  EXPECT_EQ(packDim(2147483647).size, 4);
}

// Index scalars are .u32 parameters, so their range is int32's, not int64's.
TEST(LaunchArgs, IndexScalarsHaveTheRangeTheyArePackedIn) {
  KernelSignature sig;
  sig.scalars = {{"i", ScalarType::Index}};
  LaunchArgs args;
  args.scalars = {2147483647.0};
  EXPECT_EQ(check(sig, args), Messages{});
  args.scalars = {2147483648.0};
  EXPECT_EQ(check(sig, args), Messages{"argument 'i': value 2147483648 is out of range for index"});
}

TEST(LaunchArgs, NarrowFloatScalarsAreRefusedNotTruncated) {
  KernelSignature sig;
  sig.scalars = {{"s", ScalarType::BF16}};
  LaunchArgs args;
  args.scalars = {0.5};  // packed as the int32 0 before
  EXPECT_EQ(check(sig, args), Messages{"argument 's': the kernel takes a bf16 scalar, which cannot be passed as a "
                                       "kernel parameter; declare the scalar f32 and cast it inside the program"});
}

// Each scalar is packed as its PTX parameter declares it; an i64 was packed as an int32 before, so
// -1 arrived as 4294967295 and 2^40 as 0.
TEST(LaunchArgs, ScalarsArePackedByTheirType) {
  EXPECT_EQ(packScalar(ScalarType::I64, -1.0).bits, ~uint64_t(0));
  EXPECT_EQ(packScalar(ScalarType::I64, -1.0).size, 8);
  EXPECT_EQ(packScalar(ScalarType::I64, 1099511627776.0).bits, uint64_t(1) << 40);
  EXPECT_EQ(packScalar(ScalarType::I32, -2.0).bits, 0xfffffffeu);
  EXPECT_EQ(packScalar(ScalarType::I32, -2.0).size, 4);
  EXPECT_EQ(packScalar(ScalarType::F32, 1.5).bits, 0x3fc00000u);
  EXPECT_EQ(packScalar(ScalarType::F32, 1.5).size, 4);
  EXPECT_EQ(packScalar(ScalarType::I1, 1.0).bits, 1u);
}

PointerAttributes deviceAlloc(uint64_t start, uint64_t size, uint64_t ctx) {
  PointerAttributes a;
  a.status = PointerAttributes::Status::Known;
  a.context = ctx;
  a.rangeStart = start;
  a.rangeSize = size;
  return a;
}

Messages pointerCheck(ByteSpan span, const PointerAttributes& a, uint64_t ctx = 0xc0) {
  ir::DiagnosticEngine diag;
  bool ok = checkPointerAttributes("A", span, a, ctx, diag);
  EXPECT_EQ(ok, !diag.hadError());
  return messages(diag);
}

TEST(LaunchPointers, DeviceMemoryOfTheContextCoveringTheTensorPasses) {
  EXPECT_EQ(pointerCheck({0x10100, 0x10200}, deviceAlloc(0x10000, 0x200, 0xc0)), Messages{});
  // A driver that cannot answer (an old one, or the fake) checks nothing.
  EXPECT_EQ(pointerCheck({0x10100, 0x10200}, PointerAttributes{}), Messages{});
  PointerAttributes managed = deviceAlloc(0x10000, 0x200, 0);
  managed.managed = true;
  managed.memory = PointerAttributes::Memory::Unified;
  EXPECT_EQ(pointerCheck({0x10000, 0x10200}, managed), Messages{});
}

TEST(LaunchPointers, AHostPointerIsRefused) {
  PointerAttributes unknown;
  unknown.status = PointerAttributes::Status::NotCuda;
  EXPECT_EQ(pointerCheck({0x7ffd0000, 0x7ffd0100}, unknown),
            Messages{"argument 'A': pointer 0x7ffd0000 is not memory CUDA knows (a host pointer, or freed memory); "
                     "allocate the tensor on the device (cuMemAlloc, cudaMalloc, a CUDA tensor) and pass its device "
                     "pointer"});
  PointerAttributes pinned = deviceAlloc(0x7ffd0000, 0x1000, 0xc0);
  pinned.memory = PointerAttributes::Memory::Host;
  EXPECT_EQ(pointerCheck({0x7ffd0000, 0x7ffd0100}, pinned),
            Messages{"argument 'A': pointer 0x7ffd0000 is host memory, not device memory; copy the tensor to the "
                     "device first"});
}

TEST(LaunchPointers, AnotherContextsMemoryIsRefused) {
  EXPECT_EQ(pointerCheck({0x10000, 0x10100}, deviceAlloc(0x10000, 0x100, 0xd0)),
            Messages{"argument 'A': pointer 0x10000 was allocated in another CUDA context (0xd0) than the one the "
                     "kernel runs in (0xc0); allocate it on the kernel's device and context"});
}

TEST(LaunchPointers, AnAllocationShorterThanTheTensorIsRefused) {
  EXPECT_EQ(pointerCheck({0x10100, 0x10300}, deviceAlloc(0x10000, 0x200, 0xc0)),
            Messages{"argument 'A': the tensor covers bytes [0x10100, 0x10300), 512 bytes, but its allocation is "
                     "[0x10000, 0x10200), 512 bytes: it ends 256 bytes short; allocate at least 512 bytes from the "
                     "tensor's pointer"});
}

TEST(LaunchPointers, SpansFollowShapeStridesAndDtype) {
  auto sig = gemmSignature();
  auto args = gemmArgs();
  std::vector<ByteSpan> spans = tensorByteSpans(sig, args);
  ASSERT_EQ(spans.size(), 4u);
  EXPECT_EQ(spans[0].end - spans[0].begin, 128u * 32 * 2);  // A: bf16 [128, 32]
  EXPECT_EQ(spans[2].end - spans[2].begin, 64u * 4);        // bias: f32 [64]
  args.tensors[0].strides = {64, 1};  // rows padded to 64 elements: the last row ends at 127*64+32
  EXPECT_EQ(tensorByteSpans(sig, args)[0].end - 0x10000, (127u * 64 + 32) * 2);
}

}  // namespace
}  // namespace kiln::runtime::testing
