// Seeded inputs (src/interp/random_inputs.h) for programs at the edge of what verifies: a
// tile.group_index whose align is near INT64_MAX (found by tests/fuzz/interp_fuzz.cpp: the chunk
// count, ceil(rows / align), overflowed when computed as (rows + align - 1) / align).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "interp/random_inputs.h"
#include "interp_test_util.h"

namespace kiln::interp::testing {
namespace {

std::string groupedGemm(const std::string& align) {
  return R"(tile.program() {sym_name = "grouped", dims = ["G", "M", "N", "K"]} {
  %A = tile.input() {name = "A"} : tensor<bf16, [M, K]>
  %B = tile.input() {name = "B"} : tensor<bf16, [G, K, N]>
  %ids = tile.input() {name = "ids"} : tensor<i32, [M]>
  %C = tile.output() {name = "C"} : tensor<f32, [M, N]>
  tile.for_tiles() {dims = ["M", "N"]} {
  ^bb0(%m: coord<[M]>, %n: coord<[N]>):
    %g = tile.group_index(%ids, %m) {align = )" + align + R"(} : index
    %0 = tile.constant() {value = 0.0} : tile<f32, [M, N]>
    %1 = tile.reduce(%0) {dim = "K"} : tile<f32, [M, N]> {
    ^bb0(%k: coord<[K]>, %2: tile<f32, [M, N]>):
      %3 = tile.load(%B, %g, %k, %n) : tile<bf16, [K, N]>
      %4 = tile.load(%A, %m, %k) : tile<bf16, [M, K]>
      %5 = tile.dot(%4, %3, %2) : tile<f32, [M, N]>
      tile.yield(%5)
    }
    tile.store(%C, %m, %n, %1)
    tile.yield()
  }
})";
}

TEST(RandomInputs, GroupIdsWithAnAlignNearInt64MaxAreOneChunk) {
  auto m = parseProgram(groupedGemm(std::to_string(INT64_MAX)));
  ASSERT_TRUE(m);
  auto args = generateArguments(programOf(*m), {{"G", 3}, {"M", 24}, {"N", 8}, {"K", 8}}, /*seed=*/1);
  std::vector<double> ids = toDoubles(args.tensors.at("ids"));
  ASSERT_EQ(ids.size(), 24u);
  // One chunk of rows (the align is larger than M): every row draws the same group, one of the G.
  for (double id : ids) EXPECT_EQ(id, ids[0]);
  EXPECT_GE(ids[0], 0);
  EXPECT_LT(ids[0], 3);
}

}  // namespace
}  // namespace kiln::interp::testing
