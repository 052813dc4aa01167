// The DSL's row ops: p.span, reductions along a dim, comparisons, kiln::where, kiln::broadcast and
// the new math. Programs build into the tile ops they name; misuses are reported at the user's
// line with the exact sentence.
#include <gtest/gtest.h>

#include "kiln/ir/diagnostics.h"
#include "kiln/ir/printer.h"
#include "kiln/program_builder.h"

namespace kiln {
namespace {

template <typename F>
void expectError(F&& body, int line, const std::string& message) {
  try {
    body();
    ADD_FAILURE() << "expected an error: " << message;
  } catch (const ir::Error& e) {
    ASSERT_FALSE(e.diagnostics().empty());
    const auto& d = e.diagnostics().front();
    EXPECT_EQ(d.message, message);
    EXPECT_EQ(static_cast<int>(d.loc.line), line) << d.str();
    EXPECT_NE(d.loc.file.find("row_dsl_test.cpp"), std::string::npos) << d.str();
  }
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(RowDsl, SoftmaxBuildsReductionsAndBroadcasts) {
  ProgramBuilder p("softmax");
  auto [M, N] = p.dims("M", "N");
  auto X = p.input("X", bf16, {M, N});
  auto Y = p.output("Y", bf16, {M, N});
  p.tile({M}, [&](Coord m) {
    Coord n = p.span(N);
    Tile x = cast(f32, X(m, n));
    Tile e = exp(x - max(x, N));
    Y(m, n) = cast(bf16, e / sum(e, N));
  });
  std::string text = ir::toString(*p.finish());
  EXPECT_EQ(count(text, "tile.span() {dim = \"N\"} : coord<[N]>"), 1u) << text;
  EXPECT_EQ(count(text, "{kind = \"max\", dim = \"N\"} : tile<f32, [M]>"), 1u) << text;
  EXPECT_EQ(count(text, "{kind = \"sum\", dim = \"N\"} : tile<f32, [M]>"), 1u) << text;
  EXPECT_EQ(count(text, "tile.broadcast"), 2u) << text;
}

TEST(RowDsl, MeanDividesByTheDimsValueAndSumIsF32) {
  ProgramBuilder p("rms");
  auto [M, N] = p.dims("M", "N");
  auto X = p.input("X", bf16, {M, N});
  auto R = p.output("R", f32, {M});
  p.tile({M}, [&](Coord m) {
    Coord n = p.span(N);
    Tile x = X(m, n);
    EXPECT_EQ(max(x, N).type().str(), "tile<bf16, [M]>");  // max keeps the element type
    R(m) = rsqrt(mean(cast(f32, x) * cast(f32, x), N) + 1e-6);
  });
  std::string text = ir::toString(*p.finish());
  EXPECT_EQ(count(text, "tile.dim() {name = \"N\"} : index"), 1u) << text;
  EXPECT_EQ(count(text, "tile.rsqrt"), 1u) << text;
}

TEST(RowDsl, WhereAndComparisonsPickALabel) {
  ProgramBuilder p("pick");
  auto [M, N] = p.dims("M", "N");
  auto X = p.input("X", f32, {M, N});
  auto L = p.input("L", i32, {M});
  auto Y = p.output("Y", f32, {M});
  p.tile({M}, [&](Coord m) {
    Coord n = p.span(N);
    Tile hit = eq(broadcast(p.iota(n), {m, n}), L(m));
    Tile x = X(m, n);
    Y(m) = sum(where(hit, x, 0.0), N) + sum(where(x > 0.5, 1.0, 0.0), N) + max(pow(tanh(x), 3.0), N) +
           min(erf(x) + sqrt(x) + log(x) + exp2(x), N);
  });
  std::string text = ir::toString(*p.finish());
  EXPECT_EQ(count(text, "tile.select"), 2u) << text;
  EXPECT_EQ(count(text, "{pred = \"eq\"} : tile<i1, [M, N]>"), 1u) << text;
  EXPECT_EQ(count(text, "{pred = \"gt\"} : tile<i1, [M, N]>"), 1u) << text;
  EXPECT_EQ(count(text, "tile.iota"), 1u) << text;
  EXPECT_EQ(count(text, "tile.pow(%"), 1u) << text;
}

TEST(RowDslErrors, ReducingATiledDimIsRefusedAtTheUsersLine) {
  ProgramBuilder p("p");
  auto [M, N] = p.dims("M", "N");
  auto X = p.input("X", f32, {M, N});
  auto Y = p.output("Y", f32, {M});
  expectError([&] {
    p.tile({M, N}, [&](Coord m, Coord n) {
      Y(m) = sum(X(m, n), N);
    });
  }, __LINE__ - 2,
              "'tile.reduce_axis' along 'N' would reduce one block at a time: the tile loop splits it into blocks; span "
              "the whole dim with tile.span (p.span in the DSL) and let the loops split the others");
}

TEST(RowDslErrors, ReducingADimTheTileDoesNotSpan) {
  ProgramBuilder p("p");
  auto [M, N, K] = p.dims("M", "N", "K");
  auto X = p.input("X", f32, {M, N});
  expectError([&] {
    p.tile({M}, [&](Coord m) {
      Tile s = sum(X(m, p.span(N)), K);
    });
  }, __LINE__ - 2, "kiln::sum along K: the tile spans [M, N], which does not include K; reduce along one of its dims");
}

TEST(RowDslErrors, SpanningATiledDim) {
  ProgramBuilder p("p");
  auto [M, N] = p.dims("M", "N");
  expectError([&] {
    p.tile({M, N}, [&](Coord m, Coord n) {
      Coord whole = p.span(N);
    });
  }, __LINE__ - 2,
              "'tile.span' spans dim 'N' whole, but the tile loop splits it into blocks; a dim is either spanned whole "
              "or split by a loop");
}

TEST(RowDslErrors, SpanOutsideTheTileLoop) {
  ProgramBuilder p("p");
  auto [M, N] = p.dims("M", "N");
  expectError([&] { Coord n = p.span(N); }, __LINE__, "p.span must be called inside the p.tile loop");
}

TEST(RowDslErrors, WhereNeedsAPredicate) {
  ProgramBuilder p("p");
  auto [M] = p.dims("M");
  auto X = p.input("X", f32, {M});
  expectError([&] {
    p.tile({M}, [&](Coord m) {
      Tile y = where(X(m), 1.0, 0.0);
    });
  }, __LINE__ - 2, "kiln::where needs an i1 condition (a comparison such as x > 0), got tile<f32, [M]>");
}

TEST(RowDslErrors, BroadcastToFewerDims) {
  ProgramBuilder p("p");
  auto [M, N] = p.dims("M", "N");
  auto X = p.input("X", f32, {M, N});
  expectError([&] {
    p.tile({M}, [&](Coord m) {
      Tile y = broadcast(X(m, p.span(N)), {m});
    });
  }, __LINE__ - 2, "kiln::broadcast extends a tile to more dims: [M, N] cannot become [M] (its dims must appear there, in order)");
}

TEST(RowDslErrors, ComparingDifferentElementTypes) {
  ProgramBuilder p("p");
  auto [M] = p.dims("M");
  auto X = p.input("X", f32, {M});
  expectError([&] {
    p.tile({M}, [&](Coord m) {
      Tile y = X(m) < p.iota(m);
    });
  }, __LINE__ - 2, "operands of < have different element types: tile<f32, [M]> and tile<i32, [M]>; convert one with kiln::cast");
}

}  // namespace
}  // namespace kiln
