// DSL misuses: each is reported at the user's line with the exact sentence.
#include <gtest/gtest.h>

#include "kiln/ir/diagnostics.h"
#include "kiln/ir/printer.h"
#include "kiln/program_builder.h"

namespace kiln {
namespace {

// Runs `body`, expects a kiln::ir::Error at `line` of this file with exactly `message`.
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
    EXPECT_NE(d.loc.file.find("program_builder_test.cpp"), std::string::npos) << d.str();
  }
}

TEST(ProgramBuilderErrors, IncompatibleShapes) {
  ProgramBuilder p("p");
  auto [M, N] = p.dims("M", "N");
  auto Y = p.input("Y", f32, {M, N});
  expectError([&] {
    p.tile({M, N}, [&](Coord m, Coord n) {
      Tile a = p.zeros(f32, {n, m});
      Tile c = a + Y(m, n);
    });
  }, __LINE__ - 2, "operands of + have incompatible shapes [N, M] and [M, N]; one must span a subset of the other's dims");
}

TEST(ProgramBuilderLayouts, StridesAndOrderReachTheType) {
  ProgramBuilder p("layouts");
  auto [M, N, K, lda] = p.dims("M", "N", "K", "lda");
  auto A = p.input("A", bf16, {M, K}, strides(1, lda));  // column-major, leading dimension lda
  auto B = p.input("B", bf16, {K, N}, {0, 1});           // dense, K-major
  auto C = p.output("C", f32, {M, N}, strides(N, 1));    // dense in effect: a dim may be a stride
  EXPECT_EQ(A.value()->type().str(), "tensor<bf16, [M, K], strides = [1, \"lda\"]>");
  EXPECT_EQ(B.value()->type().str(), "tensor<bf16, [K, N], order = [0, 1]>");
  EXPECT_EQ(C.value()->type().str(), "tensor<f32, [M, N], strides = [\"N\", 1]>");
}

TEST(ProgramBuilderErrors, StridesWithoutAUnitAxis) {
  ProgramBuilder p("p");
  auto [M, K, lda] = p.dims("M", "K", "lda");
  expectError([&] { p.input("A", bf16, {M, K}, strides(lda, 2)); }, __LINE__,
              "tensor 'A' has strides = [\"lda\", 2]: exactly one axis must have the constant stride 1 (the "
              "contiguous one), not 0");
}

TEST(ProgramBuilderErrors, DtypeMismatch) {
  ProgramBuilder p("p");
  auto [M, N] = p.dims("M", "N");
  auto X = p.input("X", bf16, {M, N});
  expectError([&] {
    p.tile({M, N}, [&](Coord m, Coord n) {
      Tile c = p.zeros(f32, {m, n}) * X(m, n);
    });
  }, __LINE__ - 2, "operands of * have different element types: tile<f32, [M, N]> and tile<bf16, [M, N]>; convert one with kiln::cast");
}

TEST(ProgramBuilderErrors, TileUsedOutsideItsLoop) {
  ProgramBuilder p("p");
  auto [M, N, K] = p.dims("M", "N", "K");
  auto A = p.input("A", bf16, {M, K});
  auto B = p.input("B", bf16, {K, N});
  auto C = p.output("C", f32, {M, N});
  expectError([&] {
    p.tile({M, N}, [&](Coord m, Coord n) {
      Tile acc = p.zeros(f32, {m, n});
      Tile leaked;
      p.reduce(K, [&](Coord k) {
        leaked = A(m, k);
        acc = dot(leaked, B(k, n), acc);
      });
      C(m, n) = leaked + acc;
    });
  }, __LINE__ - 2,
              "this tile (tile<bf16, [M, K]> (made at " + std::string(__FILE__) + ":" + std::to_string(__LINE__ - 6) +
                  ":19)) is used outside the loop that created it; create it outside the loop, or use it only inside");
}

TEST(ProgramBuilderErrors, WrongCoordForAxis) {
  ProgramBuilder p("p");
  auto [M, K] = p.dims("M", "K");
  auto A = p.input("A", bf16, {M, K});
  expectError([&] {
    p.tile({M, K}, [&](Coord m, Coord k) {
      Tile a = A(k, m);
    });
  }, __LINE__ - 2, "axis 0 of the tensor is M, but it is indexed with the coord of K; pass the coord of M there");
}

TEST(ProgramBuilderErrors, WrongNumberOfIndices) {
  ProgramBuilder p("p");
  auto [M, K] = p.dims("M", "K");
  auto A = p.input("A", bf16, {M, K});
  expectError([&] {
    p.tile({M, K}, [&](Coord m, Coord k) {
      Tile a = A(m);
    });
  }, __LINE__ - 2, "tensor tensor<bf16, [M, K]> (made at " + std::string(__FILE__) + ":" + std::to_string(__LINE__ - 5) +
                       ":19) has rank 2 but is indexed with 1 indices");
}

TEST(ProgramBuilderErrors, DotInnerDimsDiffer) {
  ProgramBuilder p("p");
  auto [M, N, K] = p.dims("M", "N", "K");
  auto A = p.input("A", bf16, {M, K});
  auto B = p.input("B", bf16, {N, K});
  expectError([&] {
    p.tile({M, N}, [&](Coord m, Coord n) {
      Tile acc = p.zeros(f32, {m, n});
      p.reduce(K, [&](Coord k) { acc = dot(A(m, k), B(n, k), acc); });
    });
  }, __LINE__ - 2, "dot: a spans [M, K] and b spans [N, K], so their inner dims differ; a's second dim must be b's first");
}

TEST(ProgramBuilderErrors, DotAccumulatorNotF32) {
  ProgramBuilder p("p");
  auto [M, N, K] = p.dims("M", "N", "K");
  auto A = p.input("A", bf16, {M, K});
  auto B = p.input("B", bf16, {K, N});
  expectError([&] {
    p.tile({M, N}, [&](Coord m, Coord n) {
      Tile acc = p.zeros(bf16, {m, n});
      p.reduce(K, [&](Coord k) { acc = dot(A(m, k), B(k, n), acc); });
    });
  }, __LINE__ - 2, "dot accumulates in f32, but the accumulator is tile<bf16, [M, N]>; start it with p.zeros(kiln::f32, ...)");
}

TEST(ProgramBuilderErrors, StoreWithoutCast) {
  ProgramBuilder p("p");
  auto [M, N] = p.dims("M", "N");
  auto C = p.output("C", bf16, {M, N});
  expectError([&] {
    p.tile({M, N}, [&](Coord m, Coord n) {
      C(m, n) = p.zeros(f32, {m, n});
    });
  }, __LINE__ - 2, "storing a f32 tile into bf16 tensor 'C'; convert it first with kiln::cast(kiln::bf16, ...)");
}

TEST(ProgramBuilderErrors, StoreIntoInput) {
  ProgramBuilder p("p");
  auto [M] = p.dims("M");
  auto X = p.input("X", f32, {M});
  expectError([&] {
    p.tile({M}, [&](Coord m) {
      X(m) = p.zeros(f32, {m});
    });
  }, __LINE__ - 2, "'X' is an input and cannot be written; declare it with p.output");
}

TEST(ProgramBuilderErrors, ReduceOutsideTileLoop) {
  ProgramBuilder p("p");
  auto [M, K] = p.dims("M", "K");
  expectError([&] { p.reduce(K, [&](Coord) {}); }, __LINE__, "p.reduce must be called inside the p.tile loop");
}

TEST(ProgramBuilderErrors, CarriedTileChangesType) {
  ProgramBuilder p("p");
  auto [M, K] = p.dims("M", "K");
  expectError([&] {
    p.tile({M}, [&](Coord m) {
      Tile acc = p.zeros(f32, {m});
      p.reduce(K, [&](Coord) { acc = cast(bf16, acc); });
    });
  }, __LINE__ - 2, "a tile carried through p.reduce changes type from tile<f32, [M]> to tile<bf16, [M]>; cast it back before reassigning it");
}

TEST(ProgramBuilderErrors, DuplicateDim) {
  ProgramBuilder p("p");
  p.dims("M");
  expectError([&] { p.dims("M"); }, __LINE__, "dim 'M' is declared twice");
}

TEST(ProgramBuilderErrors, ArgumentAfterTileLoop) {
  ProgramBuilder p("p");
  auto [M] = p.dims("M");
  p.tile({M}, [&](Coord) {});
  expectError([&] { p.input("late", f32, {M}); }, __LINE__, "declare input 'late' before the tile loop");
}

TEST(ProgramBuilderErrors, UndeclaredDimInTensor) {
  ProgramBuilder p("p");
  auto [M] = p.dims("M");
  ProgramBuilder q("q");
  auto [Q] = q.dims("Q");
  expectError([&] { p.input("X", f32, {M, Q}); }, __LINE__,
              "tensor 'X' uses dim 'Q', which the program does not declare in its dims");
}

TEST(ProgramBuilderErrors, NestedTileLoops) {
  ProgramBuilder p("p");
  auto [M, N] = p.dims("M", "N");
  expectError([&] {
    p.tile({M}, [&](Coord) { p.tile({N}, [&](Coord) {}); });
  }, __LINE__ - 1, "tile loops do not nest: a program has one p.tile loop");
}

TEST(ProgramBuilderErrors, FinishWithoutTileLoop) {
  ProgramBuilder p("p");
  p.dims("M");
  expectError([&] { p.finish(); }, __LINE__, "the program has no p.tile loop, so it computes nothing");
}

TEST(ProgramBuilder, ReduceCarriesReassignedTiles) {
  ProgramBuilder p("two_acc");
  auto [M, N, K] = p.dims("M", "N", "K");
  auto A = p.input("A", bf16, {M, K});
  auto B = p.input("B", bf16, {K, N});
  auto C = p.output("C", f32, {M, N});
  p.tile({M, N}, [&](Coord m, Coord n) {
    Tile acc = p.zeros(f32, {m, n});
    Tile acc2 = p.zeros(f32, {m, n});
    Tile untouched = p.full(f32, {m, n}, 2.0);
    p.reduce(K, [&](Coord k) {
      Tile a = A(m, k);  // a temporary: not carried
      acc = dot(a, B(k, n), acc);
      acc2 = dot(a, B(k, n), acc2);
    });
    C(m, n) = acc + acc2 * untouched;
  });
  std::string text = ir::toString(*p.finish());
  EXPECT_NE(text.find("= tile.reduce(%0, %1) {dim = \"K\"} : tile<f32, [M, N]>, tile<f32, [M, N]>"), std::string::npos)
      << text;
  EXPECT_NE(text.find("tile.yield(%"), std::string::npos);
}

}  // namespace
}  // namespace kiln
