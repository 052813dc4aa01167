// Round trips and parse errors of the generic text form.
#include <gtest/gtest.h>

#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"

namespace kiln::ir {
namespace {

std::string roundTrip(const std::string& text, bool verifyToo = true) {
  DiagnosticEngine diag;
  auto m = parseModule(text, diag);
  EXPECT_TRUE(m) << diag.str();
  if (!m) return {};
  if (verifyToo) {
    EXPECT_TRUE(verify(*m, diag)) << diag.str();
  }
  return toString(*m);
}

std::string firstError(const std::string& text) {
  DiagnosticEngine diag;
  auto m = parseModule(text, diag);
  EXPECT_FALSE(m);
  return diag.diagnostics().empty() ? "<none>" : diag.diagnostics().front().str();
}

const char* kGemm = R"(tile.program() {sym_name = "gemm", dims = ["M", "N", "K"]} {
  %A = tile.input() {name = "A"} : tensor<bf16, [M, K]>
  %B = tile.input() {name = "B"} : tensor<bf16, [K, N], order = [0, 1]>
  %C = tile.output() {name = "C"} : tensor<bf16, [M, N]>
  tile.for_tiles() {dims = ["M", "N"]} {
  ^bb0(%m: coord<[M]>, %n: coord<[N]>):
    %0 = tile.constant() {value = 0.0} : tile<f32, [M, N]>
    %acc = tile.reduce(%0) {dim = "K"} : tile<f32, [M, N]> {
    ^bb0(%k: coord<[K]>, %a: tile<f32, [M, N]>):
      %1 = tile.load(%A, %m, %k) : tile<bf16, [M, K]>
      %2 = tile.load(%B, %k, %n) : tile<bf16, [K, N]>
      %3 = tile.dot(%1, %2, %a) : tile<f32, [M, N]>
      tile.yield(%3)
    }
    %4 = tile.cast(%acc) : tile<bf16, [M, N]>
    tile.store(%C, %m, %n, %4)
    tile.yield()
  }
}
)";

TEST(ParserPrinter, GemmRoundTripsExactly) {
  std::string once = roundTrip(kGemm);
  EXPECT_EQ(once, kGemm);
  EXPECT_EQ(roundTrip(once), once);
}

TEST(ParserPrinter, AttributesRoundTrip) {
  const char* text =
      "%0 = arith.constant() {value = -1.5e-07, s = \"a\\\"b\\n\", l = [1, -2, [true, false]], u = unit, i = inf, "
      "j = -inf, n = nan} : f32\n";
  DiagnosticEngine diag;
  auto m = parseModule(text, diag);
  ASSERT_TRUE(m) << diag.str();
  EXPECT_EQ(toString(*m), text);
}

TEST(ParserPrinter, DuplicateNameHintsAreUniqued) {
  Module m;
  auto* c1 = m.body().push_back(Operation::create({}, "arith.constant", {}, {types::i32()}, {{"value", 1}}));
  auto* c2 = m.body().push_back(Operation::create({}, "arith.constant", {}, {types::i32()}, {{"value", 2}}));
  c1->result()->setNameHint("x");
  c2->result()->setNameHint("x");
  m.body().push_back(Operation::create({}, "arith.addi", {c1->result(), c2->result()}, {types::i32()}));
  std::string text = toString(m);
  EXPECT_NE(text.find("%x_1 = arith.constant"), std::string::npos) << text;
  EXPECT_NE(text.find("arith.addi(%x, %x_1)"), std::string::npos) << text;
  EXPECT_EQ(roundTrip(text, false), text);
}

TEST(ParserPrinter, LocationsPrintAndParse) {
  DiagnosticEngine diag;
  auto m = parseModule("%0 = arith.constant() {value = 1} : i32 loc(\"user.cpp\":12:7)\n", diag);
  ASSERT_TRUE(m) << diag.str();
  const Operation* op = m->body().front();
  EXPECT_EQ(op->loc().file, "user.cpp");
  EXPECT_EQ(op->loc().line, 12u);
  EXPECT_EQ(toString(*m, {.locations = true}), "%0 = arith.constant() {value = 1} : i32 loc(\"user.cpp\":12:7)\n");
}

TEST(ParserErrors, UndefinedValue) {
  EXPECT_EQ(firstError("%0 = arith.addi(%a, %a) : i32\n"), "1:17: error: use of undefined value '%a'");
}

TEST(ParserErrors, Redefinition) {
  EXPECT_EQ(firstError("%a = arith.constant() {value = 1} : i32\n%a = arith.constant() {value = 2} : i32\n"),
            "2:1: error: redefinition of value '%a'");
}

TEST(ParserErrors, UnknownOp) {
  EXPECT_EQ(firstError("tile.dott()\n"), "1:1: error: unknown operation 'tile.dott'");
}

TEST(ParserErrors, ResultCountMismatch) {
  EXPECT_EQ(firstError("%a, %b = arith.constant() {value = 1} : i32\n"),
            "1:10: error: 'arith.constant' has 2 result names but 1 result types");
}

TEST(ParserErrors, BadTypeEntry) {
  EXPECT_EQ(firstError("%a = tile.constant() {value = 1} : tile<f33, [M]>\n"),
            "1:41: error: 'f33' is not an element type (i1, i32, i64, index, f32, f16, bf16, f8e4m3, f8e5m2)");
}

TEST(ParserErrors, UnterminatedRegion) {
  EXPECT_EQ(firstError("tile.program() {sym_name = \"p\", dims = []} {\n"),
            "2:1: error: expected '}' to close the region, found end of input");
}

TEST(ParserErrors, DuplicateAttribute) {
  EXPECT_EQ(firstError("%a = arith.constant() {value = 1, value = 2} : i32\n"),
            "1:35: error: attribute 'value' is given twice");
}

TEST(ParserErrors, IntegerOverflow) {
  EXPECT_EQ(firstError("%a = arith.constant() {value = 99999999999999999999} : i32\n"),
            "1:32: error: integer literal '99999999999999999999' does not fit in 64 bits");
}

TEST(ParserErrors, DeepNestingIsRefusedNotCrashed) {
  std::string text = "%a = arith.constant() {value = " + std::string(5000, '[') + "} : i32\n";
  EXPECT_NE(firstError(text).find("nesting is too deep"), std::string::npos);
}

TEST(ParserErrors, ResultNotVisibleInsideItsOwnRegion) {
  EXPECT_EQ(firstError("%r = scf.if(%r) {\n}\n"), "1:13: error: use of undefined value '%r'");
}

}  // namespace
}  // namespace kiln::ir
