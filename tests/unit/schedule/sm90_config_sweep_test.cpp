// Seeded random configs of sm90_ws_persistent (tile shape, stages, warpgroups, ping-pong, clusters,
// split-K, stream-K, the epilogue's store and staging, stagger, swapped operands, FP8 accumulation
// and scale loads), each at a random ragged problem: a config the compiler accepts must compute the
// product in the warp-specialized simulator (no deadlock, no hazard, every element against a
// double-precision reference) and assemble for sm_90a; one it refuses must say so in an error that
// names a key. The hand-written tests cover each feature; this covers their combinations, where a
// protocol one feature's tests never meet can deadlock: with the refusal of stagger above the
// ring's stages taken out, this sweep fails on stagger=4 with 3 stages.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "backend/assembler.h"
#include "examples/examples.h"
#include "kiln/compile.h"
#include "schedule/config.h"
#include "schedule/target.h"
#include "tests/unit/schedule/sm90_sim_check.h"

namespace kiln {
namespace {
using namespace sm90sim;

struct Case {
  std::string config;
  Problem problem;
};

template <typename T>
T pick(std::mt19937& rng, const std::vector<T>& from) {
  return from[rng() % from.size()];
}

// A config of random shape and a random few of the strategy's options (each of which most configs
// leave at its default, so that combinations of two or three are common and many compile).
Case randomCase(std::mt19937& rng) {
  const bool fp8 = rng() % 3 == 0;
  std::string c = "strategy=sm90_ws_persistent";
  auto key = [&](const char* name, const std::string& value) { c += std::string(" ") + name + "=" + value; };
  auto num = [](int v) { return std::to_string(v); };
  auto often = [&](int percent) { return int(rng() % 100) < percent; };
  const int bm = pick<int>(rng, {64, 64, 128, 128, 192, 256});
  key("bm", num(bm));
  key("bn", num(pick<int>(rng, {64, 96, 128, 128, 160, 192, 256})));
  key("bk", fp8 ? "128" : "64");
  key("stages", num(2 + int(rng() % 5)));
  // Consumer warpgroups of 64 or 128 rows, as a tile's height allows (a few configs get any count);
  // ping-pong's two warpgroups take whole tiles.
  const bool pingpong = often(15), swap = !fp8 && often(20);
  if (pingpong)
    key("consumers", "pingpong"), key("warps_m", "2");
  else
    key("warps_m", num(often(85) ? (bm == 64 ? 1 : bm == 192 ? 3 : bm == 256 ? 2 : pick<int>(rng, {1, 2}))
                                 : pick<int>(rng, {1, 2, 3})));
  key("warps_n", swap && often(50) ? "2" : "1");
  if (often(50)) key("raster", "grouped"), key("group_m", num(pick<int>(rng, {1, 2, 8})));
  // The ways of sharing, splitting or offsetting a tile's work, one at a time or none; a few
  // configs take two different ones (which the strategy mostly refuses, saying so).
  const int way = int(rng() % 6), other = often(15) ? (way + 1 + int(rng() % 5)) % 6 : way;
  auto takeWay = [&](int w) {
    switch (w) {
      case 1: key("cluster_m", "2"); break;
      case 2: key("cluster_n", "2"); break;
      case 3:
        key("split_k", num(pick<int>(rng, {2, 3})));
        if (often(30)) key("split_handover", "cluster");
        break;
      case 4: key("stream_k", "1"); break;
      case 5: key("stagger", num(pick<int>(rng, {1, 2, 4, 6}))); break;
      default: break;  // none
    }
  };
  takeWay(way);
  if (other != way) takeWay(other);
  if (swap || often(60)) {
    key("epilogue", "tma");
    if (swap || often(40)) key("stage_store", "stmatrix");
    if (often(20)) key("store_slots", num(pick<int>(rng, {1, 2})));
    if (often(25)) key("reuse_stage", "true");
    if (often(15)) key("store_hint", "evict_first");
  }
  if (often(50)) {
    key("l2_hint", "reuse");
    if (often(60)) key("stream_fill", pick<std::string>(rng, {"256", "128", "sector"}));
  }
  if (fp8) {
    key("fp8_accum", pick<std::string>(rng, {"fast", "promote", "promote_pairs"}));
    key("epilogue_loads", pick<std::string>(rng, {"late", "early", "prefetch"}));
  } else if (swap) {
    key("swap_ab", "true");
    if (often(30)) key("store_pieces", "2");
  }
  // Ragged M and N, up to a few tiles of the largest shape; K over 1-9 steps. TMA needs 16-byte rows:
  // N a multiple of 8 (C, B row-major), K of 8 (BF16) or 16 (FP8, both operands K-major).
  const int64_t m = 1 + int64_t(rng() % 320), n = 8 * (1 + int64_t(rng() % 48));
  const int64_t k = (fp8 ? 16 : 8) * (1 + int64_t(rng() % 72));
  Problem p{m, n, k, fp8, 0, 1 + uint32_t(rng() % 3)};  // blocks: rounded to whole clusters below
  p.fp8 = fp8;
  return {c, p};
}

TEST(Sm90ConfigSweep, EveryAcceptedConfigComputesTheProductAndAssembles) {
  // KILN_SWEEP_SEED and KILN_SWEEP_CONFIGS draw another or a longer sweep (to hunt, not for CI).
  const char* seedEnv = std::getenv("KILN_SWEEP_SEED");
  const char* countEnv = std::getenv("KILN_SWEEP_CONFIGS");
  const int kAccepted = countEnv ? std::atoi(countEnv) : 40, kMaxCandidates = 100 * kAccepted;
  std::mt19937 rng(seedEnv ? uint32_t(std::strtoul(seedEnv, nullptr, 10)) : 20261202u);
  int accepted = 0, refused = 0;
  for (int i = 0; i < kMaxCandidates && accepted < kAccepted; ++i) {
    Case cs = randomCase(rng);
    Problem& p = cs.problem;
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
                            "stage_store", "store_", "reuse_stage", "l2_hint", "stream_fill", "stagger", "fp8_accum",
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
  EXPECT_EQ(accepted, kAccepted) << "the sweep's configs are mostly refused: widen what it draws";
  std::printf("sm90 config sweep: %d configs simulated, %d refused\n", accepted, refused);
}

}  // namespace
}  // namespace kiln
