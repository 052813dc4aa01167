#pragma once
// The compile cache's key: a SHA-256 of everything that decides the cubin.
//
// Inputs: the PTX text, the architecture, the nvJitLink option list (which includes ptxas options
// and the PTX's name), the CUDA toolkit Kiln was built against (KILN_CUDA_VERSION), the nvJitLink
// library actually loaded (a different libnvJitLink.so can be picked up at run time), and Kiln's
// own version (KILN_VERSION), and, for kernels the PTX compiler library assembles (sm_90a), that
// library's version and options, so an upgrade of either never reuses an old cubin. Each input is
// length-prefixed so that no two different input lists hash the same bytes.
#include <string>
#include <string_view>

#include "backend/assembler.h"
#include "backend/sha256.h"

namespace kiln::backend {

struct CacheKey {
  Sha256Digest digest{};
  std::string hex() const { return toHex(digest); }
  bool operator==(const CacheKey&) const = default;
};

CacheKey cacheKey(std::string_view ptx, std::string_view arch, const AssembleOptions& options = {});

}  // namespace kiln::backend
