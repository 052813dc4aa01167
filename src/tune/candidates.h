#pragma once
// The schedules `kiln tune` considers for a program: its family's variants that can run it, best
// first by the family's heuristic (ops::rankedSchedules); around the best few, their neighbours
// in the strategy's option space (one option changed by one step: pipeline depth, the raster
// group, a cluster along M, where the epilogue's loads are issued); and, for a GEMM, the
// generated option space of tune/gemm_space.h (tile shapes fitted to the problem, warpgroup
// layouts, swapped operands, split-K, stream-K, clusters, the epilogue's staging) and, where the
// family picks gemv, gemv's (tune/gemv_space.h: split_k, block width and threads, loads in
// flight), pruned without compiling and cut to a limit. All of them ranked together by the family's heuristic.
#include <map>
#include <string>
#include <vector>

#include "kiln/ir/operation.h"
#include "kiln/target.h"
#include "schedule/config.h"

namespace kiln::tuning {

struct SpaceStats;

struct Candidate {
  Config config;
  std::string origin;  // "gemm_bf16 variant NAME", "neighbour of NAME: stages 4 -> 5"
  double score = 0;    // the heuristic's score; a neighbour gets kNeighbourDiscount of its parent's
};

// How much lower a neighbour ranks than the variant it comes from: below its parent, above the
// next variant when the two score alike, so the finalists hold the best variants and their
// closest alternatives.
inline constexpr double kNeighbourDiscount = 0.995;
// The variants whose neighbours are generated, best first.
inline constexpr int kNeighbourParents = 3;
// How many candidates a search compiles at most (TuneOptions::maxCandidates' default): on the
// H200 machine's 16 cores a candidate compiles and assembles in ~0.2 core-seconds and its screen
// takes milliseconds, so 256 cost a few seconds cold and less with the compile cache warm.
inline constexpr int kDefaultMaxCandidates = 256;

// The candidates, the family's pick first and the rest ranked by the heuristic (best first),
// without duplicates (by config line), at most `limit` (the registered variants and their
// neighbours always, the generated space up to the limit). `sms`: the device's SM count (0: the
// target's reference count). Empty, with `why`, when no family runs the program. `stats`
// (optional) receives what the generated space built and pruned.
std::vector<Candidate> candidates(const ir::Operation& program, const Target& t,
                                  const std::map<std::string, int64_t>& dims, std::string* why, int sms = 0,
                                  int limit = kDefaultMaxCandidates, SpaceStats* stats = nullptr);

// The one-step neighbours of a config in its strategy's option space (none for rowwise, whose
// registered variants already span its space). `epilogueLoads`: the program's epilogue reads
// vectors or scalars, so when they are issued (epilogue_loads) is a dimension too.
std::vector<std::pair<Config, std::string>> neighbours(const Config& c, bool epilogueLoads = false);

}  // namespace kiln::tuning
