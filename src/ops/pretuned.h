#pragma once
// Pretuned tables: winners `kiln tune` measured on a device Kiln ships data for, compiled in from
// src/ops/data/pretuned.json and used when the local tuning cache has no entry for a key
// (docs/tuning.md, "Pretuned tables"). The table is the tuning cache's entries gathered into one
// file ({"format": "kiln pretuned table", "version": 1, "entries": [{"key": ..., "entry": ...}]}),
// made by scripts/pretuned-table.py from the folder a GPU run tuned into.
//
// A pretuned entry answers a key with the same program, target, device name and SM count, Kiln
// version and shape bucket; the driver version is not compared (the table was measured on one
// driver, and a winner rarely moves with the driver; a local `kiln tune` replaces it where it does).
#include <optional>
#include <string_view>
#include <vector>

#include "ops/tuning_cache.h"

namespace kiln::ops {

// The table's entries, parsed once. The data is built in, so a malformed table is Kiln's bug: it
// throws std::logic_error naming the entry (a unit test parses it, so none reaches a user).
const std::vector<StoredTuning>& pretunedEntries();

// Parses a table's text (the built-in one, or another in tests).
std::vector<StoredTuning> parsePretunedTable(std::string_view text, std::string_view file);

// The entry of `table` (the built-in one by default) for `key`, driver version aside, or nullopt.
std::optional<TunedEntry> pretunedLookup(const TuningKey& key, const std::vector<StoredTuning>& table = pretunedEntries());

}  // namespace kiln::ops
