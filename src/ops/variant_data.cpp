#include "ops/variant_data.h"

#include <fmt/format.h>

#include <set>
#include <stdexcept>

namespace kiln::ops {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::vector<VariantRow> parseVariantRows(std::string_view text, std::string_view file, std::string_view strategy) {
  std::vector<VariantRow> rows;
  std::set<std::string, std::less<>> names;
  int lineNo = 0;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    ++lineNo;
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;
    auto fail = [&](const std::string& what) {
      throw std::logic_error(fmt::format("{}:{}: {}", file, lineNo, what));
    };
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) fail("a variant row is `name: config`, and this one has no ':'");
    std::string name(trim(line.substr(0, colon)));
    if (name.empty() || name.find(' ') != std::string::npos) fail("the variant's name must be one word");
    if (!names.insert(name).second) fail("variant '" + name + "' is registered twice");
    std::string configText = fmt::format("strategy={} {}", strategy, trim(line.substr(colon + 1)));
    ir::DiagnosticEngine diag;
    std::optional<Config> config = Config::parse(configText, diag);
    if (!config) fail(fmt::format("variant '{}': {}", name, trim(diag.str())));
    rows.push_back({std::move(name), std::move(*config), lineNo});
  }
  return rows;
}

}  // namespace kiln::ops
