// validateLaunch: strides (innermost, overlap, row alignment) and output aliasing.
#include <gtest/gtest.h>

#include "kiln/runtime/launch_args.h"
#include "tests/unit/runtime/launch_args_fixture.h"

namespace kiln::runtime {
namespace {

using namespace testing;

TEST(LaunchArgsLayout, ExplicitContiguousAndPaddedStridesPass) {
  auto args = gemmArgs();
  args.tensors[0].strides = {32, 1};
  EXPECT_EQ(check(gemmSignature(), args), Messages{});
  args.tensors[0].strides = {40, 1};  // 80-byte rows: padded, still 16-byte aligned
  EXPECT_EQ(check(gemmSignature(), args), Messages{});
}

TEST(LaunchArgsLayout, StrideCountMustMatchRank) {
  auto args = gemmArgs();
  args.tensors[0].strides = {32};
  EXPECT_EQ(check(gemmSignature(), args),
            Messages{"argument 'A': 1 stride given for a rank-2 tensor"});
}

TEST(LaunchArgsLayout, InnermostStrideMustBeOne) {
  auto args = gemmArgs();
  args.tensors[0].strides = {64, 2};
  EXPECT_EQ(check(gemmSignature(), args),
            Messages{"argument 'A': stride of dim 1 (K), the innermost, is 2 but must be 1; the "
                     "kernel reads it contiguously: pass a contiguous tensor"});
}

TEST(LaunchArgsLayout, TransposedViewGetsOneMessageWithAHint) {
  auto args = gemmArgs();
  args.tensors[0].strides = {1, 128};  // column-major storage of a row-major parameter
  EXPECT_EQ(check(gemmSignature(), args),
            Messages{"argument 'A': stride of dim 1 (K), the innermost, is 128 but must be 1; the "
                     "kernel reads it contiguously: pass a contiguous tensor (dim 0 (M) has stride "
                     "1: is it transposed?)"});
}

TEST(LaunchArgsLayout, OrderPicksTheInnermostDim) {
  auto sig = gemmSignature();
  sig.tensors[1].order = {0, 1};  // B stored column-major: K fastest
  auto args = gemmArgs();
  EXPECT_EQ(check(sig, args), Messages{});  // contiguous in that order
  args.tensors[1].strides = {1, 32};
  EXPECT_EQ(check(sig, args), Messages{});
  args.tensors[1].strides = {64, 1};
  EXPECT_EQ(check(sig, args),
            Messages{"argument 'B': stride of dim 0 (K), the innermost, is 64 but must be 1; the "
                     "kernel reads it contiguously: pass a contiguous tensor (dim 1 (N) has stride "
                     "1: is it transposed?)"});
}

TEST(LaunchArgsLayout, OverlappingRows) {
  auto args = gemmArgs();
  args.tensors[0].strides = {16, 1};
  EXPECT_EQ(check(gemmSignature(), args),
            Messages{"argument 'A': stride of dim 0 (M) is 16, but the dims inside it span 32 "
                     "elements; its rows would overlap"});
}

TEST(LaunchArgsLayout, RowsMustStartAligned) {
  auto sig = gemmSignature();
  sig.dimMultipleOf.clear();
  auto args = gemmArgs();
  args.tensors[0].strides = {36, 1};
  EXPECT_EQ(
      check(sig, args),
      Messages{"argument 'A': stride of dim 0 (M) is 36 elements = 72 bytes, not a multiple of "
               "16 bytes; every row must start 16-byte aligned (TMA and 16-byte vector "
               "loads): pad rows to a multiple of 8 elements"});
}

TEST(LaunchArgsLayout, BatchStrideMustCoverTheMatrix) {
  KernelSignature sig;
  sig.dims = {"G", "M", "K"};
  sig.tensors = {
      {"X", ScalarType::F32, {Extent::of("G"), Extent::of("M"), Extent::of("K")}, {}, 16, false}};
  LaunchArgs args;
  args.dims = {{"G", 4}, {"M", 8}, {"K", 16}};
  args.tensors = {{0x100000, ScalarType::F32, {4, 8, 16}, {128, 16, 1}}};
  EXPECT_EQ(check(sig, args), Messages{});
  args.tensors[0].strides = {64, 16, 1};
  EXPECT_EQ(check(sig, args),
            Messages{"argument 'X': stride of dim 0 (G) is 64, but the dims inside it span 128 "
                     "elements; its rows would overlap"});
}

// A dim of extent 1 is only ever indexed at 0: its stride is irrelevant (PyTorch gives such dims
// arbitrary strides after unsqueeze or slicing).
TEST(LaunchArgsLayout, StridesOfUnitDimsAreFree) {
  auto args = gemmArgs();
  args.dims["M"] = 1;
  args.tensors[0].shape = {1, 32};
  args.tensors[0].strides = {7, 1};
  args.tensors[3].shape = {1, 64};
  args.tensors[3].strides = {3, 1};
  EXPECT_EQ(check(gemmSignature(), args), Messages{});
}

TEST(LaunchArgsLayout, HugeStridesAreReportedNotOverflowed) {
  auto args = gemmArgs();
  args.tensors[0].strides = {int64_t(1) << 62, 1};
  EXPECT_EQ(check(gemmSignature(), args),
            Messages{"argument 'A': shape and strides address more than 2^63 elements"});
}

TEST(LaunchArgsLayout, OutputOverlappingAnInput) {
  auto args = gemmArgs();
  args.tensors[3].ptr = 0x11000;  // inside A's [0x10000, 0x12000)
  EXPECT_EQ(check(gemmSignature(), args),
            Messages{"argument 'C': output overlaps input 'A' (bytes [0x11000, 0x15000) and "
                     "[0x10000, 0x12000)); the kernel would read 'A' while writing 'C': use a "
                     "separate output buffer"});
}

TEST(LaunchArgsLayout, AdjacentTensorsDoNotOverlap) {
  auto args = gemmArgs();
  args.tensors[3].ptr = 0x12000;  // right after A
  EXPECT_EQ(check(gemmSignature(), args), Messages{});
}

TEST(LaunchArgsLayout, OverlapUsesTheStridedExtent) {
  auto args = gemmArgs();
  args.tensors[0].strides = {40, 1};  // A now spans (127 * 40 + 32) * 2 = 10224 bytes = 0x27f0
  args.tensors[3].ptr = 0x127f0;
  EXPECT_EQ(check(gemmSignature(), args), Messages{});
  args.tensors[3].ptr = 0x127e0;
  EXPECT_EQ(check(gemmSignature(), args),
            Messages{"argument 'C': output overlaps input 'A' (bytes [0x127e0, 0x167e0) and "
                     "[0x10000, 0x127f0)); the kernel would read 'A' while writing 'C': use a "
                     "separate output buffer"});
}

TEST(LaunchArgsLayout, TwoOutputsOverlappingAreReportedOnce) {
  auto sig = gemmSignature();
  sig.tensors.push_back({"D", ScalarType::BF16, {Extent::of("M"), Extent::of("N")}, {}, 16, true});
  auto args = gemmArgs();
  args.tensors.push_back({0x40000, ScalarType::BF16, {128, 64}, {}});
  EXPECT_EQ(check(sig, args),
            Messages{"argument 'C': output overlaps output 'D' (bytes [0x40000, 0x44000) and "
                     "[0x40000, 0x44000)); both are written, so the result would depend on timing: "
                     "use separate buffers"});
}

TEST(LaunchArgsLayout, InputsMayShareMemory) {
  auto args = gemmArgs();
  args.dims["N"] = 32;
  args.tensors[1] = {0x10000, ScalarType::BF16, {32, 32}, {}};  // B is a view into A: fine
  args.tensors[2].shape = {32};
  args.tensors[3].shape = {128, 32};
  EXPECT_EQ(check(gemmSignature(), args), Messages{});
}

TEST(LaunchArgsLayout, DimOrderAndContiguousStrides) {
  TensorParam p{"T", ScalarType::F32, {Extent::of(2), Extent::of(3), Extent::of(4)}, {}, 16, false};
  EXPECT_EQ(dimOrder(p), (std::vector<int64_t>{2, 1, 0}));
  EXPECT_EQ(contiguousStrides({2, 3, 4}, {2, 1, 0}), (std::vector<int64_t>{12, 4, 1}));
  p.order = {0, 2, 1};
  EXPECT_EQ(dimOrder(p), (std::vector<int64_t>{0, 2, 1}));
  EXPECT_EQ(contiguousStrides({2, 3, 4}, {0, 2, 1}), (std::vector<int64_t>{1, 8, 2}));
}

}  // namespace
}  // namespace kiln::runtime
