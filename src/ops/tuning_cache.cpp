// The tuning cache's file store (contract in tuning_cache.h): one entry file per key (its form:
// tuning_json.h), read with the same care as the compile cache's entries (compile_cache.cpp):
// never opened blocking, bounded, and checked field by field; written to a temporary and renamed.
#include "ops/tuning_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "backend/compile_cache.h"
#include "ops/tuning_json.h"

namespace kiln::ops {
namespace fs = std::filesystem;
using nlohmann::json;
namespace {

// Entries larger than this are not read: a real one is well under a kilobyte, and a foreign file
// must not make us allocate without bound.
constexpr off_t kMaxEntryBytes = off_t(1) << 20;
constexpr size_t kHexDigits = 64;
constexpr std::string_view kEntrySuffix = ".json";

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
  auto stored = decodeEntryFile(*text, why);
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
  if (!keyFromJson(toJson(key), "key.", why) || !entryFromJson(toJson(entry), "entry.", why))
    return fail("the entry would not read back (" + why + ")");
  std::string text;
  try {
    text = entryFileJson(key, entry).dump(2) + "\n";
  } catch (const json::exception&) {  // dump() refuses strings that are not UTF-8
    return fail("a field of the key or the entry is not valid UTF-8");
  }
  auto back = decodeEntryFile(text, why);
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
    auto stored = decodeEntryFile(*text, why);
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
