// Pretuned tables: the built-in one parses, every entry is for a built-in example program of this
// Kiln version and holds a config that parses and validates; a malformed table is refused naming
// the entry; a lookup matches every key field but the driver version.
#include "ops/pretuned.h"

#include <gtest/gtest.h>

#include <set>

#include "examples/examples.h"
#include "kiln/config.h"
#include "kiln/target.h"

namespace kiln::ops {
namespace {

const char* kTable = R"({"format": "kiln pretuned table", "version": 1, "entries": [
  {"key": {"programHash": "ab", "target": "sm_90a",
           "device": {"name": "NVIDIA H200", "smCount": 132, "driverVersion": 13000},
           "kilnVersion": "0.1.0", "bucket": {"K": 40, "M": 40, "N": 35}},
   "entry": {"config": "strategy=sm90_ws_persistent bm=64 bn=64 bk=64 stages=13", "microseconds": 9.5,
             "dims": {"K": 1024, "M": 1024, "N": 480}, "candidatesTimed": 8, "candidatesTotal": 40,
             "tuneSeconds": 4.2, "date": "2026-12-04T21:00:00Z", "source": "pretuned"}}]})";

TEST(Pretuned, TheBuiltInTableIsForBuiltInProgramsOfThisVersion) {
  std::set<std::string> hashes;
  for (const auto& e : examples::all()) {
    auto m = e.build();
    for (const auto& op : m->body().operations())
      if (op->is("tile.program")) hashes.insert(programHash(*op));
  }
  for (const StoredTuning& s : pretunedEntries()) {
    SCOPED_TRACE(s.entry.config);
    // A changed example program hashes anew: its entries must be measured again, not kept stale.
    EXPECT_TRUE(hashes.count(s.key.programHash)) << "no built-in example hashes to " << s.key.programHash;
    EXPECT_EQ(s.key.kilnVersion, KILN_VERSION);
    EXPECT_EQ(s.key.bucket, bucketDims(s.entry.dims));
    ir::DiagnosticEngine diag;
    auto c = Config::parse(s.entry.config, diag);
    ASSERT_TRUE(c) << diag.str();
    auto t = Target::byName(s.key.target);
    ASSERT_TRUE(t) << s.key.target;
    EXPECT_TRUE(validate(*c, *t, {}, diag)) << diag.str();
  }
}

TEST(Pretuned, AMalformedTableNamesTheEntry) {
  EXPECT_THROW(parsePretunedTable("[]", "t.json"), std::logic_error);
  EXPECT_THROW(parsePretunedTable(R"({"format": "kiln tuning entry", "version": 1, "entries": []})", "t.json"),
               std::logic_error);
  std::string noSource = kTable;
  noSource.replace(noSource.find("\"pretuned\""), 10, "\"tuned\"");
  try {
    parsePretunedTable(noSource, "t.json");
    FAIL() << "an entry whose source is not 'pretuned' was accepted";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "t.json: entry 0: source 'tuned', not 'pretuned'");
  }
  std::string noTime = kTable;
  noTime.replace(noTime.find("9.5"), 3, "\"fast\"");
  try {
    parsePretunedTable(noTime, "t.json");
    FAIL() << "an entry with a string time was accepted";
  } catch (const std::logic_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("t.json: entry 0: the entry: ", 0), 0u) << e.what();
  }
}

TEST(Pretuned, ALookupComparesEveryFieldButTheDriver) {
  const auto table = parsePretunedTable(kTable, "t.json");
  ASSERT_EQ(table.size(), 1u);
  TuningKey key = table[0].key;
  key.device.driverVersion = 12080;
  auto hit = pretunedLookup(key, table);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->microseconds, 9.5);
  for (auto change : std::vector<std::function<void(TuningKey&)>>{
           [](TuningKey& k) { k.programHash = "cd"; }, [](TuningKey& k) { k.target = "sm_90"; },
           [](TuningKey& k) { k.device.name = "NVIDIA H100"; }, [](TuningKey& k) { k.device.smCount = 114; },
           [](TuningKey& k) { k.kilnVersion = "0.2.0"; }, [](TuningKey& k) { k.bucket["M"] = 41; }}) {
    TuningKey other = table[0].key;
    change(other);
    EXPECT_FALSE(pretunedLookup(other, table));
  }
}

}  // namespace
}  // namespace kiln::ops
