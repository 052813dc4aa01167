// `kiln cache` operations (see cache_admin.h).
#include "backend/cache_admin.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "backend/cache_entry.h"

namespace kiln::backend {
namespace fs = std::filesystem;
namespace {

constexpr size_t kHexDigits = 64;
constexpr const char* kEntrySuffix = ".kcubin";

bool isHex(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::optional<CacheKey> keyFromHex(std::string_view hex) {
  if (hex.size() != kHexDigits || !isHex(hex)) return std::nullopt;
  CacheKey key;
  auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  for (size_t i = 0; i < key.digest.size(); ++i)
    key.digest[i] = static_cast<uint8_t>(nibble(hex[2 * i]) << 4 | nibble(hex[2 * i + 1]));
  return key;
}

// Every file in `dir` with its kind; nullopt with `error` when `dir` cannot be listed.
std::optional<std::vector<fs::directory_entry>> listDir(const fs::path& dir, std::string& error) {
  std::error_code ec;
  std::vector<fs::directory_entry> out;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) out.push_back(*it);
  if (ec) {
    error = "cannot list the compile cache " + dir.string() + ": " + ec.message();
    return std::nullopt;
  }
  return out;
}

// The entry's bytes, or nullopt with `why`; never blocks (O_NONBLOCK) and reads only regular files.
std::optional<std::string> readEntry(const fs::path& path, std::string& why) {
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    why = std::string("cannot be read: ") + std::strerror(errno);
    return std::nullopt;
  }
  struct stat st {};
  std::string bytes;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    why = "not a regular file";
  } else if (st.st_size > (off_t(1) << 30)) {
    why = "corrupted: larger than any entry Kiln writes";
  } else {
    bytes.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < bytes.size()) {
      ssize_t n = read(fd, bytes.data() + got, bytes.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    bytes.resize(got);
  }
  close(fd);
  if (!why.empty()) return std::nullopt;
  return bytes;
}

}  // namespace

CacheFileKind classifyCacheFile(const std::string& name) {
  std::string_view n = name;
  if (n.size() == kHexDigits + std::strlen(kEntrySuffix) && n.ends_with(kEntrySuffix) && isHex(n.substr(0, kHexDigits)))
    return CacheFileKind::Entry;
  if (n.size() > kHexDigits + 6 && n[0] == '.' && isHex(n.substr(1, kHexDigits)) &&
      n.substr(1 + kHexDigits, 5) == ".tmp.")
    return CacheFileKind::Temporary;
  return CacheFileKind::Other;
}

std::optional<CacheStats> cacheStats(const fs::path& dir, std::string& error) {
  CacheStats s;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return s;
  auto files = listDir(dir, error);
  if (!files) return std::nullopt;
  s.exists = true;
  for (const auto& f : *files) {
    uintmax_t size = f.is_regular_file(ec) ? f.file_size(ec) : 0;
    if (ec) size = 0;
    switch (classifyCacheFile(f.path().filename().string())) {
      case CacheFileKind::Entry: ++s.entries, s.entryBytes += static_cast<int64_t>(size); break;
      case CacheFileKind::Temporary: ++s.temporaries, s.temporaryBytes += static_cast<int64_t>(size); break;
      case CacheFileKind::Other: ++s.others; break;
    }
  }
  return s;
}

std::optional<int64_t> clearCache(const fs::path& dir, std::string& error) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return 0;
  auto files = listDir(dir, error);
  if (!files) return std::nullopt;
  int64_t removed = 0;
  for (const auto& f : *files) {
    if (classifyCacheFile(f.path().filename().string()) == CacheFileKind::Other) continue;
    // remove() takes a FIFO or an empty directory planted under an entry's name too; a non-empty
    // directory is not Kiln's to delete recursively.
    if (!fs::remove(f.path(), ec) || ec) {
      error = "cannot remove " + f.path().string() + ": " + (ec ? ec.message() : "it is gone or not removable");
      return std::nullopt;
    }
    ++removed;
  }
  return removed;
}

std::optional<std::vector<BadEntry>> verifyCache(const fs::path& dir, int64_t& checked, std::string& error) {
  checked = 0;
  std::vector<BadEntry> bad;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return bad;
  auto files = listDir(dir, error);
  if (!files) return std::nullopt;
  for (const auto& f : *files) {
    std::string name = f.path().filename().string();
    if (classifyCacheFile(name) != CacheFileKind::Entry) continue;
    ++checked;
    std::string why;
    auto bytes = readEntry(f.path(), why);
    // The key is the file name: an entry copied or renamed to another key is foreign.
    if (bytes && !decodeCacheEntry(*bytes, *keyFromHex(name.substr(0, kHexDigits)), why)) bytes.reset();
    if (!bytes) bad.push_back({f.path(), why});
  }
  return bad;
}

}  // namespace kiln::backend
