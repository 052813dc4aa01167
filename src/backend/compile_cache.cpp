#include "backend/compile_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "backend/cache_entry.h"

namespace kiln::backend {
namespace fs = std::filesystem;
namespace {

// Entries larger than this are not read: no real cubin is near it, and a foreign file must not
// make us allocate without bound.
constexpr off_t kMaxEntryBytes = off_t(1) << 30;

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
      diag.warning(ir::Location::unknown()) << "compile cache: cannot read " << path.string() << ": "
                                            << std::strerror(errno) << "; rebuilding it";
    return std::nullopt;
  }
  struct stat st {};
  if (fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    diag.warning(ir::Location::unknown()) << "compile cache: " << path.string()
                                          << " is not a regular file; treating it as a miss (remove it, or run "
                                             "`kiln cache clear`)";
    return std::nullopt;
  }
  if (st.st_size > kMaxEntryBytes) {
    diag.warning(ir::Location::unknown()) << "compile cache: rejected " << path.string() << " (" << st.st_size
                                          << " bytes, larger than any entry Kiln writes); rebuilding it";
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

bool writeAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

CompileCache::CompileCache(fs::path dir, bool durable) : dir_(std::move(dir)), durable_(durable) {}

fs::path CompileCache::defaultDir() {
  if (auto d = env("KILN_CACHE_DIR")) return fs::path(*d);
  if (auto d = env("XDG_CACHE_HOME")) return fs::path(*d) / "kiln";
  if (auto d = env("HOME")) return fs::path(*d) / ".cache" / "kiln";
  std::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec);
  return (ec ? fs::path("/tmp") : tmp) / "kiln-cache";
}

fs::path CompileCache::entryPath(const CacheKey& key) const { return dir_ / (key.hex() + ".kcubin"); }

std::optional<AssembledKernel> CompileCache::lookup(const CacheKey& key, ir::DiagnosticEngine& diag) const {
  fs::path path = entryPath(key);
  auto bytes = readFile(path, diag);
  if (!bytes) return std::nullopt;
  std::string why;
  auto kernel = decodeCacheEntry(*bytes, key, why);
  if (!kernel)
    diag.warning(ir::Location::unknown()) << "compile cache: rejected " << path.string() << " (" << why
                                          << "); rebuilding it";
  return kernel;
}

bool CompileCache::store(const CacheKey& key, const AssembledKernel& kernel, ir::DiagnosticEngine& diag) const {
  auto fail = [&](const std::string& what) {
    diag.warning(ir::Location::unknown()) << "compile cache: cannot store an entry in " << dir_.string()
                                          << ": " << what << "; continuing without caching it";
    return false;
  };
  std::error_code ec;
  fs::create_directories(dir_, ec);  // concurrent creators are fine: existing is not an error
  if (ec) return fail(ec.message());

  // Unique per process and per call, so concurrent writers never share a temporary file.
  static std::atomic<uint64_t> counter{0};
  fs::path final = entryPath(key);
  fs::path tmp = dir_ / fmt::format(".{}.tmp.{}.{}", key.hex(), getpid(), counter.fetch_add(1));
  std::string bytes = encodeCacheEntry(key, kernel);
  {
    Fd f{open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)};
    if (f.fd < 0) return fail(fmt::format("{}: {}", tmp.string(), std::strerror(errno)));
    bool ok = writeAll(f.fd, bytes) && (!durable_ || fsync(f.fd) == 0);
    int err = errno;
    if (close(f.fd) != 0) ok = false;
    f.fd = -1;
    if (!ok) {
      fs::remove(tmp, ec);
      return fail(fmt::format("{}: {}", tmp.string(), std::strerror(err)));
    }
  }
  if (std::rename(tmp.c_str(), final.c_str()) != 0) {
    int err = errno;
    fs::remove(tmp, ec);
    return fail(fmt::format("rename to {}: {}", final.string(), std::strerror(err)));
  }
  return true;
}

std::optional<AssembledKernel> assembleCached(const std::string& ptx, std::string_view arch,
                                              ir::DiagnosticEngine& diag, const CompileCache* cache,
                                              const AssembleOptions& options) {
  if (!cache) return assemble(ptx, arch, diag, options);
  // An unknown arch is diagnosed by assemble(); it must not be looked up or stored first.
  if (!isSupportedArch(arch)) return assemble(ptx, arch, diag, options);
  CacheKey key = cacheKey(ptx, arch, options);
  if (auto hit = cache->lookup(key, diag)) {
    for (const ir::Diagnostic& w : hit->warnings) diag.report(w);
    return hit;
  }
  auto kernel = assemble(ptx, arch, diag, options);
  if (kernel) cache->store(key, *kernel, diag);
  return kernel;
}

}  // namespace kiln::backend
