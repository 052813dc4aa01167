// Every kind of config kiln tune's generated space can hand to the GPU computes the product in the
// warp-specialized simulator: no deadlock, no hazard, every element against a double-precision
// reference (tests/unit/schedule/sm90_sim_check.h). The space combines options the registered
// variants never combine (swapped operands with split-K, stream-K or clusters along N; ping-pong
// in clusters; widths that are not whole 64-column boxes; one consumer warpgroup of 128 rows), and
// the screen launches every candidate that assembles: a protocol that deadlocks there would hang
// the search. One config of each kind (tests/unit/tune/space_kinds.h) is simulated;
// KILN_SPACE_SIM_ALL=1 simulates the finer kinds (about 300 configs, five minutes: all of them
// computed the product when the space was built).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdlib>

#include "tests/unit/schedule/sm90_sim_check.h"
#include "tests/unit/tune/space_kinds.h"

namespace kiln::tuning {
namespace {

TEST(TuneSpaceSim, EveryKindOfConfigInTheSpaceComputesTheProduct) {
  const std::vector<SpaceKind> kinds = spaceKinds(std::getenv("KILN_SPACE_SIM_ALL") != nullptr);
  std::printf("tune space: %zu kinds of config to simulate\n", kinds.size());
  EXPECT_GT(kinds.size(), 30u);
  for (const SpaceKind& k : kinds) {
    const Config& c = k.config;
    // Two tiles along each dim, the last a ragged sliver; K of split_k slices of a few steps each,
    // plus a partial step; three blocks a cluster, so that the persistent loop and stream-K's
    // shared waves both run.
    sm90sim::Problem p{c.bm + 8, c.bn + 16, int64_t(c.bk) * (3 * c.splitK + 2) - 8 * (k.shape.fp8 ? 2 : 1),
                       k.shape.fp8, 0, 3};
    p.fp8 = k.shape.fp8;
    p.scaled = k.shape.epilogueLoads && !k.shape.fp8;
    p.blocks = 3 * uint32_t(c.clusterM * c.clusterN);
    SCOPED_TRACE(k.kind + ": " + c.str() + fmt::format(" at {}x{}x{}", p.m, p.n, p.k));
    sm90sim::check(c.str(), p);
  }
}

}  // namespace
}  // namespace kiln::tuning
