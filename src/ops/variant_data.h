#pragma once
// Registered variants as data: a family's variants are rows of a text file under src/ops/data/,
// compiled in by cmake/KilnEmbed.cmake. A row is `name: config`, the config line without its
// strategy (the family gives it); `#` starts a comment, blank lines are skipped.
//
//   # 64-row tiles for a memory-bound operand
//   bf16_gemm_sm90_64x64x64_s13: bm=64 bn=64 bk=64 stages=13 warps_m=1 l2_hint=reuse raster=grouped
#include <string>
#include <string_view>
#include <vector>

#include "schedule/config.h"

namespace kiln::ops {

struct VariantRow {
  std::string name;
  Config config;
  int line = 0;  // in the data file
};

// Parses every row of `text` (the file `file`) as a config of `strategy`. The data is built in, so
// a bad row is Kiln's bug: it throws std::logic_error naming the file, the line and what is wrong
// (a unit test parses every data file, so such a row never reaches a user).
std::vector<VariantRow> parseVariantRows(std::string_view text, std::string_view file, std::string_view strategy);

}  // namespace kiln::ops
