#include "backend/cache_entry.h"

#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backend/resource_report_json.h"

namespace kiln::backend {
namespace {

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'C', 'U', 'B', 'N'};
constexpr size_t kVersionAt = 8, kKeyAt = 12, kLengthAt = 44, kChecksumAt = 52;
static_assert(kChecksumAt + 32 == kCacheHeaderSize);

void putLE(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += char(uint8_t(v >> (8 * i)));
}

uint64_t getLE(std::string_view in, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t(uint8_t(in[at + i])) << (8 * i);
  return v;
}

nlohmann::json payloadJson(const AssembledKernel& k) {
  nlohmann::json resources = nlohmann::json::array();
  for (const auto& [_, r] : k.resources) resources.push_back(toJson(r));
  nlohmann::json warnings = nlohmann::json::array();
  for (const ir::Diagnostic& w : k.warnings)
    warnings.push_back({{"file", w.loc.file}, {"line", w.loc.line}, {"col", w.loc.col}, {"message", w.message}});
  std::vector<std::uint8_t> cubin(k.cubin.begin(), k.cubin.end());
  return {{"arch", k.arch},
          {"cubin", nlohmann::json::binary(std::move(cubin))},
          {"resources", std::move(resources)},
          {"warnings", std::move(warnings)},
          {"info_log", k.infoLog}};
}

// The payload passed its checksum, so a decoding failure here means a writer that is not this
// Kiln; it is still user data, so it is a rejection, never an abort.
std::optional<AssembledKernel> kernelFromPayload(std::string_view payload) {
  nlohmann::json j = nlohmann::json::from_cbor(payload.begin(), payload.end(), true, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  auto str = [&](const char* name) -> const nlohmann::json* {
    auto it = j.find(name);
    return it != j.end() && it->is_string() ? &*it : nullptr;
  };
  auto cubin = j.find("cubin");
  auto resources = j.find("resources");
  auto warnings = j.find("warnings");
  if (!str("arch") || !str("info_log") || cubin == j.end() || !cubin->is_binary() ||
      resources == j.end() || !resources->is_array() || warnings == j.end() || !warnings->is_array())
    return std::nullopt;
  AssembledKernel k;
  k.arch = str("arch")->get<std::string>();
  k.infoLog = str("info_log")->get<std::string>();
  const auto& bytes = cubin->get_binary();
  k.cubin.assign(bytes.begin(), bytes.end());
  for (const auto& r : *resources) {
    ResourceReport report;
    if (!fromJson(r, report)) return std::nullopt;
    k.resources.emplace(report.kernel, std::move(report));
  }
  for (const auto& w : *warnings) {
    if (!w.is_object() || !w.contains("file") || !w["file"].is_string() || !w.contains("line") ||
        !w["line"].is_number_unsigned() || !w.contains("col") || !w["col"].is_number_unsigned() ||
        !w.contains("message") || !w["message"].is_string())
      return std::nullopt;
    ir::Location loc{w["file"].get<std::string>(), w["line"].get<uint32_t>(), w["col"].get<uint32_t>()};
    k.warnings.push_back({ir::Severity::Warning, std::move(loc), w["message"].get<std::string>()});
  }
  return k;
}

}  // namespace

std::string encodeCacheEntry(const CacheKey& key, const AssembledKernel& kernel) {
  std::vector<std::uint8_t> cbor = nlohmann::json::to_cbor(payloadJson(kernel));
  std::string_view payload(reinterpret_cast<const char*>(cbor.data()), cbor.size());
  Sha256Digest checksum = Sha256::of(payload);
  std::string out(kMagic, sizeof kMagic);
  putLE(out, kCacheFormatVersion, 4);
  out.append(reinterpret_cast<const char*>(key.digest.data()), key.digest.size());
  putLE(out, payload.size(), 8);
  out.append(reinterpret_cast<const char*>(checksum.data()), checksum.size());
  out.append(payload);
  return out;
}

std::optional<AssembledKernel> decodeCacheEntry(std::string_view bytes, const CacheKey& key,
                                                std::string& why) {
  if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    why = bytes.size() < sizeof kMagic ? "truncated: shorter than the header"
                                       : "foreign: not a Kiln cache entry (bad magic)";
    return std::nullopt;
  }
  if (bytes.size() < kCacheHeaderSize) {
    why = fmt::format("truncated: {} bytes, shorter than the {}-byte header", bytes.size(), kCacheHeaderSize);
    return std::nullopt;
  }
  if (uint64_t v = getLE(bytes, kVersionAt, 4); v != kCacheFormatVersion) {
    why = fmt::format("foreign: cache format version {}, this Kiln reads version {}", v, kCacheFormatVersion);
    return std::nullopt;
  }
  if (std::memcmp(bytes.data() + kKeyAt, key.digest.data(), key.digest.size()) != 0) {
    why = "foreign: the entry was written for a different key";
    return std::nullopt;
  }
  uint64_t length = getLE(bytes, kLengthAt, 8);
  uint64_t have = bytes.size() - kCacheHeaderSize;
  if (have != length) {
    why = have < length ? fmt::format("truncated: payload has {} of {} bytes", have, length)
                        : fmt::format("corrupted: {} bytes after the {}-byte payload", have - length, length);
    return std::nullopt;
  }
  std::string_view payload = bytes.substr(kCacheHeaderSize);
  Sha256Digest checksum = Sha256::of(payload);
  if (std::memcmp(bytes.data() + kChecksumAt, checksum.data(), checksum.size()) != 0) {
    why = "corrupted: payload checksum mismatch";
    return std::nullopt;
  }
  auto kernel = kernelFromPayload(payload);
  if (!kernel) why = "corrupted: the payload does not decode";
  return kernel;
}

}  // namespace kiln::backend
