// A one-hot pick, sum(where(iota(V) == label, x, 0)) (Reduction::pickLoad in
// src/schedule/rowwise/row_program.h), is one load of x at the label per row: in the kern
// simulator, on rows held on chip and rows that stream, with labels inside the row, at its ends,
// just past them and far outside, and logits of -0, infinities and NaN at the label, the picked
// value is exactly x[label] + 0 (the sum's identity turns -0 into +0), or +0 for a label outside.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "kiln/float_formats.h"
#include "kiln/program_builder.h"
#include "tests/unit/testing/sim_buffers.h"

namespace kiln {
namespace {

std::unique_ptr<ir::Module> pickProgram() {
  ProgramBuilder p("pick");
  auto [M, V] = p.dims("M", "V");
  auto X = p.input("X", bf16, {M, V});
  auto L = p.input("labels", i32, {M});
  auto out = p.output("picked", f32, {M});
  p.tile({M}, [&](Coord m) {
    Coord v = p.span(V);
    Tile x = cast(f32, X(m, v));
    out(m) = sum(where(eq(broadcast(p.iota(v), {m, v}), L(m)), x, 0.0), V);
  });
  return p.finish();
}

// The kernel's loads of single bf16 elements (the picks; its rows move in 16-byte vectors).
int elementLoads(const std::string& kernIr) {
  std::istringstream in(kernIr);
  int n = 0;
  for (std::string line; std::getline(in, line);)
    if (line.find("kern.ld_global") != std::string::npos && line.size() >= 6 && line.substr(line.size() - 6) == ": bf16")
      ++n;
  return n;
}

TEST(RowPick, IsTheLabelsLogitPlusZero) {
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t cols : {64, 136}) {  // on chip (capacity 4 threads x 2 vectors x 8), streaming in three steps
    SCOPED_TRACE("V = " + std::to_string(cols));
    const std::vector<int32_t> labels = {0, int32_t(cols - 1), int32_t(cols), -1, 5, std::numeric_limits<int32_t>::max(),
                                         std::numeric_limits<int32_t>::min(), 9, 17, 33};
    const std::vector<float> atLabel = {1.5f, -2.25f, 3.0f, 4.0f, -0.0f, 5.0f, 6.0f, inf, -inf, std::nanf("")};
    const int64_t rows = int64_t(labels.size());
    std::vector<uint16_t> x(size_t(rows * cols));
    for (size_t i = 0; i < x.size(); ++i) x[i] = floatToBf16Bits(float(int(i % 13) - 6) * 0.125f);
    for (int64_t r = 0; r < rows; ++r)
      if (labels[size_t(r)] >= 0 && labels[size_t(r)] < cols) x[size_t(r * cols + labels[size_t(r)])] = floatToBf16Bits(atLabel[size_t(r)]);
    std::vector<uint8_t> xb(x.size() * 2), lb(labels.size() * 4);
    std::memcpy(xb.data(), x.data(), xb.size());
    std::memcpy(lb.data(), labels.data(), lb.size());
    auto run = testing::simulateOnBuffers(*pickProgram(), Config::parse("strategy=rowwise row_threads=4 block_threads=32 vectors=2"),
                                          Target::sm90a(), {{"M", rows}, {"V", cols}},
                                          {{"X", xb}, {"labels", lb}, {"picked", std::vector<uint8_t>(size_t(rows) * 4, 0xFF)}});
    ASSERT_EQ(run.error, "");
    EXPECT_EQ(elementLoads(run.kernIr), 1) << "the pick is not one element load per row:\n" << run.kernIr;
    std::vector<float> got(static_cast<size_t>(rows));
    std::memcpy(got.data(), run.tensors.at("picked").data(), got.size() * 4);
    for (int64_t r = 0; r < rows; ++r) {
      int32_t l = labels[size_t(r)];
      float want = l >= 0 && l < cols ? bf16BitsToFloat(x[size_t(r * cols + l)]) + 0.0f : 0.0f;
      bool same = std::isnan(want) ? std::isnan(got[size_t(r)])
                                   : std::bit_cast<uint32_t>(got[size_t(r)]) == std::bit_cast<uint32_t>(want);
      EXPECT_TRUE(same) << "label " << l << ": " << got[size_t(r)] << ", want " << want;
    }
  }
}

}  // namespace
}  // namespace kiln
