// The tuning cache's JSON: keys and entries round-trip, and a missing field or one of the wrong
// type or value is named in the sentence that rejects it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "ops/tuning_cache.h"
#include "tests/unit/ops/tuning_samples.h"

namespace kiln::ops {
namespace {
using nlohmann::json;

// ---- JSON ---------------------------------------------------------------------------------------

TEST(TuningCacheJson, RoundTrips) {
  std::string why;
  auto e = tunedEntryFromJson(toJson(sampleEntry()), why);
  ASSERT_TRUE(e) << why;
  EXPECT_EQ(*e, sampleEntry());
  auto k = tuningKeyFromJson(toJson(sampleKey()), why);
  ASSERT_TRUE(k) << why;
  EXPECT_EQ(*k, sampleKey());
  EXPECT_FALSE(toJson(sampleKey()).contains("space"));  // as keys written before the field
  TuningKey gemv = sampleKey();
  gemv.space = "gemv";
  auto g = tuningKeyFromJson(toJson(gemv), why);
  ASSERT_TRUE(g) << why;
  EXPECT_EQ(*g, gemv);
  json wrong = toJson(gemv);
  wrong["space"] = 3;
  EXPECT_FALSE(tuningKeyFromJson(wrong, why));
  EXPECT_EQ(why, "the field 'space' is a number, not a string");
  auto d = deviceIdentityFromJson(toJson(sampleKey().device), why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(*d, sampleKey().device);
  // With the bucketing rule's alternates (none: the field is left out, as older entries have it).
  TunedEntry withAlternates = sampleEntry();
  withAlternates.alternates = {{"strategy=sm90_ws_persistent bm=128 bn=128 bk=64 stages=6", 420.5},
                               {"strategy=sm90_ws_persistent bm=256 bn=128 bk=64 stages=4", 431}};
  auto a = tunedEntryFromJson(toJson(withAlternates), why);
  ASSERT_TRUE(a) << why;
  EXPECT_EQ(*a, withAlternates);
  EXPECT_FALSE(toJson(sampleEntry()).contains("alternates"));
  // Integral times are numbers too.
  json j = toJson(sampleEntry());
  j["microseconds"] = 400;
  ASSERT_TRUE(tunedEntryFromJson(j, why)) << why;
}

TEST(TuningCacheJson, MissingFieldsAreNamed) {
  for (const char* name : {"config", "microseconds", "dims", "candidatesTimed", "candidatesTotal", "tuneSeconds",
                           "date", "source"}) {
    json j = toJson(sampleEntry());
    ASSERT_EQ(j.erase(name), 1u) << name;
    std::string why;
    EXPECT_FALSE(tunedEntryFromJson(j, why)) << name;
    EXPECT_EQ(why, fmt::format("the field '{}' is missing", name));
  }
  for (const char* name : {"programHash", "target", "device", "kilnVersion", "bucket"}) {
    json j = toJson(sampleKey());
    ASSERT_EQ(j.erase(name), 1u) << name;
    std::string why;
    EXPECT_FALSE(tuningKeyFromJson(j, why)) << name;
    EXPECT_EQ(why, fmt::format("the field '{}' is missing", name));
  }
  json j = toJson(sampleKey());
  j["device"].erase("smCount");
  std::string why;
  EXPECT_FALSE(tuningKeyFromJson(j, why));
  EXPECT_EQ(why, "the field 'device.smCount' is missing");
}

TEST(TuningCacheJson, WrongTypesAndValuesAreNamed) {
  const std::pair<std::function<void(json&)>, std::string> entryCases[] = {
      {[](json& j) { j["config"] = 5; }, "the field 'config' is a number, not a string"},
      {[](json& j) { j["microseconds"] = "fast"; }, "the field 'microseconds' is a string, not a number"},
      {[](json& j) { j["microseconds"] = -1.5; }, "the field 'microseconds' is -1.5; it cannot be negative"},
      {[](json& j) { j["microseconds"] = NAN; }, "the field 'microseconds' is not a finite number"},
      {[](json& j) { j["dims"] = json::array({1, 2}); }, "the field 'dims' is an array, not an object"},
      {[](json& j) { j["dims"]["M"] = 4096.5; }, "the field 'dims.M' is a number with a fraction, not an integer"},
      {[](json& j) { j["dims"]["M"] = UINT64_MAX; },
       "the field 'dims.M' is 18446744073709551615, outside [-9223372036854775808, 9223372036854775807]"},
      {[](json& j) { j["candidatesTimed"] = int64_t(1) << 40; },
       "the field 'candidatesTimed' is 1099511627776, outside [-2147483648, 2147483647]"},
      {[](json& j) { j["candidatesTotal"] = true; }, "the field 'candidatesTotal' is a boolean, not an integer"},
      {[](json& j) { j["candidatesTimed"] = 49; },
       "the fields 'candidatesTimed' (49) and 'candidatesTotal' (48) do not satisfy 0 <= timed <= total"},
      {[](json& j) { j["date"] = nullptr; }, "the field 'date' is null, not a string"},
      {[](json& j) { j["source"] = "guessed"; }, "the field 'source' is \"guessed\", not \"tuned\" or \"pretuned\""},
      {[](json& j) { j = json::array(); }, "the entry is an array, not an object"},
      {[](json& j) { j["alternates"] = "none"; }, "the field 'alternates' is a string, not an array"},
      {[](json& j) { j["alternates"] = json::array({"bm=64"}); }, "the field 'alternates[0]' is a string, not an object"},
      {[](json& j) { j["alternates"] = json::array({{{"config", "bm=64"}, {"microseconds", 1.0}}, {{"config", "bm=128"}}}); },
       "the field 'alternates[1].microseconds' is missing"},
      {[](json& j) { j["alternates"] = json::array({{{"config", "bm=64"}, {"microseconds", -2.0}}}); },
       "the field 'alternates[0].microseconds' is -2; it cannot be negative"},
  };
  for (const auto& [damage, want] : entryCases) {
    json j = toJson(sampleEntry());
    damage(j);
    std::string why;
    EXPECT_FALSE(tunedEntryFromJson(j, why)) << want;
    EXPECT_EQ(why, want);
  }
  const std::pair<std::function<void(json&)>, std::string> keyCases[] = {
      {[](json& j) { j["device"]["smCount"] = "132"; }, "the field 'device.smCount' is a string, not an integer"},
      {[](json& j) { j["device"] = "H200"; }, "the field 'device' is a string, not an object"},
      {[](json& j) { j["bucket"]["M"] = int64_t(1) << 33; },
       "the field 'bucket.M' is 8589934592, outside [-2147483648, 2147483647]"},
      {[](json& j) { j["target"] = json::object(); }, "the field 'target' is an object, not a string"},
  };
  for (const auto& [damage, want] : keyCases) {
    json j = toJson(sampleKey());
    damage(j);
    std::string why;
    EXPECT_FALSE(tuningKeyFromJson(j, why)) << want;
    EXPECT_EQ(why, want);
  }
  std::string why;
  json pretuned = toJson(sampleEntry());
  pretuned["source"] = "pretuned";
  EXPECT_TRUE(tunedEntryFromJson(pretuned, why)) << why;
}

}  // namespace
}  // namespace kiln::ops
