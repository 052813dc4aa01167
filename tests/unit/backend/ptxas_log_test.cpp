#include "backend/ptxas_log.h"

#include <gtest/gtest.h>

namespace kiln::backend {
namespace {

using Kind = PtxasMessage::Kind;

TEST(PtxasLog, ParsesErrorsWarningsAndAdvisories) {
  // Captured from nvJitLink 13.0 (error log and info log together).
  constexpr std::string_view log = R"(ptxas application ptx input, line 15; error   : Arguments mismatch for instruction 'st'
ptxas application ptx input, line 15; error   : Unknown symbol '%r9'
ptxas fatal   : Ptx assembly aborted due to errors
ERROR NVJITLINK_ERROR_PTX_COMPILE: JIT the PTX (kernel.ptx)
ptxas info    : (C7504) Potential Performance Loss: 'setmaxnreg' ignored to maintain compatibility across compilation units.
ptxas info    : 0 bytes gmem
ptxas warning : Conflicting options '--compile-only' and '--extensible-whole-program' specified
ptxas application ptx input, line 7; warning : Unused variable
info    : used 8 registers, used 1 barriers, 0 stack, 5120 bytes smem, 536 bytes cmem[0], 0 bytes lmem
)";
  auto m = parsePtxasMessages(log);
  ASSERT_EQ(m.size(), 6u);
  EXPECT_EQ(m[0].kind, Kind::Error);
  EXPECT_EQ(m[0].ptxLine, 15);
  EXPECT_EQ(m[0].text, "Arguments mismatch for instruction 'st'");
  EXPECT_EQ(m[1].text, "Unknown symbol '%r9'");
  EXPECT_EQ(m[2].kind, Kind::Fatal);
  EXPECT_EQ(m[2].ptxLine, 0);
  EXPECT_EQ(m[3].kind, Kind::Advisory);
  EXPECT_TRUE(m[3].text.starts_with("(C7504) Potential Performance Loss"));
  EXPECT_EQ(m[4].kind, Kind::Warning);
  EXPECT_EQ(m[4].ptxLine, 0);
  EXPECT_EQ(m[5].kind, Kind::Warning);
  EXPECT_EQ(m[5].ptxLine, 7);
}

TEST(PtxasLog, ParsesLocationsAsLocationStrWritesThem) {
  EXPECT_EQ(parseLocation("gemm.kiln:3:5"), (ir::Location{"gemm.kiln", 3, 5}));
  EXPECT_EQ(parseLocation("/a/b:c/gemm.cpp:30:1"), (ir::Location{"/a/b:c/gemm.cpp", 30, 1}));
  EXPECT_EQ(parseLocation("gemm.cpp:30"), (ir::Location{"gemm.cpp", 30, 0}));
  EXPECT_EQ(parseLocation("3:5"), (ir::Location{"", 3, 5}));
  EXPECT_EQ(parseLocation("<unknown>"), ir::Location::unknown());
  EXPECT_EQ(parseLocation("weird"), (ir::Location{"weird", 0, 0}));
}

TEST(PtxasLog, ProvenanceIsTheNearestCommentInTheSameFunction) {
  constexpr std::string_view ptx = R"(.version 8.8
.visible .entry a()
{
  // kiln: kern.first at x.kiln:1:2
  mov.u32 %r1, 1;
  // kiln: kern.second at x.kiln:2:3
  mov.u32 %r2, 2;
  ret;
}
.visible .entry b()
{
  mov.u32 %r1, 1;
})";
  PtxSourceMap map(ptx);
  EXPECT_FALSE(map.provenanceOf(3));
  ASSERT_TRUE(map.provenanceOf(4));  // the comment line belongs to its own op
  EXPECT_EQ(map.provenanceOf(5)->opName, "kern.first");
  EXPECT_EQ(map.provenanceOf(7)->opName, "kern.second");
  EXPECT_EQ(map.provenanceOf(8)->loc, (ir::Location{"x.kiln", 2, 3}));
  EXPECT_EQ(map.provenanceOf(8)->commentLine, 6);
  EXPECT_FALSE(map.provenanceOf(12)) << "kern.second's comment must not explain entry b";
  EXPECT_FALSE(map.provenanceOf(99));
  EXPECT_EQ(map.lineText(7), "mov.u32 %r2, 2;");
  EXPECT_EQ(map.lineText(0), "");
}

TEST(PtxasLog, ReportsErrorsAtTheKilnOpAndKeepsWarnings) {
  constexpr std::string_view ptx = "l1\n// kiln: kern.store at g.kiln:5:9\nst.global.u32 [%rd2], %r9;\n";
  std::vector<PtxasMessage> messages = {
      {Kind::Error, 3, "Unknown symbol '%r9'"},
      {Kind::Fatal, 0, "Ptx assembly aborted due to errors"},
      {Kind::Advisory, 0, "(C7504) Potential Performance Loss: 'setmaxnreg' ignored"},
      {Kind::Warning, 1, "something odd"}};
  ir::DiagnosticEngine diag;
  auto warnings = reportPtxasMessages(messages, PtxSourceMap(ptx), "k.ptx", "sm_90a", diag);
  ASSERT_EQ(diag.diagnostics().size(), 3u) << diag.str();  // the fatal repeats the error: dropped
  const ir::Diagnostic& e = diag.diagnostics()[0];
  EXPECT_EQ(e.severity, ir::Severity::Error);
  EXPECT_EQ(e.loc, (ir::Location{"g.kiln", 5, 9}));
  EXPECT_EQ(e.message, "ptxas: Unknown symbol '%r9' (in the PTX emitted for kern.store at g.kiln:5:9; "
                       "PTX line 3: `st.global.u32 [%rd2], %r9;`)");
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_EQ(warnings[0].severity, ir::Severity::Warning);
  EXPECT_EQ(warnings[0].message,
            "ptxas: (C7504) Potential Performance Loss: 'setmaxnreg' ignored (assembling k.ptx for sm_90a)");
  EXPECT_EQ(warnings[1].loc, (ir::Location{"k.ptx", 1, 0})) << "no comment: point at the PTX line";
  EXPECT_EQ(warnings[1].message, "ptxas: something odd (PTX line 1: `l1`)");
}

TEST(PtxasLog, FatalWithoutEarlierErrorsIsReported) {
  ir::DiagnosticEngine diag;
  reportPtxasMessages({{Kind::Fatal, 0, "PTX with .target 'sm_90a' cannot be compiled for architecture 'sm_80'"}},
                      PtxSourceMap(""), "k.ptx", "sm_80", diag);
  ASSERT_EQ(diag.errorCount(), 1u);
  EXPECT_EQ(diag.diagnostics()[0].message,
            "ptxas: PTX with .target 'sm_90a' cannot be compiled for architecture 'sm_80' "
            "(assembling k.ptx for sm_80)");
}

}  // namespace
}  // namespace kiln::backend
