// The tuning cache (see tuning_cache.h). An entry file is one JSON object:
//
//   {"format": "kiln tuning entry", "version": 1, "key": {...}, "entry": {...}}
//
// with the key and the entry as toJson writes them. It is read with the same care as the compile
// cache's entries (compile_cache.cpp): never opened blocking, bounded, and checked field by field.
#include "ops/tuning_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "backend/compile_cache.h"
#include "backend/sha256.h"
#include "kiln/ir/printer.h"

namespace kiln::ops {
namespace fs = std::filesystem;
using nlohmann::json;
namespace {

// Entries larger than this are not read: a real one is well under a kilobyte, and a foreign file
// must not make us allocate without bound.
constexpr off_t kMaxEntryBytes = off_t(1) << 20;
constexpr const char* kFormat = "kiln tuning entry";
constexpr int64_t kFormatVersion = 1;
constexpr size_t kHexDigits = 64;
constexpr std::string_view kEntrySuffix = ".json";

// ---- The key's hash -------------------------------------------------------------------------

void field(backend::Sha256& h, std::string_view s) {
  uint64_t n = s.size();
  uint8_t len[8];
  for (int i = 0; i < 8; ++i) len[i] = uint8_t(n >> (8 * i));
  h.update(len, sizeof len);
  h.update(s);
}

// ---- Reading JSON fields, with a sentence for the first one that is wrong ---------------------

std::string_view article(const json& j) {
  switch (j.type()) {
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::null: return "null";
    case json::value_t::number_float: return "a number with a fraction";
    default: return "a number";
  }
}

// The fields of one JSON object. `prefix` names where it sits ("key.device."), so a message says
// which field of which part is wrong. Every getter returns false, and sets `why`, on the first
// field that is missing or of the wrong type.
class Fields {
 public:
  Fields(const json& j, std::string prefix, std::string& why) : j_(j), prefix_(std::move(prefix)), why_(why) {}

  // False, with `why`, when the value itself is not an object; `name` names it at the top level.
  bool isObject(std::string_view name) {
    if (j_.is_object()) return true;
    std::string what = prefix_.empty() ? std::string(name) : "field '" + prefix_.substr(0, prefix_.size() - 1) + "'";
    return fail(fmt::format("the {} is {}, not an object", what, article(j_)));
  }

  const json* get(const char* name) {
    auto it = j_.find(name);
    if (it != j_.end()) return &*it;
    fail(fmt::format("the field '{}{}' is missing", prefix_, name));
    return nullptr;
  }

  bool string(const char* name, std::string& out) {
    const json* v = get(name);
    if (!v || !is(name, *v, v->is_string(), "a string")) return false;
    out = v->get<std::string>();
    return true;
  }

  // A time: a finite number, not negative (JSON has no infinities, but a value built in memory
  // may hold one, or a NaN).
  bool seconds(const char* name, double& out) {
    const json* v = get(name);
    if (!v || !is(name, *v, v->is_number(), "a number")) return false;
    out = v->get<double>();
    if (!std::isfinite(out)) return fail(fmt::format("the field '{}{}' is not a finite number", prefix_, name));
    if (out < 0) return fail(fmt::format("the field '{}{}' is {}; it cannot be negative", prefix_, name, out));
    return true;
  }

  template <typename Int>
  bool integer(const char* name, Int& out) {
    const json* v = get(name);
    return v && integerValue(prefix_ + name, *v, out);
  }

  // An object whose every member is an integer.
  template <typename Int>
  bool integerMap(const char* name, std::map<std::string, Int>& out) {
    const json* v = get(name);
    if (!v || !is(name, *v, v->is_object(), "an object")) return false;
    out.clear();
    for (auto it = v->begin(); it != v->end(); ++it)
      if (!integerValue(fmt::format("{}{}.{}", prefix_, name, it.key()), it.value(), out[it.key()])) return false;
    return true;
  }

 private:
  bool fail(std::string why) {
    why_ = std::move(why);
    return false;
  }

  bool is(const char* name, const json& v, bool ok, std::string_view want) {
    return ok || fail(fmt::format("the field '{}{}' is {}, not {}", prefix_, name, article(v), want));
  }

  template <typename Int>
  bool integerValue(const std::string& name, const json& v, Int& out) {
    if (!v.is_number_integer()) return fail(fmt::format("the field '{}' is {}, not an integer", name, article(v)));
    constexpr int64_t lo = std::numeric_limits<Int>::min(), hi = std::numeric_limits<Int>::max();
    bool fits = v.is_number_unsigned() ? v.get<uint64_t>() <= static_cast<uint64_t>(hi)
                                       : v.get<int64_t>() >= lo && v.get<int64_t>() <= hi;
    if (!fits) return fail(fmt::format("the field '{}' is {}, outside [{}, {}]", name, v.dump(), lo, hi));
    out = static_cast<Int>(v.is_number_unsigned() ? static_cast<int64_t>(v.get<uint64_t>()) : v.get<int64_t>());
    return true;
  }

  const json& j_;
  std::string prefix_;
  std::string& why_;
};

std::optional<DeviceIdentity> deviceFrom(const json& j, const std::string& prefix, std::string& why) {
  Fields f(j, prefix, why);
  DeviceIdentity d;
  if (!f.isObject("device") || !f.string("name", d.name) || !f.integer("smCount", d.smCount) ||
      !f.integer("driverVersion", d.driverVersion))
    return std::nullopt;
  return d;
}

std::optional<TuningKey> keyFrom(const json& j, const std::string& prefix, std::string& why) {
  Fields f(j, prefix, why);
  TuningKey k;
  const json* device = nullptr;
  std::optional<DeviceIdentity> d;
  if (!f.isObject("key") || !f.string("programHash", k.programHash) || !f.string("target", k.target) ||
      !(device = f.get("device")) || !(d = deviceFrom(*device, prefix + "device.", why)) ||
      !f.string("kilnVersion", k.kilnVersion) || !f.integerMap("bucket", k.bucket))
    return std::nullopt;
  k.device = std::move(*d);
  return k;
}

std::optional<TunedEntry> entryFrom(const json& j, const std::string& prefix, std::string& why) {
  Fields f(j, prefix, why);
  TunedEntry e;
  if (!f.isObject("entry") || !f.string("config", e.config) || !f.seconds("microseconds", e.microseconds) ||
      !f.integerMap("dims", e.dims) || !f.integer("candidatesTimed", e.candidatesTimed) ||
      !f.integer("candidatesTotal", e.candidatesTotal) || !f.seconds("tuneSeconds", e.tuneSeconds) ||
      !f.string("date", e.date) || !f.string("source", e.source))
    return std::nullopt;
  if (e.candidatesTimed < 0 || e.candidatesTotal < e.candidatesTimed) {
    why = fmt::format("the fields '{0}candidatesTimed' ({1}) and '{0}candidatesTotal' ({2}) do not satisfy "
                      "0 <= timed <= total",
                      prefix, e.candidatesTimed, e.candidatesTotal);
    return std::nullopt;
  }
  if (e.source != "tuned" && e.source != "pretuned") {
    why = fmt::format("the field '{}source' is \"{}\", not \"tuned\" or \"pretuned\"", prefix, e.source);
    return std::nullopt;
  }
  return e;
}

// ---- Entry files --------------------------------------------------------------------------------

json fileJson(const TuningKey& key, const TunedEntry& entry) {
  return json{{"format", kFormat}, {"version", kFormatVersion}, {"key", toJson(key)}, {"entry", toJson(entry)}};
}

// The key and entry an entry file holds, or nullopt with `why` ("damaged: ..." or "foreign: ...").
std::optional<std::pair<TuningKey, TunedEntry>> decodeFile(const std::string& text, std::string& why) {
  if (text.empty()) {
    why = "damaged: the file is empty";
    return std::nullopt;
  }
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    // A truncated entry fails at the end of its text; anything else is a syntax error inside it.
    why = e.byte >= text.size() ? fmt::format("damaged: the JSON ends early, after {} bytes (truncated?)", text.size())
                                : fmt::format("damaged: not JSON (a syntax error at byte {})", e.byte);
    return std::nullopt;
  } catch (const json::exception& e) {
    why = fmt::format("damaged: not JSON ({})", e.what());
    return std::nullopt;
  }
  if (!doc.is_object() || !doc.contains("format") || doc["format"] != kFormat) {
    why = "foreign: not a Kiln tuning entry (no \"format\": \"kiln tuning entry\")";
    return std::nullopt;
  }
  if (!doc.contains("version") || doc["version"] != kFormatVersion) {
    why = fmt::format("foreign: tuning entry format version {}, this Kiln reads version {}",
                      doc.contains("version") ? doc["version"].dump() : "(none)", kFormatVersion);
    return std::nullopt;
  }
  std::string fieldWhy;
  Fields f(doc, "", fieldWhy);
  const json *k = nullptr, *e = nullptr;
  std::optional<TuningKey> key;
  std::optional<TunedEntry> entry;
  if (!(k = f.get("key")) || !(key = keyFrom(*k, "key.", fieldWhy)) || !(e = f.get("entry")) ||
      !(entry = entryFrom(*e, "entry.", fieldWhy))) {
    why = "damaged: " + fieldWhy;
    return std::nullopt;
  }
  return std::pair{std::move(*key), std::move(*entry)};
}

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

// nullopt when there is no entry. An entry we cannot read, or anything at its path that is not a
// regular file (a FIFO would block a plain open forever, a device would read without end), is
// reported as a warning the user sees and treated as a miss.
std::optional<std::string> readFile(const fs::path& path, ir::DiagnosticEngine& diag) {
  Fd f{open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (f.fd < 0) {
    if (errno != ENOENT && errno != ENOTDIR)  // no entry, or no cache directory yet
      diag.warning(ir::Location::unknown()) << "tuning cache: cannot read " << path.string() << ": "
                                            << std::strerror(errno) << "; treating it as a miss";
    return std::nullopt;
  }
  struct stat st {};
  if (fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    diag.warning(ir::Location::unknown()) << "tuning cache: " << path.string()
                                          << " is not a regular file; treating it as a miss (remove it)";
    return std::nullopt;
  }
  if (st.st_size > kMaxEntryBytes) {
    diag.warning(ir::Location::unknown()) << "tuning cache: rejected " << path.string() << " (" << st.st_size
                                          << " bytes, larger than any entry Kiln writes); treating it as a miss";
    return std::nullopt;
  }
  fcntl(f.fd, F_SETFL, fcntl(f.fd, F_GETFL) & ~O_NONBLOCK);
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < bytes.size()) {
    ssize_t n = read(f.fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  bytes.resize(got);  // a short read shows up as a truncated entry
  return bytes;
}

void rejected(ir::DiagnosticEngine& diag, const fs::path& path, const std::string& why) {
  diag.warning(ir::Location::unknown()) << "tuning cache: rejected " << path.string() << " (" << why
                                        << "); treating it as a miss (the next store replaces it)";
}

bool writeAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) errno = EIO;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool isHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool isEntryName(std::string_view n) {
  return n.size() == kHexDigits + kEntrySuffix.size() && n.ends_with(kEntrySuffix) && isHex(n.substr(0, kHexDigits));
}

// .<64 hex>.tmp.<pid>.<n>, as store() names its temporaries.
bool isTemporaryName(std::string_view n) {
  return n.size() > kHexDigits + 6 && n[0] == '.' && isHex(n.substr(1, kHexDigits)) &&
         n.substr(1 + kHexDigits, 5) == ".tmp.";
}

// The entries in `dir` (and the temporaries too, when asked), by name; none, quietly, when there
// is no directory, and none with a warning when it cannot be listed.
std::vector<fs::path> kilnFiles(const fs::path& dir, bool temporaries, ir::DiagnosticEngine& diag) {
  std::vector<fs::path> paths;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return paths;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (isEntryName(name) || (temporaries && isTemporaryName(name))) paths.push_back(it->path());
  }
  if (ec) {
    diag.warning(ir::Location::unknown()) << "tuning cache: cannot list " << dir.string() << ": " << ec.message();
    return {};
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

}  // namespace

// ---- Buckets, hashes, keys ----------------------------------------------------------------------

int dimBucket(int64_t d) {
  if (d <= 0) return 0;
  // floor(4 * log2(d)) = floor(log2(d^4)), the index of d^4's highest set bit. d < 2^63, so d^2
  // fits in 128 bits and d^4 in 256: square d^2 in 64-bit limbs (each partial sum fits 128 bits).
  using u128 = unsigned __int128;
  const u128 sq = u128(uint64_t(d)) * uint64_t(d);
  const uint64_t a[2] = {uint64_t(sq), uint64_t(sq >> 64)};
  uint64_t p[4] = {};
  for (int i = 0; i < 2; ++i) {
    u128 carry = 0;
    for (int j = 0; j < 2; ++j) {
      u128 t = u128(a[i]) * a[j] + p[i + j] + carry;
      p[i + j] = uint64_t(t);
      carry = t >> 64;
    }
    p[i + 2] = uint64_t(carry);
  }
  int top = 3;
  while (p[top] == 0) --top;  // p[0] >= 1, as d >= 1
  return 64 * top + std::bit_width(p[top]) - 1;
}

std::map<std::string, int> bucketDims(const std::map<std::string, int64_t>& dims) {
  std::map<std::string, int> out;
  for (const auto& [name, d] : dims) out[name] = dimBucket(d);
  return out;
}

std::string programHash(const ir::Operation& program) {
  return backend::toHex(backend::Sha256::of(ir::toString(program)));
}

DeviceIdentity deviceIdentity(const runtime::Context& context) {
  const runtime::DeviceProperties& p = context.properties();
  return {p.name, p.smCount, context.driver().version()};
}

std::string TuningKey::hex() const {
  backend::Sha256 h;
  field(h, "kiln tuning key v1");
  field(h, programHash);
  field(h, target);
  field(h, device.name);
  field(h, std::to_string(device.smCount));
  field(h, std::to_string(device.driverVersion));
  field(h, kilnVersion);
  field(h, std::to_string(bucket.size()));
  for (const auto& [name, b] : bucket) {
    field(h, name);
    field(h, std::to_string(b));
  }
  return backend::toHex(h.finish());
}

TuningKey tuningKey(const ir::Operation& program, std::string target, DeviceIdentity device,
                    const std::map<std::string, int64_t>& dims) {
  TuningKey k;
  k.programHash = programHash(program);
  k.target = std::move(target);
  k.device = std::move(device);
  k.bucket = bucketDims(dims);
  return k;
}

// ---- JSON ---------------------------------------------------------------------------------------

json toJson(const DeviceIdentity& d) {
  return json{{"name", d.name}, {"smCount", d.smCount}, {"driverVersion", d.driverVersion}};
}

json toJson(const TuningKey& k) {
  return json{{"programHash", k.programHash},
              {"target", k.target},
              {"device", toJson(k.device)},
              {"kilnVersion", k.kilnVersion},
              {"bucket", json(k.bucket)}};
}

json toJson(const TunedEntry& e) {
  return json{{"config", e.config},
              {"microseconds", e.microseconds},
              {"dims", json(e.dims)},
              {"candidatesTimed", e.candidatesTimed},
              {"candidatesTotal", e.candidatesTotal},
              {"tuneSeconds", e.tuneSeconds},
              {"date", e.date},
              {"source", e.source}};
}

std::optional<DeviceIdentity> deviceIdentityFromJson(const json& j, std::string& why) { return deviceFrom(j, "", why); }
std::optional<TuningKey> tuningKeyFromJson(const json& j, std::string& why) { return keyFrom(j, "", why); }
std::optional<TunedEntry> tunedEntryFromJson(const json& j, std::string& why) { return entryFrom(j, "", why); }

// ---- The cache ----------------------------------------------------------------------------------

TuningCache::TuningCache(fs::path dir) : dir_(std::move(dir)) {}

fs::path TuningCache::defaultDir() {
  if (auto d = env("KILN_TUNE_DIR")) return fs::path(*d);
  return backend::CompileCache::defaultDir() / "tuning";
}

fs::path TuningCache::entryPath(const TuningKey& key) const { return dir_ / (key.hex() + std::string(kEntrySuffix)); }

std::optional<TunedEntry> TuningCache::lookup(const TuningKey& key, ir::DiagnosticEngine& diag) const {
  fs::path path = entryPath(key);
  auto text = readFile(path, diag);
  if (!text) return std::nullopt;
  std::string why;
  auto stored = decodeFile(*text, why);
  if (stored && !(stored->first == key)) {
    // Its name is this key's hash, but it was written for another key: a file copied or renamed
    // here, or (never seen) a SHA-256 collision.
    why = "foreign: written for a different key";
    stored.reset();
  }
  if (!stored) {
    rejected(diag, path, why);
    return std::nullopt;
  }
  return std::move(stored->second);
}

bool TuningCache::store(const TuningKey& key, const TunedEntry& entry, ir::DiagnosticEngine& diag) const {
  auto fail = [&](const std::string& what) {
    diag.warning(ir::Location::unknown()) << "tuning cache: cannot store an entry in " << dir_.string() << ": "
                                          << what << "; continuing without caching it";
    return false;
  };
  // What is stored must read back as exactly what was given: check it as a lookup would, before
  // anything is written (a NaN time would be written as null, a bad source rejected on reading).
  std::string why;
  if (!keyFrom(toJson(key), "key.", why) || !entryFrom(toJson(entry), "entry.", why))
    return fail("the entry would not read back (" + why + ")");
  std::string text;
  try {
    text = fileJson(key, entry).dump(2) + "\n";
  } catch (const json::exception&) {  // dump() refuses strings that are not UTF-8
    return fail("a field of the key or the entry is not valid UTF-8");
  }
  auto back = decodeFile(text, why);
  if (!back) return fail("the entry would not read back (" + why + ")");
  if (!(back->first == key) || !(back->second == entry)) return fail("the entry would not read back unchanged");

  std::error_code ec;
  fs::create_directories(dir_, ec);  // concurrent creators are fine: existing is not an error
  if (ec) return fail(ec.message());

  // Unique per process and per call, so concurrent writers never share a temporary file; a name
  // left by a writer that died (its pid reused) is skipped.
  static std::atomic<uint64_t> counter{0};
  const std::string hex = key.hex();
  fs::path final = entryPath(key);
  fs::path tmp;
  Fd f;
  for (int attempt = 0; attempt < 16 && f.fd < 0; ++attempt) {
    tmp = dir_ / fmt::format(".{}.tmp.{}.{}", hex, getpid(), counter.fetch_add(1));
    f.fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (f.fd < 0 && errno != EEXIST) break;
  }
  if (f.fd < 0) {
    int err = errno;
    return fail(fmt::format("{}: {}", tmp.string(), std::strerror(err)));
  }
  bool ok = writeAll(f.fd, text);
  int err = ok ? 0 : errno;
  if (close(f.fd) != 0 && ok) ok = false, err = errno;
  f.fd = -1;
  if (!ok) {
    fs::remove(tmp, ec);
    return fail(fmt::format("{}: {}", tmp.string(), std::strerror(err)));
  }
  if (std::rename(tmp.c_str(), final.c_str()) != 0) {
    err = errno;
    fs::remove(tmp, ec);
    return fail(fmt::format("rename to {}: {}", final.string(), std::strerror(err)));
  }
  return true;
}

std::vector<StoredTuning> TuningCache::list(ir::DiagnosticEngine& diag) const {
  std::vector<StoredTuning> out;
  for (const fs::path& path : kilnFiles(dir_, /*temporaries=*/false, diag)) {
    auto text = readFile(path, diag);
    if (!text) continue;  // gone since it was listed, or reported
    std::string why;
    auto stored = decodeFile(*text, why);
    if (stored && stored->first.hex() + std::string(kEntrySuffix) != path.filename().string()) {
      why = "foreign: its key does not hash to its file name";
      stored.reset();
    }
    if (!stored) {
      rejected(diag, path, why);
      continue;
    }
    out.push_back({path, std::move(stored->first), std::move(stored->second)});
  }
  return out;
}

size_t TuningCache::clear(ir::DiagnosticEngine& diag) const {
  std::error_code ec;
  size_t removed = 0;
  for (const fs::path& path : kilnFiles(dir_, /*temporaries=*/true, diag)) {
    // remove() takes a FIFO or an empty directory planted under an entry's name too; a non-empty
    // directory is not Kiln's to delete recursively.
    if (fs::remove(path, ec) && !ec) {
      ++removed;
    } else if (ec) {
      diag.warning(ir::Location::unknown()) << "tuning cache: cannot remove " << path.string() << ": "
                                            << ec.message();
    }
  }
  return removed;
}

}  // namespace kiln::ops
