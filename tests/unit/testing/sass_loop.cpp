// Main-loop opcode counts from SASS text (contract in sass_loop.h).
#include "tests/unit/testing/sass_loop.h"

#include <regex>
#include <sstream>
#include <vector>

namespace kiln::testing {

std::vector<std::string> loopSequence(const std::string& sass) {
  std::vector<std::string> lines;
  std::istringstream in(sass);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::map<std::string, size_t> labels;
  static const std::regex labelRe(R"(^\s*(\.L_x_\d+):)");
  // "@P0 BRA `(.L_x_1)", and the uniform form "BRA.U UP0, `(.L_x_1)" (sm_120 loops).
  static const std::regex braRe(R"(BRA(\.U)?\s+(!?U?P[T0-9]+,\s*)?`?\(?(\.L_x_\d+)\)?)");
  static const std::regex instRe(R"(/\*[0-9a-f]{4,}\*/\s+(@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*))");
  std::smatch m;
  size_t begin = 0, end = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (std::regex_search(lines[i], m, labelRe)) labels[m[1]] = i;
    if (std::regex_search(lines[i], m, braRe) && labels.count(m[3]) && labels[m[3]] < i &&
        i - labels[m[3]] > end - begin) {
      begin = labels[m[3]];
      end = i;
    }
  }
  std::vector<std::string> seq;
  for (size_t i = begin; i < end; ++i)
    if (std::regex_search(lines[i], m, instRe)) seq.push_back(m[2]);
  return seq;
}

std::map<std::string, int> loopOpcodes(const std::string& sass) {
  std::map<std::string, int> counts;
  for (const std::string& op : loopSequence(sass)) counts[op]++;
  return counts;
}

std::map<std::string, int> kLoopOpcodes(const std::string& sass, const std::string& mma) {
  static const std::regex labelRe(R"(^\s*(\.L_x_\d+):)");
  static const std::regex braRe(R"(BRA(\.U)?\s+(!?U?P[T0-9]+,\s*)?`?\(?(\.L_x_\d+)\)?)");
  static const std::regex instRe(R"(/\*[0-9a-f]{4,}\*/\s+(@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*))");
  std::vector<std::string> ops;            // per instruction, its opcode
  std::map<std::string, size_t> labels;    // label -> index of the next instruction
  std::vector<std::pair<size_t, size_t>> loops;
  std::istringstream in(sass);
  std::smatch m;
  for (std::string l; std::getline(in, l);) {
    if (std::regex_search(l, m, labelRe)) labels[m[1]] = ops.size();
    if (!std::regex_search(l, m, instRe)) continue;
    ops.push_back(m[2]);
    if (std::regex_search(l, m, braRe) && labels.count(m[3])) loops.push_back({labels[m[3]], ops.size()});
  }
  std::map<std::string, int> best;
  int bestMma = 0;
  size_t bestLen = 0;
  for (auto [b, e] : loops) {
    std::map<std::string, int> counts;
    bool stores = false;
    for (size_t i = b; i < e; ++i) {
      counts[ops[i]]++;
      stores |= ops[i].rfind("ST", 0) == 0 || ops[i].rfind("UTMASTG", 0) == 0;
    }
    const int n = countPrefix(counts, mma);
    if (stores || n == 0 || n < bestMma || (n == bestMma && e - b >= bestLen)) continue;
    best = counts;
    bestMma = n;
    bestLen = e - b;
  }
  return best;
}

int countPrefix(const std::map<std::string, int>& ops, const std::string& prefix) {
  int n = 0;
  for (const auto& [op, c] : ops)
    if (op.rfind(prefix, 0) == 0) n += c;
  return n;
}

}  // namespace kiln::testing
