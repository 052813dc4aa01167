#pragma once
// Attributes: compile-time constants attached to operations (and type parameters).
//
// unit, bool, 64-bit integer, double, string and arrays of attributes. Text form:
//   true  42  -3  1.5  1.0e-05  inf  -inf  nan  "text"  [1, 2, "M"]
// Floats always print with a '.', an exponent, or as inf/nan, so that they read back as floats;
// they print in the shortest form that parses back to the same double (exact round trip).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace kiln::ir {

class Attribute {
 public:
  using Array = std::vector<Attribute>;
  struct Unit {
    bool operator==(const Unit&) const = default;
  };

  Attribute() : v_(Unit{}) {}
  Attribute(bool b) : v_(b) {}
  Attribute(int v) : v_(int64_t{v}) {}
  Attribute(int64_t v) : v_(v) {}
  Attribute(double v) : v_(v) {}
  Attribute(std::string s) : v_(std::move(s)) {}
  Attribute(const char* s) : v_(std::string(s)) {}
  Attribute(Array a) : v_(std::move(a)) {}
  static Attribute strings(const std::vector<std::string>& v);
  static Attribute ints(const std::vector<int64_t>& v);

  bool isUnit() const { return std::holds_alternative<Unit>(v_); }
  bool isBool() const { return std::holds_alternative<bool>(v_); }
  bool isInt() const { return std::holds_alternative<int64_t>(v_); }
  bool isFloat() const { return std::holds_alternative<double>(v_); }
  bool isString() const { return std::holds_alternative<std::string>(v_); }
  bool isArray() const { return std::holds_alternative<Array>(v_); }

  bool asBool() const { return std::get<bool>(v_); }
  int64_t asInt() const { return std::get<int64_t>(v_); }
  double asFloat() const { return std::get<double>(v_); }
  // A number as a double, whether it was written as an integer or a float.
  double asNumber() const { return isInt() ? double(asInt()) : asFloat(); }
  const std::string& asString() const { return std::get<std::string>(v_); }
  const Array& asArray() const { return std::get<Array>(v_); }
  // Array of strings / ints, or nullopt when the attribute is not of that shape.
  std::optional<std::vector<std::string>> asStrings() const;
  std::optional<std::vector<int64_t>> asInts() const;

  std::string str() const;
  bool operator==(const Attribute& o) const = default;

 private:
  std::variant<Unit, bool, int64_t, double, std::string, Array> v_;
};

struct NamedAttr {
  std::string name;
  Attribute value;
  bool operator==(const NamedAttr&) const = default;
};

std::string quoteString(std::string_view s);  // "..." with \" \\ \n \t and \xx escapes
std::string formatDouble(double d);           // shortest round-trip form, always float-looking

}  // namespace kiln::ir
