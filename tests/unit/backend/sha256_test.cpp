#include "backend/sha256.h"

#include <gtest/gtest.h>

namespace kiln::backend {
namespace {

// FIPS 180-4 / NIST CSHA test vectors.
TEST(Sha256, KnownVectors) {
  EXPECT_EQ(toHex(Sha256::of("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(toHex(Sha256::of("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // 56 bytes: the padding spills into a second block.
  EXPECT_EQ(toHex(Sha256::of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(toHex(Sha256::of(std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, IncrementalUpdatesMatchOneShot) {
  std::string msg;
  for (int i = 0; i < 1000; ++i) msg += char('a' + i % 26);
  for (size_t chunk : {1u, 7u, 63u, 64u, 65u, 200u}) {
    Sha256 h;
    for (size_t at = 0; at < msg.size(); at += chunk) h.update(std::string_view(msg).substr(at, chunk));
    EXPECT_EQ(h.finish(), Sha256::of(msg)) << "chunk " << chunk;
  }
}

}  // namespace
}  // namespace kiln::backend
