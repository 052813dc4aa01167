#include "backend/assembler.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>

#include "tests/unit/backend/test_ptx.h"

namespace kiln::backend {
namespace {

int lineOf(const std::string& text, std::string_view needle) {
  size_t at = text.find(needle);
  EXPECT_NE(at, std::string::npos);
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
}

TEST(Assembler, AssemblesEverySupportedArch) {
  for (std::string_view arch : supportedArchs()) {
    ir::DiagnosticEngine diag;
    auto k = assemble(testing::stackKernels(arch), arch, diag);
    ASSERT_TRUE(k) << arch << ":\n" << diag.str();
    EXPECT_EQ(k->arch, arch);
    // An ELF image: "\x7f" "ELF".
    ASSERT_GT(k->cubin.size(), 4u);
    EXPECT_EQ(std::string(k->cubin.data(), 4), "\x7f" "ELF");
    EXPECT_EQ(k->resources.size(), 2u) << k->infoLog;
    EXPECT_FALSE(diag.hadError());
  }
}

TEST(Assembler, RejectsUnknownArchListingTheValidOnes) {
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(assemble(testing::stackKernels("sm_80"), "sm_91", diag));
  ASSERT_EQ(diag.errorCount(), 1u);
  EXPECT_EQ(diag.diagnostics()[0].message,
            "unknown target architecture 'sm_91'; Kiln can assemble for sm_80, sm_89, sm_90, sm_90a, sm_100a, sm_120");
  // Plain sm_90 assembles portable code (mma.sync); wgmma and setmaxnreg need sm_90a.
  EXPECT_TRUE(isSupportedArch("sm_90"));
  EXPECT_FALSE(isSupportedArch("sm_90x"));
  EXPECT_TRUE(isSupportedArch("sm_90a"));
}

TEST(Assembler, PtxErrorPointsAtTheKilnOpAndThePtxLine) {
  std::string ptx = testing::brokenKernel();
  int line = lineOf(ptx, "%r9;");
  ir::DiagnosticEngine diag;
  AssembleOptions opts;
  opts.ptxName = "gemm.ptx";
  EXPECT_FALSE(assemble(ptx, "sm_80", diag, opts));
  ASSERT_TRUE(diag.hadError());
  bool found = false;
  for (const ir::Diagnostic& d : diag.diagnostics()) {
    if (d.message.find("Unknown symbol '%r9'") == std::string::npos) continue;
    found = true;
    EXPECT_EQ(d.severity, ir::Severity::Error);
    EXPECT_EQ(d.loc, (ir::Location{"gemm.kiln", 5, 9}));
    EXPECT_EQ(d.message, fmt::format("ptxas: Unknown symbol '%r9' (in the PTX emitted for kern.store "
                                     "at gemm.kiln:5:9; PTX line {}: `st.global.u32 [%rd2], %r9;`)",
                                     line));
  }
  EXPECT_TRUE(found) << diag.str();
  // ptxas's "aborted due to errors" and nvJitLink's own summary add nothing: not reported.
  for (const ir::Diagnostic& d : diag.diagnostics()) EXPECT_EQ(d.message.find("aborted"), std::string::npos);
}

TEST(Assembler, TargetMismatchIsADiagnostic) {
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(assemble(testing::stackKernels("sm_90a"), "sm_80", diag));
  ASSERT_EQ(diag.errorCount(), 1u) << diag.str();
  // ptxas 13.0 says "SM version specified by .target is higher than default SM version assumed"
  // and names neither architecture; the diagnostic must.
  const std::string& m = diag.diagnostics()[0].message;
  EXPECT_TRUE(m.starts_with("ptxas: ")) << m;
  EXPECT_TRUE(m.ends_with(" (assembling kiln.ptx for sm_80)")) << m;
}

TEST(Assembler, BadPtxasOptionIsADiagnostic) {
  ir::DiagnosticEngine diag;
  AssembleOptions opts;
  opts.ptxasOptions = {"--no-such-ptxas-option"};
  EXPECT_FALSE(assemble(testing::stackKernels("sm_80"), "sm_80", diag, opts));
  EXPECT_TRUE(diag.hadError());
  opts = {};
  opts.optLevel = 7;
  ir::DiagnosticEngine diag2;
  EXPECT_FALSE(assemble(testing::stackKernels("sm_80"), "sm_80", diag2, opts));
  EXPECT_EQ(diag2.errorCount(), 1u);
}

// nvJitLink runs ptxas in relocatable mode (--compile-only), where ptxas ignores setmaxnreg with
// advisory C7504 (standalone whole-program ptxas says C7508 when it cannot tell the register count
// at entry). Either way the user must see it: it costs warp-specialized kernels their register
// rebalancing.
TEST(Assembler, SetmaxnregAdvisoryIsSurfacedAsAWarning) {
  ir::DiagnosticEngine diag;
  AssembleOptions nvJitLink;
  nvJitLink.assembler = AssemblerKind::NvJitLink;
  auto k = assemble(testing::setmaxnregKernel(), "sm_90a", diag, nvJitLink);
  ASSERT_TRUE(k) << diag.str();
  ASSERT_FALSE(k->warnings.empty()) << k->infoLog;
  bool seen = false;
  for (const ir::Diagnostic& w : k->warnings) {
    EXPECT_EQ(w.severity, ir::Severity::Warning);
    if (w.message.find("'setmaxnreg' ignored") != std::string::npos &&
        (w.message.find("(C7504)") != std::string::npos || w.message.find("(C7508)") != std::string::npos))
      seen = true;
  }
  EXPECT_TRUE(seen) << k->infoLog;
  // The same warnings went to the engine, and none of them is an error.
  EXPECT_EQ(diag.diagnostics().size(), k->warnings.size());
  EXPECT_FALSE(diag.hadError());
  EXPECT_EQ(k->resources.at("grow").barriers, 1);
  EXPECT_EQ(k->resources.at("grow").sharedBytes, 4096);
}

TEST(Assembler, OutputIsDeterministic) {
  ir::DiagnosticEngine diag;
  auto a = assemble(testing::mmaKernel("sm_90a"), "sm_90a", diag);
  auto b = assemble(testing::mmaKernel("sm_90a"), "sm_90a", diag);
  ASSERT_TRUE(a && b) << diag.str();
  EXPECT_EQ(a->cubin, b->cubin);
}

TEST(Assembler, OptionsReachNvJitLink) {
  AssembleOptions o;
  o.maxRegisters = 64;
  o.lineInfo = true;
  o.ptxasOptions = {"-warn-spills"};
  EXPECT_EQ(nvJitLinkOptions("sm_90a", o),
            (std::vector<std::string>{"-arch=sm_90a", "-verbose", "-O3", "-maxrregcount=64", "-lineinfo",
                                      "-Xptxas=-warn-spills"}));
}

}  // namespace
}  // namespace kiln::backend
