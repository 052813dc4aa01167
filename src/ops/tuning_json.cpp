// The tuning cache's JSON: its keys and entries, and the entry file (contract in tuning_json.h).
// Decoding reads with the same care as the compile cache's entries (compile_cache.cpp): every
// field is checked, and the first one that is missing or of the wrong type is named.
#include "ops/tuning_json.h"

#include <cmath>
#include <limits>
#include <string_view>

#include <fmt/format.h>

namespace kiln::ops {
using nlohmann::json;
namespace {

constexpr const char* kFormat = "kiln tuning entry";
constexpr int64_t kFormatVersion = 1;

// ---- Reading JSON fields, with a sentence for the first one that is wrong ---------------------

std::string_view article(const json& j) {
  switch (j.type()) {
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::null: return "null";
    case json::value_t::number_float: return "a number with a fraction";
    default: return "a number";
  }
}

// The fields of one JSON object. `prefix` names where it sits ("key.device."), so a message says
// which field of which part is wrong. Every getter returns false, and sets `why`, on the first
// field that is missing or of the wrong type.
class Fields {
 public:
  Fields(const json& j, std::string prefix, std::string& why) : j_(j), prefix_(std::move(prefix)), why_(why) {}

  // False, with `why`, when the value itself is not an object; `name` names it at the top level.
  bool isObject(std::string_view name) {
    if (j_.is_object()) return true;
    std::string what = prefix_.empty() ? std::string(name) : "field '" + prefix_.substr(0, prefix_.size() - 1) + "'";
    return fail(fmt::format("the {} is {}, not an object", what, article(j_)));
  }

  const json* get(const char* name) {
    auto it = j_.find(name);
    if (it != j_.end()) return &*it;
    fail(fmt::format("the field '{}{}' is missing", prefix_, name));
    return nullptr;
  }

  bool string(const char* name, std::string& out) {
    const json* v = get(name);
    if (!v || !is(name, *v, v->is_string(), "a string")) return false;
    out = v->get<std::string>();
    return true;
  }

  // A time: a finite number, not negative (JSON has no infinities, but a value built in memory
  // may hold one, or a NaN).
  bool seconds(const char* name, double& out) {
    const json* v = get(name);
    if (!v || !is(name, *v, v->is_number(), "a number")) return false;
    out = v->get<double>();
    if (!std::isfinite(out)) return fail(fmt::format("the field '{}{}' is not a finite number", prefix_, name));
    if (out < 0) return fail(fmt::format("the field '{}{}' is {}; it cannot be negative", prefix_, name, out));
    return true;
  }

  template <typename Int>
  bool integer(const char* name, Int& out) {
    const json* v = get(name);
    return v && integerValue(prefix_ + name, *v, out);
  }

  // An object whose every member is an integer.
  template <typename Int>
  bool integerMap(const char* name, std::map<std::string, Int>& out) {
    const json* v = get(name);
    if (!v || !is(name, *v, v->is_object(), "an object")) return false;
    out.clear();
    for (auto it = v->begin(); it != v->end(); ++it)
      if (!integerValue(fmt::format("{}{}.{}", prefix_, name, it.key()), it.value(), out[it.key()])) return false;
    return true;
  }

 private:
  bool fail(std::string why) {
    why_ = std::move(why);
    return false;
  }

  bool is(const char* name, const json& v, bool ok, std::string_view want) {
    return ok || fail(fmt::format("the field '{}{}' is {}, not {}", prefix_, name, article(v), want));
  }

  template <typename Int>
  bool integerValue(const std::string& name, const json& v, Int& out) {
    if (!v.is_number_integer()) return fail(fmt::format("the field '{}' is {}, not an integer", name, article(v)));
    constexpr int64_t lo = std::numeric_limits<Int>::min(), hi = std::numeric_limits<Int>::max();
    bool fits = v.is_number_unsigned() ? v.get<uint64_t>() <= static_cast<uint64_t>(hi)
                                       : v.get<int64_t>() >= lo && v.get<int64_t>() <= hi;
    if (!fits) return fail(fmt::format("the field '{}' is {}, outside [{}, {}]", name, v.dump(), lo, hi));
    out = static_cast<Int>(v.is_number_unsigned() ? static_cast<int64_t>(v.get<uint64_t>()) : v.get<int64_t>());
    return true;
  }

  const json& j_;
  std::string prefix_;
  std::string& why_;
};

std::optional<DeviceIdentity> deviceFrom(const json& j, const std::string& prefix, std::string& why) {
  Fields f(j, prefix, why);
  DeviceIdentity d;
  if (!f.isObject("device") || !f.string("name", d.name) || !f.integer("smCount", d.smCount) ||
      !f.integer("driverVersion", d.driverVersion))
    return std::nullopt;
  return d;
}

}  // namespace

std::optional<TuningKey> keyFromJson(const json& j, const std::string& prefix, std::string& why) {
  Fields f(j, prefix, why);
  TuningKey k;
  const json* device = nullptr;
  std::optional<DeviceIdentity> d;
  if (!f.isObject("key") || !f.string("programHash", k.programHash) || !f.string("target", k.target) ||
      !(device = f.get("device")) || !(d = deviceFrom(*device, prefix + "device.", why)) ||
      !f.string("kilnVersion", k.kilnVersion) || !f.integerMap("bucket", k.bucket) ||
      (j.contains("space") && !f.string("space", k.space)))  // absent in keys of the GEMM spaces
    return std::nullopt;
  k.device = std::move(*d);
  return k;
}

std::optional<TunedEntry> entryFromJson(const json& j, const std::string& prefix, std::string& why) {
  Fields f(j, prefix, why);
  TunedEntry e;
  if (!f.isObject("entry") || !f.string("config", e.config) || !f.seconds("microseconds", e.microseconds) ||
      !f.integerMap("dims", e.dims) || !f.integer("candidatesTimed", e.candidatesTimed) ||
      !f.integer("candidatesTotal", e.candidatesTotal) || !f.seconds("tuneSeconds", e.tuneSeconds) ||
      !f.string("date", e.date) || !f.string("source", e.source))
    return std::nullopt;
  if (e.candidatesTimed < 0 || e.candidatesTotal < e.candidatesTimed) {
    why = fmt::format("the fields '{0}candidatesTimed' ({1}) and '{0}candidatesTotal' ({2}) do not satisfy "
                      "0 <= timed <= total",
                      prefix, e.candidatesTimed, e.candidatesTotal);
    return std::nullopt;
  }
  if (e.source != "tuned" && e.source != "pretuned") {
    why = fmt::format("the field '{}source' is \"{}\", not \"tuned\" or \"pretuned\"", prefix, e.source);
    return std::nullopt;
  }
  // Optional: entries written before alternates were recorded have none.
  if (auto it = j.find("alternates"); it != j.end()) {
    if (!it->is_array()) {
      why = fmt::format("the field '{}alternates' is {}, not an array", prefix, article(*it));
      return std::nullopt;
    }
    for (size_t i = 0; i < it->size(); ++i) {
      Fields a((*it)[i], fmt::format("{}alternates[{}].", prefix, i), why);
      TunedAlternate alt;
      if (!a.isObject("alternate") || !a.string("config", alt.config) || !a.seconds("microseconds", alt.microseconds))
        return std::nullopt;
      e.alternates.push_back(std::move(alt));
    }
  }
  return e;
}

json toJson(const DeviceIdentity& d) {
  return json{{"name", d.name}, {"smCount", d.smCount}, {"driverVersion", d.driverVersion}};
}

json toJson(const TuningKey& k) {
  json j{{"programHash", k.programHash},
              {"target", k.target},
              {"device", toJson(k.device)},
              {"kilnVersion", k.kilnVersion},
              {"bucket", json(k.bucket)}};
  if (!k.space.empty()) j["space"] = k.space;
  return j;
}

json toJson(const TunedEntry& e) {
  json j{{"config", e.config},
         {"microseconds", e.microseconds},
         {"dims", json(e.dims)},
         {"candidatesTimed", e.candidatesTimed},
         {"candidatesTotal", e.candidatesTotal},
         {"tuneSeconds", e.tuneSeconds},
         {"date", e.date},
         {"source", e.source}};
  if (!e.alternates.empty()) {
    json& alts = j["alternates"] = json::array();
    for (const TunedAlternate& a : e.alternates) alts.push_back({{"config", a.config}, {"microseconds", a.microseconds}});
  }
  return j;
}

std::optional<DeviceIdentity> deviceIdentityFromJson(const json& j, std::string& why) { return deviceFrom(j, "", why); }
std::optional<TuningKey> tuningKeyFromJson(const json& j, std::string& why) { return keyFromJson(j, "", why); }
std::optional<TunedEntry> tunedEntryFromJson(const json& j, std::string& why) { return entryFromJson(j, "", why); }

// ---- Entry files --------------------------------------------------------------------------------

json entryFileJson(const TuningKey& key, const TunedEntry& entry) {
  return json{{"format", kFormat}, {"version", kFormatVersion}, {"key", toJson(key)}, {"entry", toJson(entry)}};
}

std::optional<std::pair<TuningKey, TunedEntry>> decodeEntryFile(const std::string& text, std::string& why) {
  if (text.empty()) {
    why = "damaged: the file is empty";
    return std::nullopt;
  }
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    // A truncated entry fails at the end of its text; anything else is a syntax error inside it.
    why = e.byte >= text.size() ? fmt::format("damaged: the JSON ends early, after {} bytes (truncated?)", text.size())
                                : fmt::format("damaged: not JSON (a syntax error at byte {})", e.byte);
    return std::nullopt;
  } catch (const json::exception& e) {
    why = fmt::format("damaged: not JSON ({})", e.what());
    return std::nullopt;
  }
  if (!doc.is_object() || !doc.contains("format") || doc["format"] != kFormat) {
    why = "foreign: not a Kiln tuning entry (no \"format\": \"kiln tuning entry\")";
    return std::nullopt;
  }
  if (!doc.contains("version") || doc["version"] != kFormatVersion) {
    why = fmt::format("foreign: tuning entry format version {}, this Kiln reads version {}",
                      doc.contains("version") ? doc["version"].dump() : "(none)", kFormatVersion);
    return std::nullopt;
  }
  std::string fieldWhy;
  Fields f(doc, "", fieldWhy);
  const json *k = nullptr, *e = nullptr;
  std::optional<TuningKey> key;
  std::optional<TunedEntry> entry;
  if (!(k = f.get("key")) || !(key = keyFromJson(*k, "key.", fieldWhy)) || !(e = f.get("entry")) ||
      !(entry = entryFromJson(*e, "entry.", fieldWhy))) {
    why = "damaged: " + fieldWhy;
    return std::nullopt;
  }
  return std::pair{std::move(*key), std::move(*entry)};
}

}  // namespace kiln::ops
