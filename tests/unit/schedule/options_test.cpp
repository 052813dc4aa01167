// The strategies' option tables (schedule/options.h): consistent tables, working bare defaults,
// and the reference derived from them.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "examples/examples.h"
#include "kiln/compile.h"
#include "schedule/options.h"

namespace kiln::options {
namespace {

TEST(Options, TablesAreConsistent) {
  std::map<std::string, Type> typeOf;
  for (const Strategy& s : strategies()) {
    SCOPED_TRACE(s.name);
    EXPECT_FALSE(s.summary.empty());
    EXPECT_NE(s.validate, nullptr);
    std::set<std::string> keys;
    for (const Option& o : s.options) {
      SCOPED_TRACE(o.key);
      EXPECT_TRUE(keys.insert(o.key).second) << "given twice";
      EXPECT_NE(o.key, "strategy");
      EXPECT_FALSE(o.group.empty());
      EXPECT_FALSE(o.meaning.empty());
      // The default is a value the key accepts, and prints back as itself.
      Config c;
      EXPECT_EQ(o.set(c, o.defaultValue), "");
      EXPECT_EQ(o.get(c), o.defaultValue);
      // A key two strategies share has one type, so its errors read the same in both.
      auto [it, fresh] = typeOf.emplace(o.key, o.type);
      EXPECT_TRUE(fresh || it->second == o.type);
      if (o.type == Type::Int) {
        EXPECT_NE(o.set(c, std::to_string(o.lo - 1)), "");
        EXPECT_NE(o.set(c, std::to_string(o.hi + 1)), "");
        EXPECT_EQ(o.set(c, std::to_string(o.hi)), "");
        EXPECT_EQ(o.get(c), std::to_string(o.hi));
      } else {
        for (const std::string& v : o.values) {
          EXPECT_EQ(o.set(c, v), "");
          EXPECT_EQ(o.get(c), v);
        }
        EXPECT_NE(o.set(c, "no_such_value"), "");
      }
    }
  }
}

// Every strategy's defaults print, parse back equal, and pass its rules on a target it supports.
TEST(Options, BareStrategyParsesToItsDefaults) {
  for (const Strategy& s : strategies()) {
    SCOPED_TRACE(s.name);
    Config bare = Config::parse("strategy=" + s.name);
    EXPECT_EQ(bare, s.defaults());
    EXPECT_EQ(Config::parse(bare.str()), bare);
    Target t = s.name == "sm90_ws_persistent" ? Target::sm90a() : Target::sm80();
    ir::DiagnosticEngine diag;
    EXPECT_TRUE(validate(bare, t, OperandInfo{}, diag)) << diag.str();
  }
}

// A bare `strategy=S` compiles the program S is for: a BF16 GEMM with either GEMM strategy, a
// softmax with rowwise.
TEST(Options, BareStrategyCompiles) {
  struct Case {
    const char* strategy;
    Target target;
    const char* example;
  };
  for (const Case& c : {Case{"sm80_multistage", Target::sm80(), "gemm_bf16"},
                        Case{"sm90_ws_persistent", Target::sm90a(), "gemm_bf16"},
                        Case{"rowwise", Target::sm80(), "softmax"}}) {
    SCOPED_TRACE(c.strategy);
    const examples::Example* e = examples::find(c.example);
    ASSERT_NE(e, nullptr);
    ir::DiagnosticEngine diag;
    auto r = kiln::compile(*e->build(), c.target, Config::parse(std::string("strategy=") + c.strategy), diag);
    ASSERT_TRUE(r) << diag.str();
    EXPECT_NE(r->ptx.find(".entry"), std::string::npos);
  }
}

TEST(Options, DidYouMean) {
  std::vector<std::string> keys = {"bm", "bn", "stages", "warps_m", "group_m"};
  EXPECT_EQ(didYouMean("bq", keys), "bm");
  EXPECT_EQ(didYouMean("stagse", keys), "stages");
  EXPECT_EQ(didYouMean("warp_m", keys), "warps_m");
  EXPECT_EQ(didYouMean("xy", keys), "");
  EXPECT_EQ(didYouMean("raster", keys), "");
}

TEST(Options, ReferenceListsEveryKeyByGroup) {
  std::string all = listText();
  nlohmann::json j = listJson();
  ASSERT_EQ(j.size(), strategies().size());
  for (size_t i = 0; i < strategies().size(); ++i) {
    const Strategy& s = strategies()[i];
    EXPECT_EQ(j[i]["strategy"], s.name);
    ASSERT_EQ(j[i]["options"].size(), s.options.size());
    for (size_t k = 0; k < s.options.size(); ++k) {
      EXPECT_EQ(j[i]["options"][k]["key"], s.options[k].key);
      EXPECT_EQ(j[i]["options"][k]["default"], s.options[k].defaultValue);
      EXPECT_NE(all.find("    " + s.options[k].key + " "), std::string::npos) << s.options[k].key;
    }
  }
  const Strategy* rows = findStrategy("rowwise");
  ASSERT_NE(rows, nullptr);
  EXPECT_EQ(listText(rows).find("sm80_multistage"), std::string::npos);
  EXPECT_NE(markdown().find("| `row_threads` | int | `32` | 1 to 1024 |"), std::string::npos);
}

// The public view (kiln/config.h) lists each table's keys in order, with their type, range and
// default, and a strategy's default config is the table's bare one.
TEST(Options, PublicViewMirrorsTheTables) {
  for (const Strategy& s : strategies()) {
    SCOPED_TRACE(s.name);
    std::vector<ConfigOption> pub = configOptions(s.name);
    ASSERT_EQ(pub.size(), s.options.size());
    for (size_t i = 0; i < pub.size(); ++i) {
      EXPECT_EQ(pub[i].key, s.options[i].key);
      EXPECT_EQ(pub[i].type, s.options[i].typeName());
      EXPECT_EQ(pub[i].defaultValue, s.options[i].defaultValue);
      EXPECT_EQ(pub[i].values, s.options[i].values);
    }
    std::optional<Config> d = defaultConfig(s.name);
    ASSERT_TRUE(d);
    EXPECT_EQ(*d, s.defaults());
    EXPECT_EQ(d->strategy, s.name);
  }
  EXPECT_TRUE(configOptions("sm100_tcgen05").empty());
  EXPECT_FALSE(defaultConfig("sm100_tcgen05"));
  std::vector<ConfigOption> row = configOptions("rowwise");
  auto threads = std::find_if(row.begin(), row.end(), [](const ConfigOption& o) { return o.key == "row_threads"; });
  ASSERT_NE(threads, row.end());
  EXPECT_EQ(threads->type, "int");
}

}  // namespace
}  // namespace kiln::options
