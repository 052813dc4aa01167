#include "kiln/runtime/tensor_map.h"

#include <gtest/gtest.h>

#include "tests/unit/runtime/fake/fake_driver.h"
#include "tests/unit/runtime/launch_args_fixture.h"

namespace kiln::runtime {
namespace {

using ir::ScalarType;
using testing::FakeDriver;
using testing::Messages;

// A row-major 256 x 128 bf16 matrix (256-byte rows) read in 64 x 64 boxes with the 128-byte
// swizzle: the usual sm_90 GEMM operand.
TensorMapDesc validDesc() {
  TensorMapDesc d;
  d.name = "A";
  d.dtype = ScalarType::BF16;
  d.globalAddress = 0x7f0000000000;
  d.globalDims = {128, 256};
  d.globalStrides = {256};
  d.boxDims = {64, 64};
  d.swizzle = TmaSwizzle::B128;
  d.l2Promotion = TmaL2Promotion::B256;
  return d;
}

Messages validate(const TensorMapDesc& d) {
  ir::DiagnosticEngine diag;
  const bool ok = validateTensorMap(d, diag);
  EXPECT_EQ(ok, !diag.hadError());
  return testing::messages(diag);
}

TEST(TensorMap, ValidDescriptionPasses) { EXPECT_EQ(validate(validDesc()), Messages{}); }

TEST(TensorMap, RankMustBeOneToFive) {
  auto d = validDesc();
  d.globalDims = {2, 2, 2, 2, 2, 2};
  EXPECT_EQ(validate(d),
            Messages{"tensor map 'A': rank 6 is not supported; TMA tensors have rank 1 to 5"});
  d.globalDims.clear();
  EXPECT_EQ(validate(d),
            Messages{"tensor map 'A': rank 0 is not supported; TMA tensors have rank 1 to 5"});
}

TEST(TensorMap, AddressMustBe16ByteAligned) {
  auto d = validDesc();
  d.globalAddress = 0x1008;
  EXPECT_EQ(validate(d), Messages{"tensor map 'A': global address 0x1008 is not 16-byte aligned "
                                  "(TMA requires 16-byte alignment)"});
}

TEST(TensorMap, AddressMustNotBeNull) {
  auto d = validDesc();
  d.globalAddress = 0;
  EXPECT_EQ(validate(d), Messages{"tensor map 'A': global address is null"});
}

TEST(TensorMap, Interleave32NeedsA32ByteAlignedAddressAndStrides) {
  auto d = validDesc();
  d.globalDims = {16, 4, 4};
  d.globalStrides = {48, 192};
  d.boxDims = {16, 4, 4};
  d.interleave = TmaInterleave::B32;
  d.swizzle = TmaSwizzle::B32;
  d.globalAddress = 0x1010;
  EXPECT_EQ(
      validate(d),
      (Messages{"tensor map 'A': global address 0x1010 is not 32-byte aligned (TMA requires "
                "32-byte alignment with 32-byte interleave)",
                "tensor map 'A': global stride of dim 1 is 48 bytes, not a multiple of 32 (TMA "
                "requires every row to start 32-byte aligned)"}));
}

TEST(TensorMap, InterleaveNeedsRankThreeAndThe32ByteSwizzle) {
  auto d = validDesc();
  d.interleave = TmaInterleave::B32;
  d.globalAddress = 0x1000;
  EXPECT_EQ(validate(d),
            (Messages{"tensor map 'A': rank 2 is too small for an interleaved layout; interleave "
                      "needs rank 3 or more",
                      "tensor map 'A': 32-byte interleave requires the 32-byte swizzle"}));
}

TEST(TensorMap, GlobalDimsMustBeNonZeroAndAtMost2To32) {
  auto d = validDesc();
  d.globalDims = {0, (uint64_t(1) << 32) + 1};
  EXPECT_EQ(validate(d),
            (Messages{"tensor map 'A': global dim 0 is 0; TMA dims must be between 1 and 2^32",
                      "tensor map 'A': global dim 1 is 4294967297; TMA dims must be "
                      "between 1 and 2^32"}));
}

TEST(TensorMap, StridesMustBeMultiplesOf16) {
  auto d = validDesc();
  d.globalStrides = {200};
  EXPECT_EQ(validate(d),
            Messages{"tensor map 'A': global stride of dim 1 is 200 bytes, not a "
                     "multiple of 16 (TMA requires every row to start 16-byte aligned)"});
}

TEST(TensorMap, StridesMustBeBelow2To40) {
  auto d = validDesc();
  d.globalStrides = {uint64_t(1) << 40};
  EXPECT_EQ(validate(d), Messages{"tensor map 'A': global stride of dim 1 is 1099511627776 bytes; "
                                  "TMA strides must be below 2^40"});
}

TEST(TensorMap, StrideCountIsRankMinusOne) {
  auto d = validDesc();
  d.globalStrides = {256, 65536};
  EXPECT_EQ(validate(d), Messages{"tensor map 'A': 2 global strides given for rank 2; TMA takes "
                                  "rank - 1 = 1 (dim 0 is contiguous)"});
}

TEST(TensorMap, BoxDimsAreOneTo256) {
  auto d = validDesc();
  d.swizzle = TmaSwizzle::None;
  d.boxDims = {64, 512};
  EXPECT_EQ(validate(d),
            Messages{"tensor map 'A': box dim 1 is 512; TMA boxes have 1 to 256 elements per dim"});
  d.boxDims = {64, 0};
  EXPECT_EQ(validate(d),
            Messages{"tensor map 'A': box dim 1 is 0; TMA boxes have 1 to 256 elements per dim"});
  d.boxDims = {64};
  EXPECT_EQ(validate(d), Messages{"tensor map 'A': 1 box dims given for rank 2"});
}

TEST(TensorMap, InnerBoxBytesMustBeAMultipleOf16) {
  auto d = validDesc();
  d.boxDims = {4, 64};
  EXPECT_EQ(validate(d), Messages{"tensor map 'A': inner box dim 4 x 2 bytes = 8 bytes is not a "
                                  "multiple of 16 (required without interleave)"});
}

TEST(TensorMap, InnerBoxMustFitTheSwizzleSpan) {
  auto d = validDesc();
  d.boxDims = {128, 64};  // 256 bytes
  EXPECT_EQ(validate(d),
            Messages{"tensor map 'A': inner box dim 128 x 2 bytes = 256 bytes exceeds "
                     "the 128-byte swizzle span; use at most 64 elements in box dim 0"});
  d.swizzle = TmaSwizzle::B32;
  d.boxDims = {32, 64};  // 64 bytes
  EXPECT_EQ(validate(d),
            Messages{"tensor map 'A': inner box dim 32 x 2 bytes = 64 bytes exceeds "
                     "the 32-byte swizzle span; use at most 16 elements in box dim 0"});
  d.swizzle = TmaSwizzle::None;  // no span to fit
  EXPECT_EQ(validate(d), Messages{});
}

TEST(TensorMap, ElementStridesAreOneToEight) {
  auto d = validDesc();
  d.elementStrides = {1, 9};
  EXPECT_EQ(
      validate(d),
      Messages{"tensor map 'A': element stride of dim 1 is 9; TMA element strides are 1 to 8"});
  d.elementStrides = {1};
  EXPECT_EQ(validate(d), Messages{"tensor map 'A': 1 element strides given for rank 2"});
}

TEST(TensorMap, DtypeMapping) {
  EXPECT_EQ(tensorMapDataType(ScalarType::BF16), CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  EXPECT_EQ(tensorMapDataType(ScalarType::F16), CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
  EXPECT_EQ(tensorMapDataType(ScalarType::F32), CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  EXPECT_EQ(tensorMapDataType(ScalarType::F8E4M3), CU_TENSOR_MAP_DATA_TYPE_UINT8);
  EXPECT_EQ(tensorMapDataType(ScalarType::F8E5M2), CU_TENSOR_MAP_DATA_TYPE_UINT8);
  EXPECT_EQ(tensorMapDataType(ScalarType::I32), CU_TENSOR_MAP_DATA_TYPE_INT32);
  EXPECT_EQ(tensorMapDataType(ScalarType::I64), CU_TENSOR_MAP_DATA_TYPE_INT64);
  EXPECT_EQ(tensorMapDataType(ScalarType::I1), std::nullopt);
  auto d = validDesc();
  d.dtype = ScalarType::I1;
  d.boxDims = {16, 64};
  EXPECT_EQ(validate(d), Messages{"tensor map 'A': dtype i1 cannot be copied by TMA"});
}

TEST(TensorMap, EncodePassesTheDescriptionToTheDriver) {
  FakeDriver fake;
  auto ctx = Context::primary(fake.driver());
  CUtensorMap map = encodeTensorMap(ctx, validDesc());
  EXPECT_EQ(map.opaque[0], 0x4b494c4eu);
  ASSERT_EQ(fake.state().tensorMaps.size(), 1u);
  const FakeTensorMapCall& c = fake.state().tensorMaps[0];
  EXPECT_EQ(c.dtype, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  EXPECT_EQ(c.rank, 2u);
  EXPECT_EQ(c.address, reinterpret_cast<void*>(0x7f0000000000));
  EXPECT_EQ(c.dims, (std::vector<cuuint64_t>{128, 256}));
  EXPECT_EQ(c.strides, (std::vector<cuuint64_t>{256}));
  EXPECT_EQ(c.box, (std::vector<cuuint32_t>{64, 64}));
  EXPECT_EQ(c.elementStrides, (std::vector<cuuint32_t>{1, 1}));
  EXPECT_EQ(c.interleave, CU_TENSOR_MAP_INTERLEAVE_NONE);
  EXPECT_EQ(c.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(c.l2Promotion, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  EXPECT_EQ(c.oobFill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

TEST(TensorMap, EncodeRefusesAnInvalidDescriptionBeforeTheDriverSeesIt) {
  FakeDriver fake;
  auto ctx = Context::primary(fake.driver());
  auto d = validDesc();
  d.globalAddress = 0x1008;
  d.boxDims = {64, 300};
  try {
    encodeTensorMap(ctx, d);
    FAIL() << "encodeTensorMap accepted an invalid description";
  } catch (const ir::Error& e) {
    EXPECT_EQ(e.diagnostics().size(), 2u) << e.what();
  }
  EXPECT_TRUE(fake.state().tensorMaps.empty());
}

TEST(TensorMap, EncodeOnADriverWithoutTmaSaysWhichVersionIsNeeded) {
  FakeDriver fake([](FakeCudaState& s) { s.driverVersion = 11040; });
  auto ctx = Context::primary(fake.driver());
  try {
    encodeTensorMap(ctx, validDesc());
    FAIL() << "encodeTensorMap did not throw";
  } catch (const ir::Error& e) {
    EXPECT_EQ(e.diagnostics()[0].message,
              "tensor map 'A': TMA needs a CUDA 12.0 driver or newer; this one is CUDA 11.4");
  }
}

}  // namespace
}  // namespace kiln::runtime
