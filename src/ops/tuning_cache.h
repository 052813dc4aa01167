#pragma once
// The on-disk tuning cache: what `kiln tune` measured fastest for a program, on a device, at a
// shape bucket (docs/tuning.md, "The tuning cache").
//
// One file per key, <dir>/<key hex>.json, holding the key's fields and the entry, so that a
// listing can say what each entry is for and a lookup can check that the file was written for the
// key it asks (a hash collision, or a file copied to another key's name, is a miss).
//  * Writes are atomic: an entry is written to a unique temporary file in the same directory and
//    renamed over the final name, so a reader sees either no entry or a whole one, never a partial
//    one, however many threads and processes store the same key at once (the last rename wins).
//  * Reads trust nothing: a file that is not JSON, is truncated, lacks a field or has one of the
//    wrong type, was written for another key, is over 1 MiB, or anything at an entry's path that is
//    not a regular file (a FIFO is never opened blocking) is a miss with a warning the user sees;
//    the next store replaces it.
//  * The cache is an optimisation: failing to write it is a warning, never an exception.
// One TuningCache may be shared by threads; each call takes its own DiagnosticEngine.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"
#include "kiln/runtime/device.h"

namespace kiln::ops {

// The device a measurement was taken on. The name tells the part (an H100 PCIe and an H200 run
// the same sm_90a code at different speeds), the SM count tells a partitioned or binned one (a MIG
// slice, a cut-down SKU: a different wave count), and the driver version the code that loads and
// schedules the kernel.
struct DeviceIdentity {
  std::string name;
  int smCount = 0;
  int driverVersion = 0;  // cuDriverGetVersion, e.g. 12080 for 12.8
  bool operator==(const DeviceIdentity&) const = default;
};

// The identity of the context's device.
DeviceIdentity deviceIdentity(const runtime::Context& context);

// The shape-bucketing rule: quarter octaves. 0 for d <= 0, else floor(4 * log2(d)), computed
// exactly in integers (the bit length of d^4, which is exact for every int64_t), so no value sits
// on the wrong side of a boundary by a rounding error. Each bucket spans a factor 2^(1/4) ~ 1.19:
// 4096 and 4500 share one (48), 4871 starts the next (49, as 2^12.25 ~ 4870.99), 6144 is in 50.
//
// Why quarter octaves: what sets one tile config apart from another is its relative waste (the
// padding of the last tile, the SMs idle in the last wave), and that changes slowly with the
// size. For large dims a factor 1.19 keeps the wave count and the padding within a few percent, so
// the winner at one size is nearly always the winner across its bucket (the entry records the dims
// it was tuned at, for a tuner that wants to re-check). A finer rule would tune far more often for
// little gain; a coarser one (octaves) would share a winner between sizes whose tile counts differ
// by 2x.
//
// Small dims, where a tile's padding changes fastest, are nearly exact: below 16 a bucket holds at
// most two values (1 | 2 | 3 | 4 | 5 | 6 | 7 | 8-9 | 10-11 | 12-13 | 14-15).
int dimBucket(int64_t d);
// dimBucket of every dim, by name.
std::map<std::string, int> bucketDims(const std::map<std::string, int64_t>& dims);

// Lower-case hex SHA-256 of the program's canonical printed text (ir::toString, without
// locations): two programs that print the same hash the same, wherever they came from.
std::string programHash(const ir::Operation& program);

// Everything that decides which schedule is fastest.
struct TuningKey {
  std::string programHash;  // programHash() of the tile program
  std::string target;       // the Target's name, e.g. "sm_90a"
  DeviceIdentity device;
  // A new Kiln may lower (and so time) a config differently. KILN_VERSION is the project version,
  // a compile definition every layer and its users get from kiln_common (cmake/KilnLayers.cmake).
  std::string kilnVersion = KILN_VERSION;
  std::map<std::string, int> bucket;  // bucketDims() of the dims it was tuned at
  // "gemv" where the family picks gemv at the dims (M <= 8), so that kiln tune searched gemv's
  // space (tune/gemv_space.h): a bucket of M may straddle the pick's edge (M = 8 and 9 share one),
  // and a gemv winner must not serve the rows the tensor cores run, nor the other way. Empty
  // otherwise, and then not hashed, so that every other key (the pretuned table's) is unchanged.
  std::string space;
  // Lower-case hex SHA-256 over every field, each length-prefixed (as cache_key.cpp does), so no
  // two different keys hash the same bytes.
  std::string hex() const;
  bool operator==(const TuningKey&) const = default;
};

// The key for `program` run on `device` for target `target` at `dims` (`space` from the family's
// untuned pick there).
TuningKey tuningKey(const ir::Operation& program, std::string target, DeviceIdentity device,
                    const std::map<std::string, int64_t>& dims);

// A config the search also checked correct, beside the winner: what the bucketing rule chooses
// from at other dims of the bucket (ops/bucket_reuse.h).
struct TunedAlternate {
  std::string config;         // a canonical config line
  double microseconds = 0;    // its measured time at the entry's dims
  bool operator==(const TunedAlternate&) const = default;
};

// What the cache says about a key.
struct TunedEntry {
  std::string config;                   // the winner, as a canonical config line (Config::str())
  double microseconds = 0;              // its measured time per launch
  std::map<std::string, int64_t> dims;  // the dims it was tuned at (the bucket only rounds them)
  int candidatesTimed = 0;              // the schedules that compiled and were timed
  int candidatesTotal = 0;              // the schedules the search considered
  double tuneSeconds = 0;               // how long the search took
  std::string date;                     // when, ISO 8601 UTC ("2025-01-31T12:00:00Z")
  std::string source;                   // "tuned" (measured here) or "pretuned" (shipped)
  // The next fastest timed configs, each checked correct (the field "alternates", absent when
  // none: entries written before it, pretuned ones).
  std::vector<TunedAlternate> alternates;
  bool operator==(const TunedEntry&) const = default;
};

nlohmann::json toJson(const DeviceIdentity& device);
nlohmann::json toJson(const TuningKey& key);
nlohmann::json toJson(const TunedEntry& entry);
// The parsed value, or nullopt with `why`, a sentence naming the first field that is missing or of
// the wrong type ("the field 'microseconds' is a string, not a number").
std::optional<DeviceIdentity> deviceIdentityFromJson(const nlohmann::json& j, std::string& why);
std::optional<TuningKey> tuningKeyFromJson(const nlohmann::json& j, std::string& why);
std::optional<TunedEntry> tunedEntryFromJson(const nlohmann::json& j, std::string& why);

// An entry as list() finds it.
struct StoredTuning {
  std::filesystem::path path;
  TuningKey key;
  TunedEntry entry;
};

class TuningCache {
 public:
  explicit TuningCache(std::filesystem::path dir);

  // $KILN_TUNE_DIR, else the "tuning" folder of the compile cache's default directory
  // (backend::CompileCache::defaultDir(): $KILN_CACHE_DIR, $XDG_CACHE_HOME/kiln, ~/.cache/kiln).
  static std::filesystem::path defaultDir();

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path entryPath(const TuningKey& key) const;

  // The stored entry, or nullopt on a miss or a rejected entry (reported as a warning).
  std::optional<TunedEntry> lookup(const TuningKey& key, ir::DiagnosticEngine& diag) const;
  // Stores `entry` under `key`, replacing what was there; false, with a warning, when it cannot
  // be written or would not read back (a non-finite time, an unknown source, text not UTF-8).
  bool store(const TuningKey& key, const TunedEntry& entry, ir::DiagnosticEngine& diag) const;
  // Every entry in the directory, sorted by file name; a rejected one (damaged, foreign, or whose
  // key does not hash to its file name) is skipped with a warning.
  std::vector<StoredTuning> list(ir::DiagnosticEngine& diag) const;
  // Removes the entries and the temporaries a writer that died may leave (.<hex>.tmp.<pid>.<n>),
  // nothing else: any other file in the directory is the user's. Returns how many were removed; a
  // file that cannot be removed is a warning.
  size_t clear(ir::DiagnosticEngine& diag) const;

 private:
  std::filesystem::path dir_;
};

}  // namespace kiln::ops
