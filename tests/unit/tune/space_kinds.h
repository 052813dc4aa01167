#pragma once
// One config of each kind kiln tune's generated space holds (tune/gemm_space.h): its class (layout,
// epilogue, split-K, stream-K, cluster) and FP8 or not, from the spaces of shapes chosen to reach
// every kind: few tiles and long K (split-K), partial waves (stream-K), A's rows off 32-byte sectors
// (K = 1608: clusters along N) and both operands' (N = 3540: 2 x 2), small and odd M (swapped
// heights), FP8, a fused epilogue. `all`: kinds told apart by cluster shape, stream-K depth, width,
// staging and epilogue loads too (about 300). The simulator test
// (tests/unit/tune/gemm_space_sim_test.cpp) and its GPU twin (tests/gpu/ops/gemm_sm90_gpu_test.cpp)
// run them.
#include <fmt/format.h>

#include <map>
#include <string>
#include <vector>

#include "kiln/target.h"
#include "tune/gemm_space.h"

namespace kiln::tuning {

struct SpaceKind {
  std::string kind;
  Config config;
  GemmShape shape;  // the shape whose space it came from
};

inline GemmShape spaceKindShape(int64_t m, int64_t n, int64_t k, bool fp8 = false, bool loads = false) {
  GemmShape g;
  g.m = m, g.n = n, g.k = k;
  g.sms = 132;
  g.fp8 = fp8;
  g.elemBytes = fp8 ? 1 : 2;
  g.bKMajor = fp8;
  g.epilogueLoads = loads || fp8;
  return g;
}

inline std::vector<SpaceKind> spaceKinds(bool all) {
  const std::vector<GemmShape> shapes = {
      spaceKindShape(1024, 480, 352),         spaceKindShape(336, 1024, 4064),
      spaceKindShape(1200, 1424, 1608),       spaceKindShape(392, 3540, 5368),
      spaceKindShape(4096, 4096, 4096),       spaceKindShape(544, 3784, 2072, false, true),
      spaceKindShape(4096, 7168, 2048, true), spaceKindShape(128, 7168, 2048, true)};
  std::map<std::string, SpaceKind> kinds;
  for (const GemmShape& g : shapes)
    for (const Candidate& c : gemmSpace(g, Target::sm90a(), 1000)) {
      const Config& x = c.config;
      if (x.strategy != "sm90_ws_persistent") continue;  // sm80: tests/unit/examples, tests/unit/schedule
      std::string kind = fmt::format("{} fp8{}", spaceClass(x), g.fp8);
      if (all)
        kind += fmt::format(" c{}x{} sk{} wide{} slots{} pieces{} loads{}", x.clusterM, x.clusterN, x.streamK,
                            x.bn % 64 == 0, x.storeSlots, x.storePieces, int(x.epilogueLoads));
      kinds.emplace(kind, SpaceKind{kind, x, g});
    }
  std::vector<SpaceKind> out;
  for (auto& [k, v] : kinds) out.push_back(std::move(v));
  return out;
}

}  // namespace kiln::tuning
