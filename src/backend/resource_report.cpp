#include "kiln/resource_report.h"

#include "backend/resource_report_json.h"

#include <charconv>
#include <optional>
#include <set>

#include <fmt/format.h>

namespace kiln::backend {

std::string ResourceReport::str() const {
  return fmt::format("{}: {} regs, {} barriers, {} B stack, {} B spill stores, {} B spill loads, "
                     "{} B smem, {} B cmem[0]",
                     kernel, registers, barriers, stackFrameBytes, spillStoreBytes, spillLoadBytes,
                     sharedBytes, constBytes);
}

nlohmann::json toJson(const ResourceReport& r) {
  return {{"kernel", r.kernel},
          {"registers", r.registers},
          {"barriers", r.barriers},
          {"stack_frame_bytes", r.stackFrameBytes},
          {"spill_store_bytes", r.spillStoreBytes},
          {"spill_load_bytes", r.spillLoadBytes},
          {"shared_bytes", r.sharedBytes},
          {"const_bytes", r.constBytes}};
}

bool fromJson(const nlohmann::json& j, ResourceReport& out) {
  if (!j.is_object() || !j.contains("kernel") || !j["kernel"].is_string()) return false;
  out.kernel = j["kernel"].get<std::string>();
  const std::pair<const char*, int*> fields[] = {
      {"registers", &out.registers},           {"barriers", &out.barriers},
      {"stack_frame_bytes", &out.stackFrameBytes}, {"spill_store_bytes", &out.spillStoreBytes},
      {"spill_load_bytes", &out.spillLoadBytes}, {"shared_bytes", &out.sharedBytes},
      {"const_bytes", &out.constBytes}};
  for (auto [name, field] : fields) {
    auto it = j.find(name);
    if (it == j.end() || !it->is_number_integer()) return false;
    *field = it->get<int>();
  }
  return true;
}

namespace {

// One log's worth of figures for one function, before the two sources are merged.
struct Figures {
  std::optional<int> registers, barriers, stack, spillStores, spillLoads, shared, constant;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool consume(std::string_view& s, std::string_view prefix) {
  if (!s.starts_with(prefix)) return false;
  s.remove_prefix(prefix.size());
  return true;
}

// "'name':" / "name" -> "name"
std::string functionName(std::string_view s) {
  s = trim(s);
  if (s.ends_with(':')) s.remove_suffix(1);
  if (s.size() >= 2 && s.front() == '\'' && s.back() == '\'') s = s.substr(1, s.size() - 2);
  return std::string(s);
}

// Reads a comma-separated list of "[used] N what" items into `f`; unknown items are ignored so a
// new ptxas figure does not break the parser.
void readItems(std::string_view list, Figures& f) {
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = trim(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    if (!consume(item, "Used ")) consume(item, "used ");
    item = trim(item);
    int n = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), n);
    if (ec != std::errc()) continue;
    std::string_view what = trim(std::string_view(end, item.data() + item.size() - end));
    if (what == "registers") f.registers = n;
    else if (what == "barriers") f.barriers = n;
    else if (what == "bytes stack frame" || what == "stack") f.stack = n;
    else if (what == "bytes spill stores") f.spillStores = n;
    else if (what == "bytes spill loads") f.spillLoads = n;
    else if (what == "bytes smem") f.shared = n;
    else if (what == "bytes cmem[0]") f.constant = n;
  }
}

}  // namespace

std::map<std::string, ResourceReport> parseResourceReports(std::string_view log) {
  std::map<std::string, Figures> fromPtxas, fromLinker;
  std::set<std::string> entries, ptxasSawUsedLine;
  std::string ptxasCurrent, linkerCurrent;

  while (!log.empty()) {
    size_t nl = log.find('\n');
    std::string_view line = log.substr(0, nl);
    log = nl == std::string_view::npos ? std::string_view{} : log.substr(nl + 1);

    std::string_view rest = line;
    if (consume(rest, "ptxas")) {
      rest = trim(rest);
      if (consume(rest, ".")) {  // property continuation line (nvJitLink's format)
        if (!ptxasCurrent.empty()) readItems(rest, fromPtxas[ptxasCurrent]);
        continue;
      }
      if (!consume(rest, "info")) continue;
      rest = trim(rest);
      if (!consume(rest, ":")) continue;
      rest = trim(rest);
      if (consume(rest, "Compiling entry function ")) {
        size_t forPos = rest.rfind(" for ");
        ptxasCurrent = functionName(rest.substr(0, forPos));
        entries.insert(ptxasCurrent);
      } else if (consume(rest, "Function properties for ")) {
        ptxasCurrent = functionName(rest);
      } else if (rest.starts_with("Used ") && !ptxasCurrent.empty()) {
        readItems(rest, fromPtxas[ptxasCurrent]);
        ptxasSawUsedLine.insert(ptxasCurrent);
      }
      continue;
    }
    if (consume(rest, "info")) {  // the linker's own summary
      rest = trim(rest);
      if (!consume(rest, ":")) continue;
      rest = trim(rest);
      if (consume(rest, "Function properties for ")) linkerCurrent = functionName(rest);
      else if (rest.starts_with("used ") && !linkerCurrent.empty()) readItems(rest, fromLinker[linkerCurrent]);
      continue;
    }
    // Standalone ptxas prints the property line without a prefix: "    0 bytes stack frame, ...".
    rest = trim(rest);
    if (!ptxasCurrent.empty() && rest.find("bytes stack frame") != std::string_view::npos)
      readItems(rest, fromPtxas[ptxasCurrent]);
  }

  std::set<std::string> names = entries;
  if (names.empty()) {
    for (auto& [n, _] : fromPtxas) names.insert(n);
    for (auto& [n, _] : fromLinker) names.insert(n);
  }
  std::map<std::string, ResourceReport> out;
  for (const std::string& name : names) {
    const Figures& p = fromPtxas[name];
    const Figures& l = fromLinker[name];
    auto pick = [](const std::optional<int>& a, const std::optional<int>& b) { return a.value_or(b.value_or(0)); };
    ResourceReport r;
    r.kernel = name;
    r.registers = pick(p.registers, l.registers);
    r.barriers = pick(p.barriers, l.barriers);
    r.stackFrameBytes = pick(p.stack, l.stack);
    r.spillStoreBytes = pick(p.spillStores, l.spillStores);
    r.spillLoadBytes = pick(p.spillLoads, l.spillLoads);
    // ptxas leaves out "0 bytes smem"; the linker's figure includes reserved memory (see header).
    r.sharedBytes = ptxasSawUsedLine.count(name) ? p.shared.value_or(0) : pick(p.shared, l.shared);
    r.constBytes = pick(p.constant, l.constant);
    out.emplace(name, std::move(r));
  }
  return out;
}

}  // namespace kiln::backend
