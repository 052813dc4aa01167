// HostTensor helpers: byte layout, single rounding from double, saturation, strides for `order`.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>

#include "kiln/interp/host_tensor.h"

namespace kiln::interp {
namespace {

using ir::ScalarType;

TEST(HostTensor, SizesAndZeroFill) {
  HostTensor t = makeHostTensor(ScalarType::BF16, {3, 5});
  EXPECT_EQ(t.bytes.size(), 30u);
  EXPECT_EQ(numElements(t), 15);
  EXPECT_EQ(elementBytes(ScalarType::F8E4M3), 1);
  EXPECT_EQ(elementBytes(ScalarType::I1), 1);
  EXPECT_EQ(elementBytes(ScalarType::Index), 8);
  for (double v : toDoubles(t)) EXPECT_EQ(v, 0.0);
}

TEST(HostTensor, StoresTheFormatsBits) {
  HostTensor t = makeHostTensor(ScalarType::BF16, {2}, std::vector<double>{1.0, -2.0});
  EXPECT_EQ(t.bytes, (std::vector<uint8_t>{0x80, 0x3f, 0x00, 0xc0}));  // 0x3f80, 0xc000 little-endian
  HostTensor e4 = makeHostTensor(ScalarType::F8E4M3, {2}, std::vector<double>{1.0, 448.0});
  EXPECT_EQ(e4.bytes, (std::vector<uint8_t>{0x38, 0x7e}));
  HostTensor i = makeHostTensor(ScalarType::I32, {1}, std::vector<double>{-2});
  EXPECT_EQ(i.bytes, (std::vector<uint8_t>{0xfe, 0xff, 0xff, 0xff}));
}

// 1 + 2^-8 + 2^-30 lies just above the midpoint of the bf16 neighbours 1 and 1 + 2^-7, so it rounds
// up. Going through f32 first would lose the 2^-30, land exactly on the midpoint and round to even,
// i.e. to 1: the fill rounds once, from the double.
TEST(HostTensor, RoundsOnceFromDouble) {
  HostTensor t = makeHostTensor(ScalarType::BF16, {1});
  setElement(t, 0, 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30));
  EXPECT_EQ(getElement(t, 0), 1.0 + std::ldexp(1.0, -7));
  setElement(t, 0, -(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30)));
  EXPECT_EQ(getElement(t, 0), -(1.0 + std::ldexp(1.0, -7)));
  // Likewise for f16: 1 + 2^-11 + 2^-40 rounds up to 1 + 2^-10.
  HostTensor h = makeHostTensor(ScalarType::F16, {1});
  setElement(h, 0, 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40));
  EXPECT_EQ(getElement(h, 0), 1.0 + std::ldexp(1.0, -10));
  // Values beyond f32's range still round as the format says.
  setElement(t, 0, 1e300);
  EXPECT_EQ(getElement(t, 0), INFINITY);
  setElement(t, 0, 1e-300);
  EXPECT_EQ(getElement(t, 0), 0.0);
}

TEST(HostTensor, Fp8SaturatesAndKeepsNan) {
  HostTensor t = makeHostTensor(ScalarType::F8E4M3, {4}, std::vector<double>{1e6, -INFINITY, NAN, 0.3});
  EXPECT_EQ(getElement(t, 0), 448.0);
  EXPECT_EQ(getElement(t, 1), -448.0);
  EXPECT_TRUE(std::isnan(getElement(t, 2)));
  EXPECT_EQ(getElement(t, 3), 0.3125);
}

TEST(HostTensor, IntegersRoundToEvenAndSaturate) {
  HostTensor t = makeHostTensor(ScalarType::I32, {4}, std::vector<double>{2.5, -3.5, 1e12, NAN});
  EXPECT_EQ(toDoubles(t), (std::vector<double>{2, -4, 2147483647, 0}));
  HostTensor l = makeHostTensor(ScalarType::I64, {1}, std::vector<double>{1e30});
  EXPECT_EQ(getElement(l, 0), 9223372036854775807.0);
}

TEST(HostTensor, StridesFollowTheOrder) {
  EXPECT_EQ(elementStrides({4, 5}), (std::vector<int64_t>{5, 1}));          // row-major
  EXPECT_EQ(elementStrides({4, 5}, {1, 0}), (std::vector<int64_t>{5, 1}));  // row-major, spelled out
  EXPECT_EQ(elementStrides({4, 5}, {0, 1}), (std::vector<int64_t>{1, 4}));  // column-major (K-major B)
  EXPECT_EQ(elementStrides({2, 3, 4}, {1, 2, 0}), (std::vector<int64_t>{12, 1, 3}));
}

}  // namespace
}  // namespace kiln::interp
