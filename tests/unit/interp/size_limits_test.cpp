// Huge and overflowing sizes in the interpreter: each is a sentence naming the dim and the limit,
// found before anything is allocated (before these checks, a dim whose product wrapped allocated a
// small buffer and wrote past it, and a huge one ended in an uncaught std::bad_alloc).
#include "interp/size_limits.h"

#include <gtest/gtest.h>

#include "gemm_programs.h"
#include "interp/interpret_command.h"
#include "interp_test_util.h"
#include "support/checked_math.h"

namespace kiln::interp::testing {
namespace {

std::string firstError(const std::string& text, const std::string& dims, int64_t maxBytes = kDefaultMaxMemoryBytes) {
  ir::DiagnosticEngine diag;
  std::string report = runInterpretCommand(text, dims, 1, diag, maxBytes);
  EXPECT_EQ(report, "");
  return diag.diagnostics().empty() ? "" : diag.diagnostics().front().message;
}

TEST(CheckedMath, OverflowIsNulloptNotAWrap) {
  EXPECT_FALSE(support::checkedMul(int64_t(1) << 32, int64_t(1) << 31).has_value());
  EXPECT_EQ(support::checkedMul(int64_t(1) << 31, int64_t(1) << 31), int64_t(1) << 62);
  std::vector<int64_t> wraps = {int64_t(1) << 32, int64_t(1) << 32};  // wraps to exactly 0
  EXPECT_FALSE(support::checkedProduct(wraps).has_value());
  EXPECT_FALSE(support::checkedAdd(INT64_MAX, 1).has_value());
  EXPECT_EQ(support::ceilDiv(INT64_MAX, 64), INT64_MAX / 64 + 1);
}

// 2^32 x 2^32 wraps to 0 elements in int64: the old code allocated nothing and wrote past it.
TEST(InterpSizes, ATensorWhoseElementCountOverflowsNamesTheDim) {
  EXPECT_EQ(firstError(kBf16Gemm, "M=4294967296,N=8,K=4294967296"),
            "tensor 'A' of shape [M, K] = [4294967296, 4294967296] has more than 2^63 elements: the product "
            "overflows at dim 'K' (4294967296); use smaller dims");
}

TEST(InterpSizes, ATensorOverTheMemoryLimitIsRefusedBeforeAllocation) {
  // 2^20 x 2^20 bf16 is 2 TiB: refused at once (the old code died in std::bad_alloc).
  EXPECT_EQ(firstError(kBf16Gemm, "M=1048576,N=8,K=1048576"),
            "program 'gemm' at these dims needs 10.0 TiB of interpreter memory for its tensors (the largest is 'A' "
            "of shape [M, K] = [1048576, 1048576], 10.0 TiB), over the limit of 4.0 GiB; use smaller dims, or raise the limit with --max-memory (or KILN_INTERP_MAX_MEMORY)");
}

TEST(InterpSizes, TheLimitIsConfigurable) {
  // 64x16 + 16x32 + 64x32 elements at 2 + 8 bytes each: 35840 bytes.
  EXPECT_EQ(firstError(kBf16Gemm, "M=64,N=32,K=16", 35839),
            "program 'gemm' at these dims needs 35840 bytes of interpreter memory for its tensors (the largest is "
            "'C' of shape [M, N] = [64, 32], 20480 bytes), over the limit of 35839 bytes; use smaller dims, or "
            "raise the limit with --max-memory (or KILN_INTERP_MAX_MEMORY)");
  ir::DiagnosticEngine diag;
  EXPECT_NE(runInterpretCommand(kBf16Gemm, "M=64,N=32,K=16", 1, diag, 35840), "") << diag.str();
}

// A tile's constant extent is not bounded by any tensor: 64 x 2^36 doubles would be 32 TiB.
TEST(InterpSizes, ATileOverTheLimitIsRefused) {
  const char* text = R"(tile.program() {sym_name = "wide", dims = ["M"]} {
  %Y = tile.output() {name = "Y"} : tensor<f32, [M]>
  tile.for_tiles() {dims = ["M"]} {
  ^bb0(%m: coord<[M]>):
    %0 = tile.constant() {value = 1.0} : tile<f32, [M, 68719476736]>
    %1 = tile.constant() {value = 1.0} : tile<f32, [M]>
    tile.store(%Y, %m, %1)
    tile.yield()
  }
}
)";
  EXPECT_EQ(firstError(text, "M=64"),
            "'tile.constant' makes a tile of shape [M, 68719476736] = [64, 68719476736], which needs 32.0 TiB of "
            "interpreter memory, over the limit of 4.0 GiB (a dim that is not tiled is one whole-dim block); use "
            "smaller dims, or raise the limit with --max-memory (or KILN_INTERP_MAX_MEMORY)");
}

TEST(InterpSizes, AConstantExtentThatOverflowsIsRefused) {
  const char* text = R"(tile.program() {sym_name = "big", dims = ["M"]} {
  %X = tile.input() {name = "X"} : tensor<f32, [M, 4611686018427387904]>
  %Y = tile.output() {name = "Y"} : tensor<f32, [M]>
  tile.for_tiles() {dims = ["M"]} {
  ^bb0(%m: coord<[M]>):
    %0 = tile.constant() {value = 1.0} : tile<f32, [M]>
    tile.store(%Y, %m, %0)
    tile.yield()
  }
}
)";
  EXPECT_EQ(firstError(text, "M=4"),
            "tensor 'X' of shape [M, 4611686018427387904] = [4, 4611686018427387904] has more than 2^63 elements: the "
            "product overflows at extent 1 (4611686018427387904); use smaller dims");
}

TEST(InterpSizes, MemorySizesParseAsUsersWriteThem) {
  EXPECT_EQ(parseMemorySize("8G"), int64_t(8) << 30);
  EXPECT_EQ(parseMemorySize("512MiB"), int64_t(512) << 20);
  EXPECT_EQ(parseMemorySize("64k"), int64_t(64) << 10);
  EXPECT_EQ(parseMemorySize("4096"), 4096);
  EXPECT_EQ(parseMemorySize("100B"), 100);
  for (const char* bad : {"", "G", "8X", "0", "-1", "99999999999999999999", "8192P", "1.5G"})
    EXPECT_FALSE(parseMemorySize(bad).has_value()) << bad;
}

}  // namespace
}  // namespace kiln::interp::testing
