// The rowwise strategy's kernels, run in the kern simulator against the interpreter: every
// memory-bound example under schedules that take each path of the kernel -- rows shared by part
// of a warp, a warp and several warps (shared-memory combination), rows that fit on chip and rows
// that stream through in several steps, a last vector only partly inside the row, element
// accesses for any row length, a persistent grid that walks several row groups per block -- at
// row counts that leave the last block's rows partly outside the tensor.
#include <gtest/gtest.h>

#include "examples/examples.h"
#include "tests/unit/testing/sim_run.h"

namespace kiln {
namespace {

struct Case {
  const char* config;
  int64_t rows, cols;
  const char* what;
};

const Case kCases[] = {
    {"strategy=rowwise row_threads=8 block_threads=64 vectors=2", 13, 96, "sub-warp rows, on chip, a partial vector"},
    {"strategy=rowwise row_threads=32 block_threads=64 vectors=1", 5, 608, "warp rows streaming in three steps"},
    {"strategy=rowwise row_threads=64 block_threads=128 vectors=2", 3, 1008, "two-warp rows on chip"},
    {"strategy=rowwise row_threads=64 block_threads=128 vectors=1", 3, 1408, "two-warp rows streaming"},
    {"strategy=rowwise row_threads=16 block_threads=32 vectors=4 scalar=true", 7, 37, "elements, on chip"},
    {"strategy=rowwise row_threads=16 block_threads=32 vectors=2 scalar=true", 7, 131, "elements, streaming"},
    {"strategy=rowwise row_threads=4 block_threads=32 vectors=2 blocks_per_sm=1", 70, 64, "a persistent grid"},
};

class RowwiseSim : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(RowwiseSim, MatchesTheInterpreter) {
  const examples::Example* e = examples::find(std::get<0>(GetParam()));
  ASSERT_NE(e, nullptr);
  const Case& c = kCases[std::get<1>(GetParam())];
  auto module = e->build();
  auto names = module->body().front()->stringsAttr("dims");
  ASSERT_EQ(names.size(), 2u);
  std::map<std::string, int64_t> dims = {{names[0], c.rows}, {names[1], c.cols}};
  auto run = testing::simulateAgainstInterpreter(*module, Config::parse(c.config), Target::sm90a(), dims, 11);
  EXPECT_EQ(run.error, "") << c.what << ": " << run.config;
}

std::vector<std::string> rowExamples() {
  std::vector<std::string> names;
  for (const auto& e : examples::all())
    if (!e.gemm) names.push_back(e.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Examples, RowwiseSim,
                         ::testing::Combine(::testing::ValuesIn(rowExamples()), ::testing::Range(0, int(std::size(kCases)))),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + std::to_string(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace kiln
