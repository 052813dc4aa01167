// Every kind of config kiln tune's generated space can hand to the GPU computes the product in the
// warp-specialized simulator: no deadlock, no hazard, every element against a double-precision
// reference (tests/unit/schedule/sm90_sim_check.h). The space combines options the registered
// variants never combine (swapped operands with split-K, stream-K or clusters along N; ping-pong
// in clusters; widths that are not whole 64-column boxes; one consumer warpgroup of 128 rows), and
// the screen launches every candidate that assembles: a protocol that deadlocks there would hang
// the search. One config of each kind (its class: layout, epilogue, split-K, stream-K, cluster;
// and FP8 or not) is simulated, from the spaces of shapes chosen to reach every kind: small and
// large M, long K, rows off 32-byte sectors, FP8, a fused epilogue. KILN_SPACE_SIM_ALL=1 tells
// the kinds apart by cluster shape, stream-K depth, width, staging and epilogue loads too (about
// 300 configs, five minutes: all of them computed the product when the space was built).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdlib>
#include <map>

#include "tests/unit/schedule/sm90_sim_check.h"
#include "tune/gemm_space.h"

namespace kiln::tuning {
namespace {

struct Kind {
  Config config;
  GemmShape shape;
};

std::string kindOf(const Config& c, bool fp8) {
  std::string kind = fmt::format("{} fp8{}", spaceClass(c), fp8);
  if (std::getenv("KILN_SPACE_SIM_ALL"))
    kind += fmt::format(" c{}x{} sk{} wide{} slots{} pieces{} loads{}", c.clusterM, c.clusterN, c.streamK,
                        c.bn % 64 == 0, c.storeSlots, c.storePieces, int(c.epilogueLoads));
  return kind;
}

GemmShape shape(int64_t m, int64_t n, int64_t k, bool fp8 = false, bool loads = false) {
  GemmShape g;
  g.m = m, g.n = n, g.k = k;
  g.sms = 132;
  g.fp8 = fp8;
  g.elemBytes = fp8 ? 1 : 2;
  g.bKMajor = fp8;
  g.fp8Accum = Fp8Accum::PromotePairs;
  g.epilogueLoads = loads || fp8;
  return g;
}

TEST(TuneSpaceSim, EveryKindOfConfigInTheSpaceComputesTheProduct) {
  // Shapes: few tiles and long K (split-K), partial waves (stream-K), off-sector rows of A (K = 1608:
  // clusters along N) and of both (N = 1420: 2 x 2), small and odd M (swapped heights), FP8, a bias.
  const std::vector<GemmShape> shapes = {shape(1024, 480, 352),        shape(336, 1024, 4064),
                                         shape(1200, 1424, 1608),      shape(392, 3540, 5368),
                                         shape(4096, 4096, 4096),      shape(544, 3784, 2072, false, true),
                                         shape(4096, 7168, 2048, true), shape(128, 7168, 2048, true)};
  std::map<std::string, Kind> kinds;
  for (const GemmShape& g : shapes)
    for (const Candidate& c : gemmSpace(g, Target::sm90a(), 1000)) kinds.emplace(kindOf(c.config, g.fp8), Kind{c.config, g});
  std::printf("tune space: %zu kinds of config to simulate\n", kinds.size());
  EXPECT_GT(kinds.size(), 30u);
  for (const auto& [kind, k] : kinds) {
    const Config& c = k.config;
    // Two tiles along each dim, the last a ragged sliver; K of split_k slices of a few steps each,
    // plus a partial step; three blocks a cluster, so that the persistent loop and stream-K's
    // shared waves both run.
    sm90sim::Problem p{c.bm + 8, c.bn + 16, int64_t(c.bk) * (3 * c.splitK + 2) - 8 * (k.shape.fp8 ? 2 : 1),
                       k.shape.fp8, 0, 3};
    p.fp8 = k.shape.fp8;
    p.scaled = k.shape.epilogueLoads && !k.shape.fp8;
    p.blocks = 3 * uint32_t(c.clusterM * c.clusterN);
    SCOPED_TRACE(kind + ": " + c.str() + fmt::format(" at {}x{}x{}", p.m, p.n, p.k));
    sm90sim::check(c.str(), p);
  }
}

}  // namespace
}  // namespace kiln::tuning
