// The launch contract's size rules: dims are int32 kernel parameters, and grid sizes saturate
// rather than wrap, so a huge problem is a sentence naming the dim or the grid axis and the limit.
#include <gtest/gtest.h>

#include "kiln/compile.h"

namespace kiln {
namespace {

// A kernel taking dims M and N, tiled 128 x 128 on grid x (with a batch G on the same axis).
LaunchInfo tiledLaunch() {
  LaunchInfo l;
  l.kernelName = "k";
  for (const char* d : {"M", "N", "G"}) {
    KernelParam p;
    p.name = d;
    p.kind = KernelParam::Kind::Dim;
    p.elem = ir::ScalarType::I32;
    l.params.push_back(p);
  }
  l.grid = {GridAxis{1, {{"M", 128}, {"N", 128}, {"G", 1}}}};
  return l;
}

std::vector<std::string> errors(const LaunchInfo& l, const std::map<std::string, int64_t>& dims) {
  ir::DiagnosticEngine diag;
  bool ok = l.validate(dims, diag);
  std::vector<std::string> m;
  for (const auto& d : diag.diagnostics()) m.push_back(d.message);
  EXPECT_EQ(ok, m.empty());
  return m;
}

TEST(LaunchLimits, DimsAreAtMostInt32Max) {
  LaunchInfo l = tiledLaunch();
  l.grid.clear();
  EXPECT_TRUE(errors(l, {{"M", 2147483647}, {"N", 1}, {"G", 1}}).empty());
  EXPECT_EQ(errors(l, {{"M", 2147483648}, {"N", 1}, {"G", 1}}),
            std::vector<std::string>{"dim M = 2147483648 is out of range (1 to 2147483647)"});
}

// 2^24 x 2^24 x 2^31 blocks is 2^79: it wrapped to 0 blocks in int64 before.
TEST(LaunchLimits, AGridPastInt64SaturatesAndIsRefused) {
  LaunchInfo l = tiledLaunch();
  std::map<std::string, int64_t> dims{{"M", 2147483647}, {"N", 2147483647}, {"G", 2147483647}};
  EXPECT_EQ(l.grid[0].eval(dims), INT64_MAX);
  EXPECT_EQ(errors(l, dims), std::vector<std::string>{"kernel k needs 9223372036854775807 blocks along grid x, over "
                                                      "the limit of 2147483647; use raster=grouped or larger tiles"});
  l.workspaceUnitBytes = {4, 65536};
  EXPECT_EQ(l.workspaceBytes(dims, 132)[1], INT64_MAX);
}

}  // namespace
}  // namespace kiln
