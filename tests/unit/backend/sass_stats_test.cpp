#include "kiln/sass_stats.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "backend/assembler.h"
#include "backend/ptx_compiler.h"
#include "tests/unit/backend/test_ptx.h"

namespace kiln::backend {
namespace {

// Captured from nvdisasm -c (13.4) on an sm_80 cubin, abridged.
constexpr std::string_view kNvdisasm = R"SASS(	.target	sm_80
	.elftype	@"ET_EXEC"
//--------------------- .text.mma_kernel        --------------------------
	.section	.text.mma_kernel,"ax",@progbits
	.sectioninfo	@"SHI_REGISTERS=18"
        .global         mma_kernel
mma_kernel:
.text.mma_kernel:
        /*0070*/                   LDSM.16.M88.4 R4, [R0] ;
        /*0080*/                   LDSM.16.MT88.4 R8, [R0+0x200] ;
        /*0090*/                   HMMA.16816.F32.BF16 R12, R4.reuse, R8, RZ ;
        /*00a0*/                   @!UPT UIADD3 URZ, URZ, URZ, URZ ;
        /*00c0*/                   HMMA.16816.F32.BF16 R12, R4, R10, R12 ;
        /*00f0*/               @P0 EXIT ;
        /*0110*/                   STG.E.128 [R2.64], R12 ;
        /*0120*/                   EXIT ;
.L_x_0:
        /*0130*/                   BRA `(.L_x_0);
        /*0140*/                   NOP;
)SASS";

// Captured from cuobjdump -sass: every instruction is followed by an encoding-only line.
constexpr std::string_view kCuobjdump = R"SASS(
	code for sm_89
		Function : no_stack
	.headerflags	@"EF_CUDA_SM89 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM89)"
        /*0000*/                   MOV R1, c[0x0][0x28] ;                    /* 0x00000a0000017a02 */
                                                                             /* 0x000fe40000000f00 */
        /*0050*/                   STG.E [R2.64], R5 ;                       /* 0x0000000502007986 */
                                                                             /* 0x001fe2000c101904 */
        /*0060*/                   EXIT ;                                    /* 0x000000000000794d */
                                                                             /* 0x000fea0003800000 */
)SASS";

TEST(SassStats, CountsInstructionsOnlyWithFullOpcodes) {
  SassStats s = parseSass(kNvdisasm);
  EXPECT_EQ(s.total(), 10);
  EXPECT_EQ(s.opcodes.at("LDSM.16.M88.4"), 1);
  EXPECT_EQ(s.opcodes.at("LDSM.16.MT88.4"), 1);
  EXPECT_EQ(s.opcodes.at("HMMA.16816.F32.BF16"), 2);
  EXPECT_EQ(s.opcodes.at("EXIT"), 2) << "the @P0 guard is stripped";
  EXPECT_EQ(s.opcodes.at("UIADD3"), 1);
  EXPECT_EQ(s.opcodes.at("NOP"), 1) << "an opcode followed directly by ';'";
  EXPECT_FALSE(s.opcodes.count(".section"));
  EXPECT_FALSE(s.opcodes.count("mma_kernel:"));
  EXPECT_EQ(s.text, kNvdisasm);
}

TEST(SassStats, CountMatchesWholeModifiers) {
  SassStats s = parseSass(kNvdisasm);
  EXPECT_EQ(s.count("HMMA"), 2);
  EXPECT_EQ(s.count("HMMA.16816"), 2);
  EXPECT_EQ(s.count("HMMA.1681"), 0);
  EXPECT_EQ(s.count("LDSM"), 2);
  EXPECT_EQ(s.count("LDSM.16.M88"), 1);
  EXPECT_EQ(s.count("LDSM.16.M88.4"), 1);
  EXPECT_EQ(s.count("ST"), 0) << "STG is not ST";
  EXPECT_EQ(s.count("STG"), 1);
  EXPECT_EQ(s.count("LDG"), 0);
}

// The issue path of wgmma batches, abridged from nvdisasm -c on sm_90a kernels of Kiln's: R2URs
// before the batch's WARPGROUP.ARRIVE or after the wgmma that closes it (gsb0) are not on it.
constexpr std::string_view kWgmmaBatches = R"SASS(
        /*0010*/                   R2UR UR6, R4 ;
        /*0020*/                   WARPGROUP.ARRIVE ;
        /*0030*/                   R2UR UR7, R5 ;
        /*0040*/                   QGMMA.64x128x32.F32.E4M3.E4M3 R24, gdesc[UR4], RZ, !UPT ;
        /*0050*/              @!P0 R2UR UR6, R2 ;
        /*0060*/                   QGMMA.64x128x32.F32.E4M3.E4M3 R24, gdesc[UR4], R24, gsb0 ;
        /*0070*/                   R2UR UR8, R3 ;
        /*0080*/                   WARPGROUP.ARRIVE ;
        /*0090*/                   UIADD3 UR14, UR33, 0x10002, URZ ;
        /*00a0*/                   UMOV UR15, 0x40000040 ;
        /*00b0*/                   HGMMA.64x64x16.F32.BF16 R24, gdesc[UR12].tnspB, R24, gsb0 ;
)SASS";

TEST(SassStats, CountsR2urOnlyOnTheWgmmaBatchesIssuePath) {
  SassStats s = parseSass(kWgmmaBatches);
  EXPECT_EQ(s.count("R2UR"), 4);
  EXPECT_EQ(s.wgmmaBatchR2ur, 2) << "the first batch's two; the second batch's descriptors are uniform";
  EXPECT_EQ(parseSass(kNvdisasm).wgmmaBatchR2ur, 0);
}

TEST(SassStats, ParsesCuobjdumpOutput) {
  SassStats s = parseSass(kCuobjdump);
  EXPECT_EQ(s.total(), 3);
  EXPECT_EQ(s.count("MOV"), 1);
  EXPECT_EQ(s.count("STG.E"), 1);
  EXPECT_EQ(s.count("EXIT"), 1);
}

// The SASS gates need a disassembler; it is a test failure, not a skip, when there is none,
// unless the machine says it cannot have one.
std::optional<SassStats> realStats(std::string_view arch) {
  ir::DiagnosticEngine diag;
  auto k = assemble(testing::mmaKernel(arch), arch, diag);
  EXPECT_TRUE(k) << diag.str();
  if (!k) return std::nullopt;
  auto stats = sassStats(k->cubin, diag);
  if (!stats) ADD_FAILURE() << diag.str();
  return stats;
}

class NeedsDisassembler : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::getenv("KILN_SKIP_SASS_TESTS")) GTEST_SKIP() << "KILN_SKIP_SASS_TESTS is set";
  }
};
class RealSass : public NeedsDisassembler, public ::testing::WithParamInterface<std::string_view> {};

TEST_P(RealSass, MmaKernelHasTheIntendedInstructionMix) {
  auto s = realStats(GetParam());
  ASSERT_TRUE(s);
  EXPECT_EQ(s->count("HMMA.16816.F32.BF16"), 2) << s->text;
  EXPECT_EQ(s->count("LDSM.16.M88.4"), 1) << s->text;
  EXPECT_EQ(s->count("LDSM.16.MT88.4"), 1) << s->text;
  EXPECT_EQ(s->count("STG.E.128"), 1) << s->text;
  EXPECT_GE(s->count("EXIT"), 2) << "the guarded store becomes a predicated EXIT\n" << s->text;
}

// A tripwire, not a wish: nvJitLink (13.0) runs ptxas with --compile-only, which drops setmaxnreg
// (advisory C7504) even where whole-program ptxas emits USETMAXREG for the same PTX. Warp-
// specialized sm_90a schedules rely on setmaxnreg, so this must stay visible. If this test fails,
// nvJitLink started honouring setmaxnreg: update assembler.h and this test.
TEST_F(NeedsDisassembler, NvJitLinkDropsSetmaxnreg) {
  ir::DiagnosticEngine diag;
  AssembleOptions o;
  o.assembler = AssemblerKind::NvJitLink;
  auto k = assemble(testing::setmaxnregKernel(), "sm_90a", diag, o);
  ASSERT_TRUE(k) << diag.str();
  auto s = sassStats(k->cubin, diag);
  ASSERT_TRUE(s) << diag.str();
  EXPECT_EQ(s->count("USETMAXREG"), 0) << s->text;
  ASSERT_FALSE(k->warnings.empty());
  EXPECT_NE(k->warnings[0].message.find("(C7504)"), std::string::npos) << k->warnings[0].message;
}

// Which is why sm_90a goes through the PTX compiler library (ptx_compiler.h): the same PTX keeps its
// setmaxnreg (USETMAXREG in SASS) and no advisory is reported.
TEST_F(NeedsDisassembler, Sm90aHonoursSetmaxnregThroughThePtxCompiler) {
  if (!havePtxCompiler()) GTEST_SKIP() << "built without the PTX compiler library";
  ir::DiagnosticEngine diag;
  EXPECT_EQ(assemblerFor("sm_90a", {}), AssemblerKind::PtxCompiler);
  EXPECT_EQ(assemblerFor("sm_80", {}), AssemblerKind::NvJitLink);
  auto k = assemble(testing::setmaxnregKernel(), "sm_90a", diag);
  ASSERT_TRUE(k) << diag.str();
  auto s = sassStats(k->cubin, diag);
  ASSERT_TRUE(s) << diag.str();
  EXPECT_EQ(s->count("USETMAXREG.TRY_ALLOC"), 1) << s->text;
  EXPECT_TRUE(k->warnings.empty()) << k->infoLog;
  EXPECT_EQ(k->resources.at("grow").registers, 168) << k->infoLog;
}

INSTANTIATE_TEST_SUITE_P(Arch, RealSass, ::testing::Values("sm_80", "sm_90a"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace kiln::backend
