// Seeded random configs of sm90_ws_persistent (tile shape, stages, warpgroups, ping-pong, clusters,
// split-K, stream-K, the epilogue's store and staging, swapped operands, FP8 accumulation and scale
// loads), each at a random ragged problem: a config the compiler accepts must compute the product
// in the warp-specialized simulator (no deadlock, no hazard, every element against a
// double-precision reference) and assemble for sm_90a; one it refuses must say so in an error that
// names a key. The hand-written tests cover each feature; this covers their combinations, where a
// protocol one feature's tests never meet can deadlock.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "backend/assembler.h"
#include "examples/examples.h"
#include "kiln/compile.h"
#include "schedule/config.h"
#include "target/target.h"
#include "tests/unit/schedule/sm90_config_draw.h"
#include "tests/unit/schedule/sm90_sim_check.h"

namespace kiln {
namespace {
using namespace sm90sim;

TEST(Sm90ConfigSweep, EveryAcceptedConfigComputesTheProductAndAssembles) {
  // KILN_SWEEP_SEED and KILN_SWEEP_CONFIGS draw another or a longer sweep (to hunt, not for CI).
  const char* seedEnv = std::getenv("KILN_SWEEP_SEED");
  const char* countEnv = std::getenv("KILN_SWEEP_CONFIGS");
  const int wanted = countEnv ? std::atoi(countEnv) : 40, maxCandidates = 100 * wanted;
  std::mt19937 rng(seedEnv ? uint32_t(std::strtoul(seedEnv, nullptr, 10)) : sm90draw::kDefaultSeed);
  int accepted = 0, refused = 0;
  for (int i = 0; i < maxCandidates && accepted < wanted; ++i) {
    const sm90draw::Drawn cs = sm90draw::draw(rng);
    Problem p{cs.m, cs.n, cs.k, cs.fp8, 0, cs.blocks};
    p.fp8 = cs.fp8;
    ir::DiagnosticEngine diag;
    auto config = Config::parse(cs.config, diag);
    ASSERT_TRUE(config) << diag.str();
    SCOPED_TRACE("candidate " + std::to_string(i) + ": " + cs.config + " at " + std::to_string(p.m) + "x" +
                 std::to_string(p.n) + "x" + std::to_string(p.k) + " on " + std::to_string(p.blocks) + " blocks");
    auto program = p.fp8 ? examples::fp8RowwiseGemm() : examples::gemmBf16();
    auto r = compile(*program, Target::sm90a(), *config, diag);
    if (!r) {
      // Refused: an error that names what to change, by a key of the config.
      ++refused;
      const std::string text = diag.str();
      EXPECT_NE(text.find("error:"), std::string::npos) << text;
      bool namesAKey = false;
      for (const char* k : {"bm", "bn", "stages", "warps_", "consumers", "cluster_", "split_", "stream_k", "epilogue",
                            "stage_store", "store_", "reuse_stage", "l2_hint", "fp8_accum",
                            "swap_ab"})
        namesAKey = namesAKey || text.find(k) != std::string::npos;
      EXPECT_TRUE(namesAKey) << text;
      continue;
    }
    ++accepted;
    // A persistent grid is whole clusters (the runtime sizes it so).
    const uint32_t cluster = uint32_t(r->launch.cluster[0] * r->launch.cluster[1] * r->launch.cluster[2]);
    p.blocks = (p.blocks + cluster - 1) / cluster * cluster;
    auto cubin = backend::assemble(r->ptx, Target::sm90a().ptxTarget, diag);
    EXPECT_TRUE(cubin) << diag.str();
    check(cs.config, p);
  }
  EXPECT_EQ(accepted, wanted) << "the sweep's configs are mostly refused: widen what it draws";
  std::printf("sm90 config sweep: %d configs simulated, %d refused\n", accepted, refused);
}

}  // namespace
}  // namespace kiln
