// The tuning cache's key: the shape buckets, the program's hash, the device's identity and the
// key's own hash (contract in tuning_cache.h).
#include <bit>
#include <string_view>

#include "backend/sha256.h"
#include "kiln/ir/printer.h"
#include "ops/default_schedule.h"
#include "ops/tuning_cache.h"

namespace kiln::ops {
namespace {

void field(backend::Sha256& h, std::string_view s) {
  uint64_t n = s.size();
  uint8_t len[8];
  for (int i = 0; i < 8; ++i) len[i] = uint8_t(n >> (8 * i));
  h.update(len, sizeof len);
  h.update(s);
}

}  // namespace

int dimBucket(int64_t d) {
  if (d <= 0) return 0;
  // floor(4 * log2(d)) = floor(log2(d^4)), the index of d^4's highest set bit. d < 2^63, so d^2
  // fits in 128 bits and d^4 in 256: square d^2 in 64-bit limbs (each partial sum fits 128 bits).
  using u128 = unsigned __int128;
  const u128 sq = u128(uint64_t(d)) * uint64_t(d);
  const uint64_t a[2] = {uint64_t(sq), uint64_t(sq >> 64)};
  uint64_t p[4] = {};
  for (int i = 0; i < 2; ++i) {
    u128 carry = 0;
    for (int j = 0; j < 2; ++j) {
      u128 t = u128(a[i]) * a[j] + p[i + j] + carry;
      p[i + j] = uint64_t(t);
      carry = t >> 64;
    }
    p[i + 2] = uint64_t(carry);
  }
  int top = 3;
  while (p[top] == 0) --top;  // p[0] >= 1, as d >= 1
  return 64 * top + std::bit_width(p[top]) - 1;
}

std::map<std::string, int> bucketDims(const std::map<std::string, int64_t>& dims) {
  std::map<std::string, int> out;
  for (const auto& [name, d] : dims) out[name] = dimBucket(d);
  return out;
}

std::string programHash(const ir::Operation& program) {
  return backend::toHex(backend::Sha256::of(ir::toString(program)));
}

DeviceIdentity deviceIdentity(const runtime::Context& context) {
  const runtime::DeviceProperties& p = context.properties();
  return {p.name, p.smCount, context.driver().version()};
}

std::string TuningKey::hex() const {
  backend::Sha256 h;
  field(h, "kiln tuning key v1");
  field(h, programHash);
  field(h, target);
  field(h, device.name);
  field(h, std::to_string(device.smCount));
  field(h, std::to_string(device.driverVersion));
  field(h, kilnVersion);
  field(h, std::to_string(bucket.size()));
  for (const auto& [name, b] : bucket) {
    field(h, name);
    field(h, std::to_string(b));
  }
  if (!space.empty()) {
    field(h, "space");
    field(h, space);
  }
  return backend::toHex(h.finish());
}

TuningKey tuningKey(const ir::Operation& program, std::string target, DeviceIdentity device,
                    const std::map<std::string, int64_t>& dims) {
  TuningKey k;
  k.programHash = programHash(program);
  k.target = std::move(target);
  k.device = std::move(device);
  k.bucket = bucketDims(dims);
  // The family's pick decides the space kiln tune searches: gemv's where it picks gemv (gemvPreferredRows).
  if (auto t = Target::byName(k.target))
    if (defaultSchedule(program, *t, dims).config.strategy == "gemv") k.space = "gemv";
  return k;
}

}  // namespace kiln::ops
