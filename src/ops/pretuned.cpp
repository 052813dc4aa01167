#include "ops/pretuned.h"

#include <stdexcept>

#include "pretuned_json.h"

namespace kiln::ops {

std::vector<StoredTuning> parsePretunedTable(std::string_view text, std::string_view file) {
  auto fail = [&](const std::string& what) {
    throw std::logic_error(std::string(file) + ": " + what);
  };
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) fail("not a JSON object");
  if (j.value("format", "") != "kiln pretuned table" || j.value("version", 0) != 1)
    fail("not a 'kiln pretuned table' of version 1");
  if (!j.contains("entries") || !j["entries"].is_array()) fail("no 'entries' array");
  std::vector<StoredTuning> out;
  for (size_t i = 0; i < j["entries"].size(); ++i) {
    const nlohmann::json& e = j["entries"][i];
    std::string why;
    auto key = e.is_object() && e.contains("key") ? tuningKeyFromJson(e["key"], why) : std::nullopt;
    if (!key) fail("entry " + std::to_string(i) + ": the key: " + (why.empty() ? "missing" : why));
    auto entry = e.contains("entry") ? tunedEntryFromJson(e["entry"], why) : std::nullopt;
    if (!entry) fail("entry " + std::to_string(i) + ": the entry: " + (why.empty() ? "missing" : why));
    if (entry->source != "pretuned") fail("entry " + std::to_string(i) + ": source '" + entry->source + "', not 'pretuned'");
    out.push_back({{}, *key, *entry});
  }
  return out;
}

const std::vector<StoredTuning>& pretunedEntries() {
  static const std::vector<StoredTuning> entries = parsePretunedTable(kPretunedTableText, kPretunedTableTextFile);
  return entries;
}

std::optional<TunedEntry> pretunedLookup(const TuningKey& key, const std::vector<StoredTuning>& table) {
  for (const StoredTuning& s : table) {
    TuningKey k = s.key;
    k.device.driverVersion = key.device.driverVersion;  // not compared (pretuned.h)
    if (k == key) return s.entry;
  }
  return std::nullopt;
}

}  // namespace kiln::ops
