#pragma once
// The on-disk format of one compile cache entry, and the checks that keep a bad entry out.
//
//   offset  size  field
//        0     8  magic "KILNCUBN"
//        8     4  format version (little-endian), kCacheFormatVersion
//       12    32  the key's SHA-256 digest
//       44     8  payload length in bytes (little-endian)
//       52    32  SHA-256 of the payload
//       84     …  payload: CBOR {arch, cubin (binary), resources, warnings, info_log}
//
// A cubin that is loaded is trusted to run on the GPU, so decoding rejects anything that is not
// exactly what this Kiln wrote for this key: a short file, trailing bytes, a foreign magic or
// format version, another key (a renamed or copied file), a checksum mismatch, a payload that does
// not decode.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "backend/assembler.h"
#include "backend/cache_key.h"

namespace kiln::backend {

inline constexpr uint32_t kCacheFormatVersion = 1;
inline constexpr size_t kCacheHeaderSize = 84;

std::string encodeCacheEntry(const CacheKey& key, const AssembledKernel& kernel);

// The kernel stored in `bytes`, or nullopt with the reason in `whyRejected`
// ("truncated: ...", "corrupted: ...", "foreign: ...").
std::optional<AssembledKernel> decodeCacheEntry(std::string_view bytes, const CacheKey& key,
                                                std::string& whyRejected);

}  // namespace kiln::backend
