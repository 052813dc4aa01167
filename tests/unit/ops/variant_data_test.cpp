// Registered variants as data (ops/variant_data.h, src/ops/data/): every built-in row parses, its
// name says what its config is, and a bad row is reported at its line.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <set>
#include <stdexcept>

#include "ops/gemm_bf16.h"
#include "ops/variant_data.h"

namespace kiln::ops {
namespace {

// The naming scheme of the data file's header, from the config: the name must tell the truth.
std::string sm90NameOf(const Config& c) {
  bool stsm = c.stageStore == StageStore::Stmatrix && !c.swapAB;
  return fmt::format("bf16_gemm_sm90_{}x{}x{}_s{}{}{}{}{}{}{}{}{}{}{}{}{}{}{}", c.bm, c.bn, c.bk, c.stages,
                     c.epilogue == EpilogueStore::Tma ? "_tma" : "", c.consumers == Consumers::Pingpong ? "_pp" : "",
                     c.clusterM > 1 ? fmt::format("_c{}", c.clusterM) : "",
                     c.clusterN > 1 ? fmt::format("_cn{}", c.clusterN) : "", stsm ? "_stsm" : "",
                     c.splitK > 1 ? fmt::format("_sk{}", c.splitK) : "", c.reuseStage ? "_rs" : "",
                     c.groupM != 8 ? fmt::format("_g{}", c.groupM) : "",
                     c.streamK ? fmt::format("_streamk{}", c.streamK) : "", c.storeSlots == 1 ? "_1slot" : "",
                     c.swapAB ? "_swap" : "", c.warpsN > 1 ? fmt::format("_wn{}", c.warpsN) : "",
                     c.storePieces > 1 ? fmt::format("_p{}", c.storePieces) : "",
                     c.raster == Raster::Row ? "_row" : "");
}

TEST(VariantData, Sm90RowsAreNamedByTheirConfigs) {
  std::vector<GemmVariant> rows = gemmBf16Sm90Variants();
  EXPECT_EQ(rows.size(), 43u);
  std::set<std::string> configs;
  for (const GemmVariant& v : rows) {
    SCOPED_TRACE(v.name);
    EXPECT_EQ(v.config.strategy, "sm90_ws_persistent");
    EXPECT_EQ(v.name, sm90NameOf(v.config));
    EXPECT_TRUE(configs.insert(v.config.str()).second) << "the same config as another row";
    ir::DiagnosticEngine diag;
    EXPECT_TRUE(validate(v.config, Target::sm90a(), {}, diag)) << diag.str();
  }
}

TEST(VariantData, RowsParseWithCommentsAndBlankLines) {
  auto rows = parseVariantRows("# a comment\n\n  v1: row_threads=64  # why\nv2:vectors=2\n", "t.variants", "rowwise");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].name, "v1");
  EXPECT_EQ(rows[0].line, 3);
  EXPECT_EQ(rows[1].config.strategy, "rowwise");
}

std::string errorOf(std::string_view text) {
  try {
    parseVariantRows(text, "t.variants", "sm90_ws_persistent");
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return "";
}

TEST(VariantData, BadRowsNameTheirLine) {
  EXPECT_EQ(errorOf("\nbm=128\n"), "t.variants:2: a variant row is `name: config`, and this one has no ':'");
  EXPECT_EQ(errorOf("a b: bm=128\n"), "t.variants:1: the variant's name must be one word");
  EXPECT_EQ(errorOf("v: bm=128\nv: bm=64\n"), "t.variants:2: variant 'v' is registered twice");
  std::string bad = errorOf("v: bm=128 stagez=4\n");
  EXPECT_EQ(bad.rfind("t.variants:1: variant 'v': ", 0), 0u) << bad;
  EXPECT_NE(bad.find("stagez"), std::string::npos) << bad;
}

}  // namespace
}  // namespace kiln::ops
