// `kiln cache stats|clear|verify`: look after the on-disk compile cache (backend/cache_admin.h).
// The directory is --dir, else the one compiles use ($KILN_CACHE_DIR, $XDG_CACHE_HOME/kiln, ...).
#include <cstdio>

#include "backend/cache_admin.h"
#include "backend/compile_cache.h"
#include "tools/commands.h"

namespace kiln::tools {
namespace {

namespace fs = std::filesystem;

fs::path cacheDir(const std::string& option) {
  return option.empty() ? backend::CompileCache::defaultDir() : fs::path(option);
}

int runStats(const fs::path& dir) {
  std::string error;
  auto s = backend::cacheStats(dir, error);
  if (!s) {
    std::fprintf(stderr, "kiln cache stats: %s\n", error.c_str());
    return kFailed;
  }
  std::printf("cache %s%s\n", dir.c_str(), s->exists ? "" : " (does not exist yet)");
  std::printf("entries %lld (%lld bytes)\n", (long long)s->entries, (long long)s->entryBytes);
  std::printf("temporaries %lld (%lld bytes; left by writers that stopped, `kiln cache clear` removes them)\n",
              (long long)s->temporaries, (long long)s->temporaryBytes);
  if (s->others) std::printf("other files %lld (not Kiln's: left alone)\n", (long long)s->others);
  return kOk;
}

int runClear(const fs::path& dir) {
  std::string error;
  auto removed = backend::clearCache(dir, error);
  if (!removed) {
    std::fprintf(stderr, "kiln cache clear: %s\n", error.c_str());
    return kFailed;
  }
  std::printf("removed %lld Kiln file%s from %s\n", (long long)*removed, *removed == 1 ? "" : "s", dir.c_str());
  return kOk;
}

int runVerify(const fs::path& dir) {
  std::string error;
  int64_t checked = 0;
  auto bad = backend::verifyCache(dir, checked, error);
  if (!bad) {
    std::fprintf(stderr, "kiln cache verify: %s\n", error.c_str());
    return kFailed;
  }
  for (const auto& b : *bad) std::printf("bad %s (%s)\n", b.path.c_str(), b.why.c_str());
  std::printf("checked %lld entr%s in %s: %zu bad\n", (long long)checked, checked == 1 ? "y" : "ies", dir.c_str(),
              bad->size());
  if (bad->empty()) return kOk;
  // Bad entries are harmless (a compile rejects and rebuilds them), but say how to drop them.
  std::fprintf(stderr, "kiln cache verify: %zu bad entr%s; a compile rebuilds them, or run `kiln cache clear`\n",
               bad->size(), bad->size() == 1 ? "y" : "ies");
  return kFailed;
}

}  // namespace

void registerCacheCommand(CLI::App& app) {
  static std::string dir;
  auto* cmd = app.add_subcommand("cache", "Look after the compile cache: stats, clear or verify.");
  cmd->require_subcommand(1);
  cmd->add_option("--dir", dir, "Cache directory (default: $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else ~/.cache/kiln)");
  // fallthrough: --dir may come after the verb too (`kiln cache stats --dir D`).
  cmd->add_subcommand("stats", "Print the cache's path, entries and bytes")->fallthrough()->callback([] {
    setExitCode(runStats(cacheDir(dir)));
  });
  cmd->add_subcommand("clear", "Remove Kiln's entries (and stale temporaries), nothing else")->fallthrough()->callback([] {
    setExitCode(runClear(cacheDir(dir)));
  });
  cmd->add_subcommand("verify", "Check every entry's integrity (header, key, checksum); exit 1 if one is bad")
      ->fallthrough()
      ->callback([] { setExitCode(runVerify(cacheDir(dir))); });
}

}  // namespace kiln::tools
