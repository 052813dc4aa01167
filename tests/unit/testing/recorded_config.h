#pragma once
// A config line as a past benchmark run recorded it (bench/results/*.json): the flat config of its
// date printed every key of every GEMM strategy, and some keys have since been removed. Keys the
// line's strategy no longer takes are dropped when they hold the value that meant "not used" (what
// the strategy does today); any other value cannot be today's config, so the line matches none.
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include "schedule/options.h"

namespace kiln::testing {

inline std::optional<Config> parseRecordedConfig(const std::string& line) {
  static const std::map<std::string, std::string> inert = {
      {"split_k", "1"}, {"swap_ab", "false"}, {"cluster_m", "1"}, {"cluster_n", "1"}, {"epilogue", "direct"},
      {"consumers", "cooperative"}, {"l2_hint", "none"}, {"stage_store", "pairs"}, {"stream_k", "0"},
      {"reuse_stage", "false"}, {"store_slots", "0"}, {"store_pieces", "0"}, {"fp8_accum", "fast"},
      {"epilogue_loads", "late"}, {"frag_prefetch", "a"}, {"regs_producer", "0"}, {"regs_consumer", "0"},
      {"stagger", "0"}, {"store_hint", "none"}, {"stream_fill", "128"}, {"split_handover", "workspace"}};
  std::string strategy = "sm80_multistage";
  std::istringstream in(line);
  for (std::string e; in >> e;)
    if (e.rfind("strategy=", 0) == 0) strategy = e.substr(9);
  const options::Strategy* s = options::findStrategy(strategy);
  if (!s) return std::nullopt;
  std::string kept;
  std::istringstream again(line);
  for (std::string e; again >> e;) {
    std::string key = e.substr(0, e.find('=')), value = e.substr(e.find('=') + 1);
    if (key != "strategy" && !s->find(key)) {
      auto it = inert.find(key);
      if (it == inert.end() || it->second != value) return std::nullopt;
      continue;
    }
    kept += e + " ";
  }
  ir::DiagnosticEngine diag;
  return Config::parse(kept, diag);
}

}  // namespace kiln::testing
