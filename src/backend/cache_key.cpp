#include "backend/cache_key.h"

#include "backend/ptx_compiler.h"

#include <cstdint>

namespace kiln::backend {
namespace {

void field(Sha256& h, std::string_view s) {
  uint64_t n = s.size();
  uint8_t len[8];
  for (int i = 0; i < 8; ++i) len[i] = uint8_t(n >> (8 * i));
  h.update(len, sizeof len);
  h.update(s);
}

}  // namespace

CacheKey cacheKey(std::string_view ptx, std::string_view arch, const AssembleOptions& options) {
  Sha256 h;
  field(h, "kiln compile cache key v1");
  field(h, ptx);
  field(h, arch);
  field(h, KILN_CUDA_VERSION);
  field(h, nvJitLinkLibraryVersion());
  field(h, KILN_VERSION);
  std::vector<std::string> opts = nvJitLinkOptions(arch, options);
  field(h, std::to_string(opts.size()));
  for (const std::string& o : opts) field(h, o);
  field(h, options.ptxName);
  if (assemblerFor(arch, options) == AssemblerKind::PtxCompiler) {
    // A different assembler (and its version and options) makes a different cubin.
    field(h, "nvPTXCompiler");
    field(h, ptxCompilerVersion());
    for (const std::string& o : ptxCompilerOptions(arch, options)) field(h, o);
  }
  return CacheKey{h.finish()};
}

}  // namespace kiln::backend
