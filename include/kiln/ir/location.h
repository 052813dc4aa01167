#pragma once
// Source locations carried by every operation and diagnostic.
//
// A location names where a piece of IR came from: a line and column of a .kiln text file, or the
// file and line of the user's C++ that called the ProgramBuilder (std::source_location). Generated
// IR inherits the location of the op it was lowered from, so an error found late still points at
// something the user wrote.
#include <cstdint>
#if __has_include(<source_location>)
#include <source_location>
#endif
#include <string>

namespace kiln::ir {

struct Location {
  std::string file;   // empty: unknown
  uint32_t line = 0;
  uint32_t col = 0;

  static Location unknown() { return {}; }
#ifdef __cpp_lib_source_location  // clang 14 with libstdc++ 12 lacks it: only the fuzz build is affected
  static Location fromCpp(const std::source_location& sl) {
    return {sl.file_name(), static_cast<uint32_t>(sl.line()), static_cast<uint32_t>(sl.column())};
  }
#endif
  bool known() const { return !file.empty() || line != 0; }
  std::string str() const;   // "file:line:col", "line:col" or "<unknown>"
  bool operator==(const Location&) const = default;
};

}  // namespace kiln::ir
