// The SASS readers the assembly gates rely on (sass_loop.h), on disassembly written by hand in
// nvdisasm's format: if they miscounted, a gate built on them could pass on the wrong code.
#include "tests/unit/testing/sass_loop.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace kiln::testing {
namespace {

// One line of nvdisasm output for an instruction at `addr`.
std::string inst(int addr, const std::string& text) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "        /*%04x*/  ", addr);
  return buf + text + " ;\n";
}

TEST(SassLoop, R2urBeforeTheArriveIsNotOnTheIssuePath) {
  std::string sass = inst(0x10, "R2UR UR4, R2") + inst(0x20, "WARPGROUP.ARRIVE") +
                     inst(0x30, "QGMMA.64x128x32.F32.E4M3.E4M3 R24, gdesc[UR4], RZ, !UPT") +
                     inst(0x40, "QGMMA.64x128x32.F32.E4M3.E4M3 R24, gdesc[UR4], R24, gsb0") +
                     inst(0x50, "R2UR UR6, R3");
  EXPECT_EQ(r2urInWgmmaBatches(sass), 0);
}

TEST(SassLoop, R2urBetweenTheArriveAndTheBatchsLastWgmmaCounts) {
  std::string sass = inst(0x10, "WARPGROUP.ARRIVE") + inst(0x20, "R2UR UR4, R2") +
                     inst(0x30, "HGMMA.64x64x16.F32.BF16 R24, gdesc[UR4].tnspB, R24, UP0") +
                     inst(0x40, "@!P0 R2UR UR6, R3") + inst(0x50, "R2UR UR7, R4") +
                     inst(0x60, "HGMMA.64x64x16.F32.BF16 R24, gdesc[UR4].tnspB, R24, gsb0") +
                     inst(0x70, "R2UR UR8, R5") +  // after the batch closed
                     inst(0x80, "WARPGROUP.ARRIVE") + inst(0x90, "R2UR UR4, R2") +
                     inst(0xa0, "QGMMA.64x160x32.F32.E4M3.E4M3 R24, gdesc[UR4], R24, gsb0");
  EXPECT_EQ(r2urInWgmmaBatches(sass), 4);
}

TEST(SassLoop, UniformDescriptorArithmeticIsNotCounted) {
  std::string sass = inst(0x10, "WARPGROUP.ARRIVE") + inst(0x20, "UIADD3 UR14, UR33, 0x10002, URZ") +
                     inst(0x30, "UMOV UR15, 0x40000040") +
                     inst(0x40, "QGMMA.64x160x32.F32.E4M3.E4M3 R24, gdesc[UR12], R24, gsb0");
  EXPECT_EQ(r2urInWgmmaBatches(sass), 0);
}

}  // namespace
}  // namespace kiln::testing
