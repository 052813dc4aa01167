// Every example program verifies, prints, parses back and prints identically.
#include <gtest/gtest.h>

#include "examples/examples.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"

namespace kiln {
namespace {

class ExampleRoundTrip : public ::testing::TestWithParam<examples::Example> {};

TEST_P(ExampleRoundTrip, PrintParsePrintIsIdentical) {
  auto module = GetParam().build();
  ir::DiagnosticEngine diag;
  ASSERT_TRUE(ir::verify(*module, diag)) << diag.str();
  std::string once = ir::toString(*module);
  auto parsed = ir::parseModule(once, diag);
  ASSERT_TRUE(parsed) << diag.str() << "\n" << once;
  ASSERT_TRUE(ir::verify(*parsed, diag)) << diag.str();
  EXPECT_EQ(ir::toString(*parsed), once);
  // Locations survive the trip too, when printed.
  std::string withLocs = ir::toString(*module, {.locations = true});
  auto parsedLocs = ir::parseModule(withLocs, diag);
  ASSERT_TRUE(parsedLocs) << diag.str();
  EXPECT_EQ(ir::toString(*parsedLocs, {.locations = true}), withLocs);
  EXPECT_NE(withLocs.find(GetParam().name.substr(0, 4)), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(All, ExampleRoundTrip, ::testing::ValuesIn(examples::all()),
                         [](const auto& info) { return info.param.name; });

TEST(Examples, ThereAreSixteenDistinctPrograms) {
  std::set<std::string> texts;
  for (const auto& e : examples::all()) texts.insert(ir::toString(*e.build()));
  EXPECT_EQ(examples::all().size(), 16u);
  EXPECT_EQ(texts.size(), 16u);
}

// The memory-bound examples are exactly the ones without a matrix product.
TEST(Examples, GemmFlagMatchesTheProgram) {
  for (const auto& e : examples::all()) {
    std::string text = ir::toString(*e.build());
    EXPECT_EQ(e.gemm, text.find("tile.dot") != std::string::npos) << e.name;
  }
}

}  // namespace
}  // namespace kiln
