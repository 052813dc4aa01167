// The read-ceiling kernels (bench/read_ceiling_ptx.h) are a figure every small-shape result is
// compared with, so they are gated like Kiln's own kernels: on the CPU they assemble for sm_90a
// with no stack and no spills, the load entries read with 16-byte non-coherent loads, and the TMA
// entries read with bulk copies (UBLKCP), the evict_first ones with a cache-policy operand, the tile
// stream with 2D tensor copies (UTMALDG), and all of them wait on their ring's mbarriers. Needs a SASS disassembler for the SASS checks (skips, saying why).
#include "bench/read_ceiling_ptx.h"

#include <gtest/gtest.h>

#include <regex>

#include "backend/assembler.h"
#include "kiln/sass_stats.h"

namespace kiln::bench {
namespace {

TEST(ReadCeilingPtx, AssemblesForHopperWithoutStackOrSpills) {
  ir::DiagnosticEngine diag;
  auto k = backend::assemble(readCeilingPtx(), "sm_90a", diag);
  ASSERT_TRUE(k) << diag.str();
  for (const char* entry : {"kiln_read_ceiling", "kiln_read_ceiling_stream", "kiln_read_ceiling_tma",
                            "kiln_read_ceiling_tma_stream", "kiln_tile_stream"}) {
    ASSERT_TRUE(k->resources.count(entry)) << entry << " missing\n" << k->infoLog;
    const backend::ResourceReport& r = k->resources.at(entry);
    EXPECT_EQ(r.stackFrameBytes, 0) << entry;
    EXPECT_FALSE(r.spills()) << entry;
  }
  EXPECT_EQ(k->resources.size(), 5u) << k->infoLog;
}

TEST(ReadCeilingPtx, LoadsAreWideAndCopiesAreBulk) {
  ir::DiagnosticEngine diag;
  auto k = backend::assemble(readCeilingPtx(), "sm_90a", diag);
  ASSERT_TRUE(k) << diag.str();
  auto sass = backend::sassStats(k->cubin, diag);
  if (!sass && diag.str().find("install") != std::string::npos) GTEST_SKIP() << "no SASS disassembler: " << diag.str();
  ASSERT_TRUE(sass) << diag.str();
  // Four loads per unrolled iteration and one in the tail, in each of the two load entries; nothing
  // narrower than 16 bytes.
  EXPECT_EQ(sass->count("LDG.E.NA.128.CONSTANT"), 10) << sass->text;
  EXPECT_EQ(sass->count("LDG") - sass->count("LDG.E.NA.128.CONSTANT"), 0) << sass->text;
  // One bulk copy per TMA entry, the evict_first one with its policy (desc[...]).
  EXPECT_EQ(sass->count("UBLKCP.S.G"), 2) << sass->text;
  std::regex withPolicy(R"(UBLKCP\.S\.G[^;\n]*desc\[)");
  EXPECT_EQ(std::distance(std::sregex_iterator(sass->text.begin(), sass->text.end(), withPolicy), std::sregex_iterator()), 1)
      << sass->text;
  // The tile stream copies 2D boxes through its tensor maps, as the GEMM's producer does.
  EXPECT_GE(sass->count("UTMALDG.2D"), 1) << sass->text;
  EXPECT_GE(sass->count("SYNCS.PHASECHK.TRANS64.TRYWAIT"), 6) << sass->text;
  EXPECT_GE(sass->count("SYNCS.ARRIVE.TRANS64"), 3) << sass->text;
}

}  // namespace
}  // namespace kiln::bench
