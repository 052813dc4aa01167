#pragma once
// What `kiln cache stats|clear|verify` does to a compile cache directory (compile_cache.h).
//
// Only Kiln's own files are touched: entries named <64 hex digits>.kcubin and the temporaries a
// writer that died may leave (.<hex>.tmp.<pid>.<n>). Anything else in the directory is the
// user's and is listed as "other", never removed.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kiln::backend {

enum class CacheFileKind { Entry, Temporary, Other };

// How Kiln sees a file name in the cache directory.
CacheFileKind classifyCacheFile(const std::string& fileName);

struct CacheStats {
  bool exists = false;  // the directory is there
  int64_t entries = 0, entryBytes = 0;
  int64_t temporaries = 0, temporaryBytes = 0;
  int64_t others = 0;  // files Kiln did not write (left alone)
};

// Counts what is in `dir`; nullopt with `error` when it cannot be listed.
std::optional<CacheStats> cacheStats(const std::filesystem::path& dir, std::string& error);

// Removes Kiln's entries and temporaries from `dir`, nothing else; returns how many were removed,
// or nullopt with `error` (which names the file) on the first one that cannot be.
std::optional<int64_t> clearCache(const std::filesystem::path& dir, std::string& error);

struct BadEntry {
  std::filesystem::path path;
  std::string why;  // "truncated: ...", "corrupted: ...", "foreign: ...", "not a regular file"
};

// Checks every entry of `dir` as a lookup would (header, key = its file name, payload checksum,
// payload decodes); returns the bad ones, or nullopt with `error` when `dir` cannot be listed.
// `checked` receives the number of entries looked at.
std::optional<std::vector<BadEntry>> verifyCache(const std::filesystem::path& dir, int64_t& checked, std::string& error);

}  // namespace kiln::backend
