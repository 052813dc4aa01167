#pragma once
// Options: each strategy's config keys, declared once (DESIGN.md, "Schedules: algorithm apart from
// how").
//
// A strategy's table lists, per key, its group (mainloop, scheduler, cluster, epilogue, ...), its
// type, its default, what it accepts (a range or a list of names), a one-line meaning and the
// typed Config field it sets. Everything else is derived from the tables: Config::parse (which
// keys a strategy takes, the exact errors for unknown keys with a did-you-mean, bad values and
// out-of-range ones), Config::str (the canonical line), a strategy's defaults (a bare
// `strategy=S` gets a config S compiles), validate()'s dispatch to the strategy's rules, and the
// reference (`kiln config --list`, docs/config.md). Adding a key is one row of one table.
//
//   Strategy{"sm90_ws_persistent", "...", validateSm90WsPersistent, {
//       intOption("bm", "mainloop", &Config::bm, 1, 1024, 128, "block tile rows (M)"), ...}}
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "schedule/config.h"

namespace kiln::options {

enum class Type : uint8_t { Int, Enum, Bool };

struct Option {
  std::string key;
  std::string group;
  Type type = Type::Int;
  std::string meaning;
  int lo = 0, hi = 0;               // Int: the accepted range
  std::vector<std::string> values;  // Enum, Bool: the accepted names, in order
  std::string defaultValue;         // as printed
  std::function<std::string(const Config&)> get;
  // Sets the field from its text: "" on success, else the complete error message.
  std::function<std::string(Config&, std::string_view)> set;

  std::string typeName() const;  // "int", "enum", "bool"
  std::string allowed() const;   // "1 to 1024", "row, grouped"
};

using Validator = bool (*)(const Config&, const Target&, const OperandInfo&, ir::DiagnosticEngine&,
                           const ir::Location&);

struct Strategy {
  std::string name;
  std::string summary;  // one line: what the strategy generates
  Validator validate = nullptr;
  std::vector<Option> options;

  const Option* find(std::string_view key) const;
  // The config a bare `strategy=NAME` parses to: every option at its default.
  Config defaults() const;
};

// The strategies, in the order the reference lists them (sm80_multistage first: the strategy of
// a config that names none).
const std::vector<Strategy>& strategies();
const Strategy* findStrategy(std::string_view name);

// Of `candidates`, the one nearest `word` when it is a likely typo (edit distance at most 2, and
// not the whole word), else "".
std::string didYouMean(std::string_view word, const std::vector<std::string>& candidates);

// The reference, by strategy and group: plain text (`kiln config --list`), JSON (--json) and the
// Markdown of docs/config.md (--markdown). `only` selects one strategy (nullptr: all).
std::string listText(const Strategy* only = nullptr);
nlohmann::json listJson(const Strategy* only = nullptr);
std::string markdown();

}  // namespace kiln::options
