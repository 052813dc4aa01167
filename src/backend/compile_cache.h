#pragma once
// The on-disk compile cache: PTX + target + toolkit -> cubin and resource report.
//
// One file per key, <dir>/<key hex>.kcubin, in the format of cache_entry.h.
//  * Writes are atomic: an entry is written to a unique temporary file in the same directory and
//    renamed over the final name, so a reader sees either no entry or a whole one, never a partial
//    one, however many threads and processes write the same key at once (they write the same
//    cubin; the last rename wins).
//  * Reads trust nothing: a truncated, corrupted or foreign entry, or anything at an entry's path
//    that is not a regular file (a FIFO is never opened blocking), is rejected with a warning (so
//    the user sees why it was rebuilt) and treated as a miss; the rebuilt entry replaces it.
//  * The cache is an optimisation: failing to write it is a warning, never a failed compile.
// One CompileCache may be shared by threads; each call takes its own DiagnosticEngine.
#include <filesystem>
#include <optional>
#include <string>

#include "backend/assembler.h"
#include "backend/cache_key.h"
#include "kiln/ir/diagnostics.h"

namespace kiln::backend {

class CompileCache {
 public:
  // `durable`: fsync each entry before it is renamed into place (slower; survives power loss).
  explicit CompileCache(std::filesystem::path dir, bool durable = false);

  // $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else $HOME/.cache/kiln (else a "kiln-cache"
  // folder under the system temporary directory, when even HOME is unset).
  static std::filesystem::path defaultDir();

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path entryPath(const CacheKey& key) const;

  // The stored kernel, or nullopt on a miss or a rejected entry (reported as a warning).
  std::optional<AssembledKernel> lookup(const CacheKey& key, ir::DiagnosticEngine& diag) const;
  // Stores `kernel` under `key`; false, with a warning, when the entry cannot be written.
  bool store(const CacheKey& key, const AssembledKernel& kernel, ir::DiagnosticEngine& diag) const;

 private:
  std::filesystem::path dir_;
  bool durable_;
};

// assemble() through `cache` (which may be null: no caching). On a hit the stored warnings are
// reported to `diag` again, so a cached compile says what the original one said.
std::optional<AssembledKernel> assembleCached(const std::string& ptx, std::string_view arch,
                                              ir::DiagnosticEngine& diag, const CompileCache* cache,
                                              const AssembleOptions& options = {});

}  // namespace kiln::backend
