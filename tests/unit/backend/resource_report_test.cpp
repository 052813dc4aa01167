#include "kiln/resource_report.h"

#include <gtest/gtest.h>

#include "backend/assembler.h"
#include "backend/resource_report_json.h"
#include "tests/unit/backend/test_ptx.h"

namespace kiln::backend {
namespace {

// Captured from nvJitLink 13.0 with "-verbose", sm_90a: ptxas omits cmem[0] (the linker summary
// has it) and counts 4096 B of smem where the linker counts 5120 (1 KiB system-reserved).
constexpr std::string_view kSm90aLog = R"(ptxas info    : (C7504) Potential Performance Loss: 'setmaxnreg' ignored to maintain compatibility across compilation units.
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'k' for 'sm_90a'
ptxas info    : Function properties for k
ptxas         .     56 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 168 registers, used 1 barriers, 4096 bytes smem
ptxas info    : Compile time = 5.399 ms
info    : 0 bytes gmem
info    : Function properties for 'k':
info    : used 168 registers, used 1 barriers, 56 stack, 5120 bytes smem, 536 bytes cmem[0], 0 bytes lmem
)";

TEST(ResourceReport, ParsesCapturedSm90aLog) {
  auto reports = parseResourceReports(kSm90aLog);
  ASSERT_EQ(reports.size(), 1u);
  const ResourceReport& r = reports.at("k");
  EXPECT_EQ(r.kernel, "k");
  EXPECT_EQ(r.registers, 168);
  EXPECT_EQ(r.barriers, 1);
  EXPECT_EQ(r.stackFrameBytes, 56);
  EXPECT_EQ(r.spillStoreBytes, 8);
  EXPECT_EQ(r.spillLoadBytes, 12);
  EXPECT_EQ(r.sharedBytes, 4096);  // ptxas's figure, not the linker's 5120
  EXPECT_EQ(r.constBytes, 536);    // only the linker says it
  EXPECT_TRUE(r.spills());
}

// Standalone ptxas (not nvJitLink) prints the property line unprefixed, and older ptxas puts
// the stack frame in the "Used" line; both must parse. Two entries and a device function.
TEST(ResourceReport, ParsesStandalonePtxasFormatAndSkipsDeviceFunctions) {
  constexpr std::string_view log = R"(ptxas info    : 0 bytes gmem
ptxas info    : Function properties for helper
    24 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function 'a' for 'sm_80'
ptxas info    : Function properties for a
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers, 360 bytes cmem[0]
ptxas info    : Compiling entry function 'b' for 'sm_80'
ptxas info    : Used 96 registers, used 2 barriers, 40 bytes stack frame, 16384 bytes smem, 380 bytes cmem[0], 8 bytes cmem[2]
)";
  auto reports = parseResourceReports(log);
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_FALSE(reports.count("helper"));
  EXPECT_EQ(reports.at("a").registers, 32);
  EXPECT_EQ(reports.at("a").constBytes, 360);
  EXPECT_EQ(reports.at("a").sharedBytes, 0);
  EXPECT_EQ(reports.at("b").registers, 96);
  EXPECT_EQ(reports.at("b").barriers, 2);
  EXPECT_EQ(reports.at("b").stackFrameBytes, 40);
  EXPECT_EQ(reports.at("b").sharedBytes, 16384);
  EXPECT_EQ(reports.at("b").constBytes, 380);  // cmem[2] is another bank
}

TEST(ResourceReport, JsonRoundTripAndStr) {
  ResourceReport r{"gemm", 168, 1, 56, 4, 8, 4096, 536};
  nlohmann::json j = toJson(r);
  EXPECT_EQ(j["registers"], 168);
  EXPECT_EQ(j["spill_load_bytes"], 8);
  ResourceReport back;
  ASSERT_TRUE(fromJson(j, back));
  EXPECT_EQ(back, r);
  j.erase("barriers");
  EXPECT_FALSE(fromJson(j, back));
  EXPECT_EQ(r.str(), "gemm: 168 regs, 1 barriers, 56 B stack, 4 B spill stores, 8 B spill loads, "
                     "4096 B smem, 536 B cmem[0]");
}

// The real thing: ptxas must see the local array indexed at run time as a 256-byte frame.
TEST(ResourceReport, RealKernelsDifferInStackFrame) {
  for (std::string_view arch : {"sm_80", "sm_90a"}) {
    ir::DiagnosticEngine diag;
    auto k = assemble(testing::stackKernels(arch), arch, diag);
    ASSERT_TRUE(k) << diag.str();
    ASSERT_EQ(k->resources.size(), 2u) << k->infoLog;
    const ResourceReport& with = k->resources.at("with_stack");
    const ResourceReport& without = k->resources.at("no_stack");
    EXPECT_EQ(with.stackFrameBytes, 256) << arch << "\n" << k->infoLog;
    EXPECT_EQ(without.stackFrameBytes, 0) << arch;
    EXPECT_GT(with.registers, 0);
    EXPECT_GT(without.registers, 0);
    EXPECT_GT(with.constBytes, 0) << arch << ": cmem[0] holds at least the parameters";
    EXPECT_FALSE(with.spills());
  }
}

}  // namespace
}  // namespace kiln::backend
