// Config parsing, printing and validation (contract in config.h), derived from the strategies'
// option tables (options.h), and the sm80_multistage rules.
#include "schedule/config.h"

#include <algorithm>

#include "schedule/options.h"

namespace kiln {
namespace {

using ir::DiagnosticEngine;
using ir::Location;

struct Entry {
  std::string_view text;
  size_t offset;  // of its first character in the line
};

std::vector<Entry> entries(std::string_view text) {
  std::vector<Entry> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    if (i >= text.size()) break;
    size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\t') ++j;
    out.push_back({text.substr(i, j - i), i});
    i = j;
  }
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::vector<std::string> keysOf(const options::Strategy& s) {
  std::vector<std::string> k = {"strategy"};
  for (const auto& o : s.options) k.push_back(o.key);
  return k;
}

// The other strategies that have `key`, as "a, b"; "" if none.
std::string ownersOf(std::string_view key, const options::Strategy& s) {
  std::vector<std::string> owners;
  for (const auto& other : options::strategies())
    if (&other != &s && other.find(key)) owners.push_back(other.name);
  return joined(owners);
}

// A key the config's strategy does not take: a typo of one it does, another strategy's, or neither.
std::string unknownKey(std::string_view key, const options::Strategy& s) {
  std::vector<std::string> own = keysOf(s);
  std::string near = options::didYouMean(key, own);
  if (std::string owners = ownersOf(key, s); !owners.empty())
    return "config key '" + std::string(key) + "' is not an option of " + s.name + " (it is one of " + owners +
           "); drop it or change the strategy";
  return "unknown config key '" + std::string(key) + "' for " + s.name +
         (near.empty() ? "" : " (did you mean '" + near + "'?)") + "; its keys: " + joined(own);
}

}  // namespace

const std::vector<std::string>& knownStrategies() {
  static const std::vector<std::string> s = [] {
    std::vector<std::string> v;
    for (const auto& st : options::strategies()) v.push_back(st.name);
    return v;
  }();
  return s;
}

std::optional<Config> Config::parse(std::string_view text, DiagnosticEngine& diag, const Location& loc,
                                    bool locIsText) {
  size_t errors = diag.errorCount();
  std::vector<Entry> es = entries(text);
  // An error about entry e, pointing at its column (1-based) of the text.
  auto fail = [&](const Entry& e, const std::string& msg) {
    uint32_t col = uint32_t(e.offset) + 1;
    if (locIsText)
      diag.error({loc.file, loc.line, (loc.col ? loc.col : 1) + col - 1}) << msg;
    else if (loc.known())
      diag.error(loc) << msg << " (config column " << col << ")";
    else
      diag.error(loc) << msg;
  };
  // The strategy first: it says which keys the rest may use and what they default to.
  const options::Strategy* s = &options::strategies().front();
  for (const Entry& e : es)
    if (e.text.substr(0, 9) == "strategy=") {
      std::string_view name = e.text.substr(9);
      s = options::findStrategy(name);
      if (!s) {
        std::string near = options::didYouMean(name, knownStrategies());
        fail(e, (name.empty() ? std::string("config key 'strategy' needs a name")
                              : "unknown strategy '" + std::string(name) + "'" +
                                    (near.empty() ? "" : " (did you mean '" + near + "'?)")) +
                    "; known strategies: " + joined(knownStrategies()));
        return std::nullopt;
      }
      break;
    }
  Config c = s->defaults();
  std::vector<std::string_view> seen;
  for (const Entry& e : es) {
    size_t eq = e.text.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      fail(e, "config entry '" + std::string(e.text) + "' must have the form key=value");
      continue;
    }
    std::string_view key = e.text.substr(0, eq), value = e.text.substr(eq + 1);
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      fail(e, "config key '" + std::string(key) + "' is given twice");
      continue;
    }
    seen.push_back(key);
    if (key == "strategy") continue;
    if (const options::Option* o = s->find(key); !o)
      fail(e, unknownKey(key, *s));
    else if (std::string err = o->set(c, value); !err.empty())
      fail(e, err);
  }
  if (diag.errorCount() != errors) return std::nullopt;
  return c;
}

Config Config::parse(std::string_view text) {
  DiagnosticEngine diag;
  auto c = parse(text, diag);
  if (!c) throw ir::Error(diag.diagnostics());
  return *c;
}

std::string Config::str() const {
  const options::Strategy* s = options::findStrategy(strategy);
  std::string out = "strategy=" + strategy;
  if (s)
    for (const auto& o : s->options) out += " " + o.key + "=" + o.get(*this);
  return out;
}

bool validate(const Config& c, const Target& t, const OperandInfo& ops, DiagnosticEngine& diag, const Location& loc) {
  const options::Strategy* s = options::findStrategy(c.strategy);
  if (!s) {
    diag.error(loc) << "unknown strategy '" << c.strategy << "'; known strategies: " << joined(knownStrategies());
    return false;
  }
  // A field no key of the strategy sets must keep its default: the strategy would ignore it.
  size_t errors = diag.errorCount();
  static const Config plain;
  std::vector<std::string> reported;
  for (const auto& other : options::strategies())
    for (const auto& o : other.options)
      if (!s->find(o.key) && o.get(c) != o.get(plain) &&
          std::find(reported.begin(), reported.end(), o.key) == reported.end()) {
        reported.push_back(o.key);
        diag.error(loc) << o.key << "=" << o.get(c) << " is not an option of " << c.strategy << " (it is one of "
                        << ownersOf(o.key, *s) << "); leave it at " << o.get(plain);
      }
  if (diag.errorCount() != errors) return false;
  return s->validate(c, t, ops, diag, loc);
}

bool validateSm80Multistage(const Config& c, const Target& t, const OperandInfo& ops, DiagnosticEngine& diag,
                            const Location& loc) {
  size_t errors = diag.errorCount();
  // ---- sm80_multistage: warp-level mma.sync m16n8k16 fed by ldmatrix.x4 from a cp.async ring.
  if (!t.mmaSync || !t.cpAsync || !t.ldmatrix)
    diag.error(loc) << "strategy " << c.strategy << " needs mma.sync, ldmatrix and cp.async, which " << t.name
                    << " does not have";
  // Shared-memory rows of 64, 128 or 256 bytes: bk = 32, 64, 128 for 16-bit operands, 64, 128, 256
  // for FP8 (whose MMA takes the same 32 bytes of K per step).
  int kBytes = std::max(1, std::min(ops.aElemBytes, ops.bElemBytes));
  if ((int64_t(c.bk) * kBytes != 64 && int64_t(c.bk) * kBytes != 128 && int64_t(c.bk) * kBytes != 256))
    diag.error(loc) << "bk=" << c.bk << " is not supported by " << c.strategy << ": use " << 64 / kBytes << ", "
                    << 128 / kBytes << " or " << 256 / kBytes
                    << (kBytes == 1 ? " for FP8 operands" : "")
                    << " (a power-of-two shared-memory row of at least 64 bytes, which the swizzle needs)";
  if (c.bm % c.warpsM != 0 || c.warpTileM() % 16 != 0)
    diag.error(loc) << "bm=" << c.bm << " does not split into warps_m=" << c.warpsM
                    << " warp tiles whose height is a multiple of 16 (the m16n8k16 MMA tile)";
  if (c.bn % c.warpsN != 0 || c.warpTileN() % 16 != 0)
    diag.error(loc) << "bn=" << c.bn << " does not split into warps_n=" << c.warpsN
                    << " warp tiles whose width is a multiple of 16 (two n8 MMA tiles, loaded by one ldmatrix.x4)";
  auto pow2 = [](int v) { return v > 0 && (v & (v - 1)) == 0; };
  if (c.bn % c.warpsN == 0 && c.warpTileN() % 16 == 0 && !pow2(c.warpTileN()))
    diag.error(loc) << "the warp tile width bn/warps_n=" << c.warpTileN()
                    << " must be a power of two (the swizzled B fragment addressing needs it)";
  if (c.threads() > t.maxThreadsPerBlock)
    diag.error(loc) << "warps_m*warps_n=" << c.warps() << " warps is " << c.threads() << " threads, over the "
                    << t.maxThreadsPerBlock << "-thread block limit of " << t.name;
  if (c.stages < 2)
    diag.error(loc) << "stages=" << c.stages << " is too few: " << c.strategy
                    << " needs at least 2 (one buffer filling while another is read)";
  // Each thread copies whole 16-byte chunks; every tile must give each thread the same number.
  auto checkCopies = [&](const char* what, int rows, int cols, int elemBytes) {
    int64_t chunks = int64_t(rows) * cols * elemBytes / 16;
    if (int64_t(rows) * cols * elemBytes % 16 != 0 || chunks % c.threads() != 0)
      diag.error(loc) << "the " << what << " tile (" << rows << "x" << cols << ", " << chunks
                      << " 16-byte chunks) does not divide evenly among " << c.threads() << " threads";
  };
  if (diag.errorCount() == errors) {
    checkCopies("A", c.bm, c.bk, ops.aElemBytes);
    checkCopies("B", c.bk, c.bn, ops.bElemBytes);
  }
  // The alignments: powers of two, at least an element of the operand they describe.
  auto checkAlign = [&](const char* key, int align, int elemBytes, const char* what) {
    if (!pow2(align))
      diag.error(loc) << key << "=" << align << " is not a power of two: use 1, 2, 4, 8 or 16";
    else if (elemBytes > 0 && align < elemBytes)
      diag.error(loc) << key << "=" << align << " is less than " << what << "'s " << elemBytes
                      << "-byte elements, which are always aligned to their size: use " << elemBytes << " or more";
  };
  checkAlign("align_a", c.alignA, ops.aElemBytes, "A");
  checkAlign("align_b", c.alignB, ops.bElemBytes, "B");
  checkAlign("align_c", c.alignC, 0, "C");
  int64_t need = c.pipelineSmemBytes(ops.aElemBytes, ops.bElemBytes);
  if (need > t.maxSmemPerBlock)
    diag.error(loc) << "the pipeline needs " << need << " bytes of shared memory (" << c.stages << " stages x "
                    << c.stageBytes(ops.aElemBytes, ops.bElemBytes) << " bytes), but " << t.name
                    << " allows at most " << t.maxSmemPerBlock << " bytes per block; lower stages, bm, bn or bk";
  return diag.errorCount() == errors;
}

}  // namespace kiln
