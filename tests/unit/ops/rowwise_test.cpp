// The rowwise family: what each variant can run, what the heuristic picks at LLM shapes (and
// why), forced picks, and the default schedule of programs without a matrix product.
#include <gtest/gtest.h>

#include <tuple>

#include <cstdio>

#include "examples/examples.h"
#include "kiln/ir/parser.h"
#include "ops/default_schedule.h"
#include "ops/rowwise.h"

namespace kiln::ops {
namespace {

const RowVariant& variant(const std::string& name) {
  for (const auto& v : rowwiseVariants())
    if (v.name == name) return v;
  throw std::runtime_error("no variant " + name);
}

RowProblem problemOf(const char* example, int64_t rows, int64_t cols) {
  auto m = examples::find(example)->build();
  const ir::Operation& program = *m->body().front();
  auto names = program.stringsAttr("dims");
  ir::DiagnosticEngine diag;
  auto p = rowProblemOf(program, Target::sm90a(), {{names[0], rows}, {names[1], cols}}, diag);
  EXPECT_TRUE(p) << diag.str();
  return p.value_or(RowProblem{});
}

TEST(RowwiseFamily, ProblemsOfTheExamples) {
  RowProblem sm = problemOf("softmax", 4096, 4096);
  EXPECT_EQ(sm.passes, 2);  // max and the online sum, then the output
  EXPECT_EQ(sm.rowTensors, 1);
  EXPECT_EQ(sm.elemBytes, 2);
  EXPECT_EQ(problemOf("cross_entropy", 8, 128256).passes, 1);
  EXPECT_EQ(problemOf("layer_norm", 8, 4096).passes, 3);
  EXPECT_EQ(problemOf("add_rms_norm", 8, 4096).rowTensors, 3);  // X, R and W
  EXPECT_EQ(problemOf("fp8_quant", 8, 4096).elemBytes, 1);
}

TEST(RowwiseFamily, Eligibility) {
  std::string why;
  RowProblem odd = problemOf("softmax", 64, 50257);
  EXPECT_FALSE(variant("row_t128_b256_v4").eligible(odd, Target::sm90a(), &why));
  EXPECT_EQ(why, "row_t128_b256_v4 reads rows in 16-byte vectors of 8 elements, and the row length 50257 is not a "
                 "multiple of 8");
  EXPECT_TRUE(variant("row_t256_b256_v4_scalar").eligible(odd, Target::sm90a(), &why)) << why;
  RowProblem three = problemOf("add_rms_norm", 64, 4096);
  EXPECT_FALSE(variant("row_t1024_b1024_v4").eligible(three, Target::sm90a(), &why));
  EXPECT_EQ(why, "row_t1024_b1024_v4 would hold about 136 registers a thread for its vectors, over the 64 a thread of "
                 "a 1024-thread block may have");
}

// Rows that fit on chip are read once; rows of a 128K vocabulary stream through.
TEST(RowwiseFamily, PicksAtLlmShapes) {
  struct Want {
    const char* example;
    int64_t rows, cols;
    bool fits;
  };
  const Want wants[] = {
      {"softmax", 4096, 4096, true},      {"softmax", 32768, 8192, true},      {"rms_norm", 4096, 4096, true},
      {"layer_norm", 32768, 8192, true},  {"add_rms_norm", 16384, 4096, true}, {"silu_and_mul", 16384, 14336, false},
      {"cross_entropy", 8192, 128256, false}, {"softmax", 8192, 128256, false}, {"fp8_quant", 16384, 7168, true},
  };
  for (const Want& w : wants) {
    SCOPED_TRACE(std::string(w.example) + " " + std::to_string(w.rows) + "x" + std::to_string(w.cols));
    RowProblem p = problemOf(w.example, w.rows, w.cols);
    ir::DiagnosticEngine diag;
    auto pick = selectRowwise(p, Target::sm90a(), diag);
    ASSERT_TRUE(pick) << diag.str();
    EXPECT_EQ(pick->source, "heuristic");
    EXPECT_EQ(p.cols <= pick->variant->capacity(p), w.fits) << pick->str(p);
    EXPECT_FALSE(pick->variant->config.scalar) << pick->str(p);
    if (w.fits) EXPECT_NE(pick->str(p).find("fit on chip"), std::string::npos) << pick->str(p);
    std::printf("%s %lldx%lld: %s\n", w.example, static_cast<long long>(w.rows), static_cast<long long>(w.cols),
                pick->str(p).c_str());
  }
}

// A row that streams through goes in steps of at least 4 KB of each tensor: at equal fills the
// wider step wins (silu_and_mul measured 0.88 of the copy in 512-byte steps, 0.97 in 4 KB ones).
TEST(RowwiseFamily, StreamingStepsCoverFourKilobytes) {
  for (auto [example, rows, cols] : {std::tuple{"silu_and_mul", 16384, 14336}, {"cross_entropy", 8192, 128256},
                                     {"cross_entropy", 4096, 32000}, {"softmax", 8192, 128256}}) {
    SCOPED_TRACE(std::string(example) + " " + std::to_string(cols));
    RowProblem p = problemOf(example, rows, cols);
    ir::DiagnosticEngine diag;
    auto pick = selectRowwise(p, Target::sm90a(), diag);
    ASSERT_TRUE(pick) << diag.str();
    ASSERT_GT(p.cols, pick->variant->capacity(p)) << pick->str(p);
    EXPECT_GE(pick->variant->capacity(p) * p.elemBytes, 4096) << pick->str(p);
  }
}

TEST(RowwiseFamily, OddRowsGetElementAccesses) {
  RowProblem p = problemOf("cross_entropy", 4096, 50257);
  ir::DiagnosticEngine diag;
  auto pick = selectRowwise(p, Target::sm90a(), diag);
  ASSERT_TRUE(pick) << diag.str();
  EXPECT_TRUE(pick->variant->config.scalar) << pick->str(p);
}

TEST(RowwiseFamily, ForcedPicks) {
  RowProblem p = problemOf("softmax", 4096, 4096);
  ir::DiagnosticEngine diag;
  auto pick = selectRowwise(p, Target::sm80(), diag, "row_t32_b256_v2");
  ASSERT_TRUE(pick) << diag.str();
  EXPECT_EQ(pick->source, "forced");
  EXPECT_NE(pick->str(p).find("a read per pass (2)"), std::string::npos) << pick->str(p);
  EXPECT_FALSE(selectRowwise(p, Target::sm80(), diag, "row_nope"));
  EXPECT_EQ(diag.diagnostics().back().message, "unknown rowwise variant 'row_nope' (names look like row_t128_b256_v4)");
}

TEST(RowwiseFamily, DefaultScheduleOfAProgramRowwiseCannotLower) {
  ir::DiagnosticEngine diag;
  auto m = ir::parseModule(R"(
tile.program() {sym_name = "first", dims = ["M"]} {
  %S = tile.input() {name = "S"} : tensor<f32, [M]>
  %Y = tile.output() {name = "Y"} : tensor<f32, [M]>
  tile.for_tiles() {dims = ["M"]} {
  ^bb0(%m: coord<[M]>):
    %s = tile.load_scalar(%S, %m) : f32
    %y = tile.load(%S, %m) : tile<f32, [M]>
    %z = tile.mul(%y, %s) : tile<f32, [M]>
    tile.store(%Y, %m, %z)
    tile.yield()
  }
}
)", diag);
  ASSERT_TRUE(m) << diag.str();
  DefaultSchedule d = defaultSchedule(*m->body().front(), Target::sm90a(), {{"M", 100}});
  EXPECT_FALSE(d.fromFamily);
  EXPECT_EQ(d.config.strategy, "rowwise");
  EXPECT_EQ(d.why, "a program without a matrix product, for the rowwise strategy, which cannot run it: rowwise cannot "
                   "lower 'tile.load_scalar': load a [M] tile with tile.load instead");
}

}  // namespace
}  // namespace kiln::ops
