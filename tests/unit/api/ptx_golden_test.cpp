// Generated code does not change by accident: the PTX and launch contract of every registered
// variant, of every example under the schedules the tests give it, and of the config sweep's first
// draws are pinned by their SHA-256 in tests/unit/api/ptx_golden.txt.
//
// A refactoring of the compiler (a lowering split into passes, options retyped, files moved) must
// leave these hashes as they are; a change that means to alter code says so in its commit and
// refreshes the file:
//
//   KILN_UPDATE_PTX_GOLDEN=1 build/tests/kiln_unit_tests --gtest_filter='PtxGolden.*'
//
// A mismatch names every subject whose code changed, so the diff of the PTX can be looked at
// with `kiln compile` before the file is refreshed, or with KILN_PTX_GOLDEN_DUMP=DIR, which writes
// each subject's PTX and launch contract (the hashed text) to DIR/<subject>.ptx: dump before and
// after a change and diff the folders.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>

#include "backend/sha256.h"
#include "examples/examples.h"
#include "kiln/compile.h"
#include "kiln/target.h"
#include "ops/gemm_bf16.h"
#include "ops/gemm_fp8.h"
#include "schedule/config.h"
#include "tests/unit/schedule/sm90_config_draw.h"
#include "tests/unit/testing/example_configs.h"

namespace kiln {
namespace {

const char* kGoldenPath = KILN_SOURCE_DIR "/tests/unit/api/ptx_golden.txt";

// The launch contract in a fixed text form: what the runtime reads from a compile besides the PTX.
std::string launchText(const LaunchInfo& l) {
  std::ostringstream os;
  os << "kernel " << l.kernelName << " threads " << l.threads << " smem " << l.dynamicSmemBytes << " persistent "
     << l.persistent << " cluster " << l.cluster[0] << "," << l.cluster[1] << "," << l.cluster[2] << " workspace "
     << l.workspaceUnitBytes[0] << "," << l.workspaceUnitBytes[1] << "," << l.workspacePerBlock << "\n";
  for (const auto& p : l.params) {
    os << "param " << p.name << " kind " << int(p.kind) << " elem " << int(p.elem) << " align " << p.alignment
       << " tensor " << p.tensor << " swizzle " << p.swizzleBytes << " box";
    for (int64_t b : p.box) os << " " << b;
    if (p.stream)
      os << " stream " << p.stream->boundDim << "<=" << p.stream->bound << " " << p.stream->rowDim << "%"
         << p.stream->rowMultiple << " fill " << p.stream->fillBytes;
    os << "\n";
  }
  for (const auto& g : l.grid) {
    os << "grid " << g.constant;
    for (const auto& [dim, tile] : g.tiles) os << " " << dim << "/" << tile;
    os << "\n";
  }
  for (const auto& [dim, v] : l.divisibility) os << "divisible " << dim << " " << v << "\n";
  if (l.programmatic) os << "programmatic\n";
  return os.str();
}

// The PTX without the " at FILE:LINE:COL" of its `// kiln: OP at FILE:LINE:COL` comments (the op
// names stay): a program built with the C++ DSL carries the lines of the C++ that built it, so
// moving that code (or a table above it) by a line would change every hash though no instruction
// changed, and the file is recorded as the build gave it (absolute, or relative under ccache).
std::string withoutLocations(const std::string& ptx) {
  std::istringstream in(ptx);
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.find("// kiln: ") != std::string::npos)
      if (size_t at = line.rfind(" at "); at != std::string::npos) line.erase(at);
    out += line + "\n";
  }
  return out;
}

struct Subject {
  std::string name;
  std::function<std::optional<CompileResult>(ir::DiagnosticEngine&)> compile;
};

std::vector<Subject> subjects() {
  std::vector<Subject> out;
  for (const auto& v : ops::gemmBf16Variants())
    for (bool kMajor : {false, true}) {
      Target t = v.config.strategy == "sm90_ws_persistent" ? Target::sm90a() : Target::sm80();
      out.push_back({v.name + (kMajor ? " kmajor" : ""), [&v, kMajor, t](ir::DiagnosticEngine& d) {
                       return v.compile(kMajor, t, d);
                     }});
    }
  for (const auto& v : ops::gemmFp8Variants())
    out.push_back({v.name, [&v](ir::DiagnosticEngine& d) { return v.compile(Target::sm90a(), d); }});
  for (const auto& e : examples::all())
    for (const Target& t : {Target::sm80(), Target::sm89(), Target::sm90a()}) {
      std::string cfg = testing::exampleConfig(e.name);
      if (cfg.rfind("strategy=", 0) != 0) cfg = "strategy=sm80_multistage " + cfg;
      out.push_back({"example " + e.name + " " + t.name, [&e, t, cfg](ir::DiagnosticEngine& d) {
                       return kiln::compile(*e.build(), t, Config::parse(cfg), d);
                     }});
    }
  // The sweep's draws cover option combinations no registered variant uses; the first of them
  // that compile, in draw order (a draw that is refused is not a subject).
  std::mt19937 rng(sm90draw::kDefaultSeed);
  for (int i = 0; i < 400; ++i) {
    sm90draw::Drawn dr = sm90draw::draw(rng);
    out.push_back({"sweep " + std::to_string(i), [dr](ir::DiagnosticEngine& d) -> std::optional<CompileResult> {
                     ir::DiagnosticEngine quiet;
                     auto config = Config::parse(dr.config, quiet);
                     if (!config) return std::nullopt;
                     auto program = dr.fp8 ? examples::fp8RowwiseGemm() : examples::gemmBf16();
                     return kiln::compile(*program, Target::sm90a(), *config, quiet);
                   }});
  }
  return out;
}

std::map<std::string, std::string> readGolden() {
  std::map<std::string, std::string> g;
  std::ifstream in(kGoldenPath);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t sp = line.rfind(' ');
    if (sp != std::string::npos) g[line.substr(0, sp)] = line.substr(sp + 1);
  }
  return g;
}

TEST(PtxGolden, EveryPinnedKernelIsUnchanged) {
  std::vector<std::pair<std::string, std::string>> now;  // in subject order
  for (const auto& s : subjects()) {
    ir::DiagnosticEngine diag;
    auto r = s.compile(diag);
    bool variant = s.name.rfind("sweep ", 0) != 0 && s.name.rfind("example ", 0) != 0;
    if (!r) {
      // A registered variant must compile; an example on a target without its instructions (FP8
      // on sm_80) and a sweep draw may be refused, and the refusal is pinned as such.
      ASSERT_FALSE(variant) << s.name << " does not compile:\n" << diag.str();
      now.push_back({s.name, "refused"});
      continue;
    }
    const std::string text = withoutLocations(r->ptx) + "\n--launch--\n" + launchText(r->launch);
    if (const char* dir = std::getenv("KILN_PTX_GOLDEN_DUMP"); dir && *dir) {
      std::string file = s.name;
      for (char& ch : file)
        if (ch == ' ' || ch == '/') ch = '_';
      std::ofstream(std::string(dir) + "/" + file + ".ptx") << text;
    }
    now.push_back({s.name, backend::toHex(backend::Sha256::of(text))});
  }
  if (const char* u = std::getenv("KILN_UPDATE_PTX_GOLDEN"); u && *u && std::string(u) != "0") {
    std::ofstream out(kGoldenPath);
    out << "# SHA-256 of each subject's PTX and launch contract (tests/unit/api/ptx_golden_test.cpp says how\n"
           "# to refresh it). One line per subject: name, hash.\n";
    for (const auto& [name, hash] : now) out << name << " " << hash << "\n";
    GTEST_SKIP() << "wrote " << now.size() << " hashes to " << kGoldenPath;
  }
  auto golden = readGolden();
  ASSERT_FALSE(golden.empty()) << kGoldenPath << " is missing or empty";
  std::ostringstream changed, added;
  int nChanged = 0;
  std::map<std::string, bool> seen;
  for (const auto& [name, hash] : now) {
    seen[name] = true;
    auto it = golden.find(name);
    if (it == golden.end())
      added << "  " << name << "\n";
    else if (it->second != hash)
      changed << "  " << name << (hash == "refused" ? " (now refused)" : it->second == "refused" ? " (now compiles)" : "")
              << "\n",
          ++nChanged;
  }
  std::ostringstream gone;
  for (const auto& [name, hash] : golden)
    if (!seen.count(name)) gone << "  " << name << "\n";
  EXPECT_EQ(nChanged, 0) << "the generated code of these subjects changed:\n" << changed.str();
  EXPECT_TRUE(added.str().empty()) << "subjects with no pinned hash:\n" << added.str();
  EXPECT_TRUE(gone.str().empty()) << "pinned subjects that no longer exist:\n" << gone.str();
}

}  // namespace
}  // namespace kiln
