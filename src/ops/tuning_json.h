#pragma once
// Internal to the tuning cache (tuning_cache.cpp, tuning_json.cpp): the JSON codec of its keys and
// entries with the field path a message names ("key.device.smCount"), and the entry file's form:
//
//   {"format": "kiln tuning entry", "version": 1, "key": {...}, "entry": {...}}
//
// with the key and the entry as toJson writes them. Decoding checks every field and says which is
// wrong, so a damaged or foreign file is rejected with a sentence, never trusted.
#include <optional>
#include <string>
#include <utility>

#include "ops/tuning_cache.h"

namespace kiln::ops {

// The key or the entry in `j`, or nullopt with `why`; `prefix` is where `j` sits ("key.").
std::optional<TuningKey> keyFromJson(const nlohmann::json& j, const std::string& prefix, std::string& why);
std::optional<TunedEntry> entryFromJson(const nlohmann::json& j, const std::string& prefix, std::string& why);

// An entry file's JSON.
nlohmann::json entryFileJson(const TuningKey& key, const TunedEntry& entry);
// The key and entry an entry file's text holds, or nullopt with `why` ("damaged: ..." or
// "foreign: ...").
std::optional<std::pair<TuningKey, TunedEntry>> decodeEntryFile(const std::string& text, std::string& why);

}  // namespace kiln::ops
