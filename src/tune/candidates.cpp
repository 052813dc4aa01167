#include "tune/candidates.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "ops/default_schedule.h"
#include "tune/gemm_space.h"
#include "tune/gemv_space.h"

namespace kiln::tuning {

std::vector<std::pair<Config, std::string>> neighbours(const Config& c, bool epilogueLoads) {
  std::vector<std::pair<Config, std::string>> out;
  auto add = [&](Config n, std::string what) { out.emplace_back(std::move(n), std::move(what)); };
  if (c.strategy != "sm90_ws_persistent" && c.strategy != "sm80_multistage") return out;
  // Pipeline depth: one stage more (more bytes in flight) or one fewer (room for a second block).
  for (int d : {-1, 1}) {
    Config n = c;
    n.stages += d;
    if (n.stages >= 2 && n.stages <= 16) add(n, fmt::format("stages {} -> {}", c.stages, n.stages));
  }
  if (c.strategy != "sm90_ws_persistent") return out;
  // The raster group: how many rows of tiles share B in L2.
  if (c.raster == Raster::Grouped)
    for (int g : {8, 16, 32}) {
      if (g == c.groupM) continue;
      Config n = c;
      n.groupM = g;
      add(n, fmt::format("group_m {} -> {}", c.groupM, g));
    }
  // A pair of blocks along M sharing B's loads by multicast, or not.
  if (c.splitK == 1 && c.streamK == 0) {
    Config n = c;
    n.clusterM = c.clusterM == 1 ? 2 : 1;
    add(n, fmt::format("cluster_m {} -> {}", c.clusterM, n.clusterM));
  }
  // When the epilogue's vector and scalar loads are issued: after the K loop, before it, or
  // prefetched into L1 before it.
  if (epilogueLoads)
    for (auto [e, name] : {std::pair{EpilogueLoads::Late, "late"}, std::pair{EpilogueLoads::Early, "early"},
                           std::pair{EpilogueLoads::Prefetch, "prefetch"}}) {
      if (e == c.epilogueLoads) continue;
      Config n = c;
      n.epilogueLoads = e;
      add(n, std::string("epilogue_loads -> ") + name);
    }
  return out;
}

std::vector<Candidate> candidates(const ir::Operation& program, const Target& t,
                                  const std::map<std::string, int64_t>& dims, std::string* why, int sms, int limit,
                                  SpaceStats* stats) {
  std::vector<ops::RankedSchedule> ranked = ops::rankedSchedules(program, t, dims, why);
  if (ranked.empty()) return {};
  std::optional<GemmShape> gemm = gemmShapeOf(program, t, dims, sms, nullptr);
  std::vector<Candidate> out;
  std::set<std::string> seen;
  auto push = [&](Candidate c) {
    if (seen.insert(c.config.str()).second) out.push_back(std::move(c));
  };
  for (const auto& r : ranked)
    push({r.config, r.family.empty() ? r.variant : r.family + " variant " + r.variant, r.score});
  int parents = 0;
  for (const auto& r : ranked) {
    if (parents++ >= kNeighbourParents) break;
    for (auto& [n, what] : neighbours(r.config, gemm && gemm->epilogueLoads))
      push({n, fmt::format("neighbour of {}: {}", r.variant, what), r.score * kNeighbourDiscount});
  }
  // Where the family picks gemv (ops::gemvPreferredRows), gemv's own space around the pick first: split_k, the
  // block's width and threads, the loads in flight (tune/gemv_space.h).
  if (gemm && ranked.front().config.strategy == "gemv")
    for (Candidate& c : gemvSpace(*gemm, ranked.front().config, ranked.front().score, t,
                                  std::max(0, limit - int(out.size())), stats))
      push(std::move(c));
  if (gemm)
    for (Candidate& c : gemmSpace(*gemm, t, std::max(0, limit - int(out.size())), stats)) push(std::move(c));
  // Ranked by the heuristic, the family's pick first whatever a generated config scores: it is
  // the schedule the program runs untuned, and the first candidate always compiles (--budget-s).
  std::stable_sort(out.begin() + 1, out.end(),
                   [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
  return out;
}

}  // namespace kiln::tuning
