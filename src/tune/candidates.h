#pragma once
// The schedules `kiln tune` considers for a program: its family's variants that can run it, best
// first by the family's heuristic (ops::rankedSchedules), then, around the best few, their
// neighbours in the strategy's option space. A neighbour changes one option a variant was tuned
// with by one step (pipeline depth, the raster group, a cluster along M), so the search reaches
// the configs a hand-written table would have had to list, without the combinatorial space.
#include <map>
#include <string>
#include <vector>

#include "kiln/ir/operation.h"
#include "kiln/target.h"
#include "schedule/config.h"

namespace kiln::tuning {

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

// The candidates, ranked (best first), without duplicates (by config line). Empty, with `why`,
// when no family runs the program.
std::vector<Candidate> candidates(const ir::Operation& program, const Target& t,
                                  const std::map<std::string, int64_t>& dims, std::string* why);

// The one-step neighbours of a config in its strategy's option space (none for rowwise, whose
// registered variants already span its space).
std::vector<std::pair<Config, std::string>> neighbours(const Config& c);

}  // namespace kiln::tuning
