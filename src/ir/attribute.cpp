#include "kiln/ir/attribute.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace kiln::ir {

Attribute Attribute::strings(const std::vector<std::string>& v) {
  Array a;
  for (const auto& s : v) a.emplace_back(s);
  return Attribute(std::move(a));
}

Attribute Attribute::ints(const std::vector<int64_t>& v) {
  Array a;
  for (int64_t x : v) a.emplace_back(x);
  return Attribute(std::move(a));
}

std::optional<std::vector<std::string>> Attribute::asStrings() const {
  if (!isArray()) return std::nullopt;
  std::vector<std::string> r;
  for (const auto& e : asArray()) {
    if (!e.isString()) return std::nullopt;
    r.push_back(e.asString());
  }
  return r;
}

std::optional<std::vector<int64_t>> Attribute::asInts() const {
  if (!isArray()) return std::nullopt;
  std::vector<int64_t> r;
  for (const auto& e : asArray()) {
    if (!e.isInt()) return std::nullopt;
    r.push_back(e.asInt());
  }
  return r;
}

std::string quoteString(std::string_view s) {
  std::string r = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': r += "\\\""; break;
      case '\\': r += "\\\\"; break;
      case '\n': r += "\\n"; break;
      case '\t': r += "\\t"; break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\%02x", c);
          r += buf;
        } else {
          r += static_cast<char>(c);
        }
    }
  }
  return r + "\"";
}

std::string formatDouble(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);  // shortest round-trip form
  std::string s(buf, end);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string Attribute::str() const {
  if (isUnit()) return "unit";
  if (isBool()) return asBool() ? "true" : "false";
  if (isInt()) return std::to_string(asInt());
  if (isFloat()) return formatDouble(asFloat());
  if (isString()) return quoteString(asString());
  std::string s = "[";
  const auto& a = asArray();
  for (size_t i = 0; i < a.size(); ++i) {
    if (i) s += ", ";
    s += a[i].str();
  }
  return s + "]";
}

}  // namespace kiln::ir
