#include "dialects/ptx_name.h"

#include <fmt/format.h>

namespace kiln {
namespace {
bool letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool digit(char c) { return c >= '0' && c <= '9'; }

// A character as the user would recognise it in a message: printable ASCII as itself, the rest
// by code.
std::string shown(char c) {
  auto u = static_cast<unsigned char>(c);
  if (u >= 0x21 && u < 0x7f) return fmt::format("'{}'", c);
  if (c == ' ') return "a space";
  return fmt::format("byte 0x{:02x}", u);
}
// Why, as a clause; "" when the name is an identifier.
std::string why(std::string_view name) {
  if (name.empty()) return "it is empty";
  if (name.size() > kMaxPtxNameLength)
    return fmt::format("it is {} characters long, more than the {} a kernel name may have", name.size(),
                       kMaxPtxNameLength);
  char first = name[0];
  if (!letter(first) && first != '_' && first != '$' && first != '%')
    return fmt::format("it starts with {}; it must start with a letter, '_', '$' or '%'", shown(first));
  for (size_t i = 1; i < name.size(); ++i) {
    char c = name[i];
    if (!letter(c) && !digit(c) && c != '_' && c != '$')
      return fmt::format("it contains {} at offset {}; only ASCII letters, digits, '_' and '$' may follow the first "
                         "character",
                         shown(c), i);
  }
  return "";
}

// The name as a message can show it: non-printing bytes escaped, a long one cut.
std::string printable(std::string_view name) {
  std::string s;
  for (size_t i = 0; i < name.size() && i < 40; ++i) {
    auto u = static_cast<unsigned char>(name[i]);
    s += u >= 0x20 && u < 0x7f && u != '"' && u != '\\' ? std::string(1, name[i]) : fmt::format("\\x{:02x}", u);
  }
  return name.size() > 40 ? s + "..." : s;
}
}  // namespace

std::string ptxNameProblem(std::string_view name) {
  std::string w = why(name);
  if (w.empty()) return w;
  return fmt::format("kernel name \"{}\" cannot be a PTX entry name: {}; use a name like my_kernel_1", printable(name), w);
}

}  // namespace kiln
