#pragma once
// SHA-256 (FIPS 180-4), used to key and checksum the compile cache.
//
// Why a strong hash: a cache key collision would silently load the cubin of a different kernel,
// and a weak payload checksum could let a damaged entry through. SHA-256 makes both negligible and
// is small enough to carry here instead of depending on OpenSSL.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::backend {

using Sha256Digest = std::array<uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  // Finishes the hash; the object must not be updated afterwards.
  Sha256Digest finish();

  static Sha256Digest of(std::string_view s);

 private:
  void compress(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t totalBytes_ = 0;
  bool finished_ = false;
};

// Lower-case hexadecimal, 64 characters.
std::string toHex(const Sha256Digest& d);

}  // namespace kiln::backend
