#pragma once
// The gemv strategy's option space (docs/gemv-strategy.md, "Searched by kiln tune"), searched where
// gemm_bf16 picks gemv (ops::gemvPreferredRows): around the family's pick, whose rows (bm) and alignments it keeps,
//   - block_threads 128, 256 or 512;
//   - the block's width bn: on a row-major B (N path) 8 to 64 columns, bn / V threads side by side
//     (V elements per 16-byte load); on a K-major B (K path) one, two or four N rows per group of
//     row_threads lanes, row_threads 16 or 32;
//   - the loads of B a thread issues before their FMAs: half, the same or twice the pick's;
//   - split_k from 1 to a bound derived from the tiles per SM: slices until tiles x split_k reaches
//     two waves of resident blocks (an SM holds registers per SM / (block_threads x 64) gemv blocks;
//     a gemv thread takes 40 to 72 registers on sm_90a), at most 16 slices (the family's cap) and
//     no more than K's steps; counts 1, 2, 3, 4, 6, 8, 12, 16 up to the bound.
// The family's pick, and its rule re-run at the device's SM count, are always candidates. Pruned
// without compiling (gemvRefusal, each with its reason in SpaceStats::refused): the strategy's
// rules (validate), the lowering's geometry (threads tiling the block), shared memory, an estimate
// of the registers a thread needs against what block_threads leaves it, and slices without a K
// step. What the assembler reports (spills) prunes after compiling, as for every candidate
// (tune.cpp). A candidate's score is the pick's, lowered by kNeighbourDiscount per option changed.
#include <string>
#include <vector>

#include "kiln/target.h"
#include "schedule/config.h"
#include "tune/candidates.h"
#include "tune/gemm_space.h"

namespace kiln::tuning {

// The candidates around `pick` (a gemv config, the family's), the pick first; at most `limit`.
std::vector<Candidate> gemvSpace(const GemmShape& g, const Config& pick, double pickScore, const Target& t, int limit,
                                 SpaceStats* stats = nullptr);

// Why a gemv config is pruned before compiling for `g` on `t`, or "" when it is kept.
std::string gemvRefusal(const Config& c, const GemmShape& g, const Target& t);

// The most K slices (split_k) the space tries for a config's tiles at `g` on `t`.
int gemvMaxSplits(const Config& c, const GemmShape& g, const Target& t);

}  // namespace kiln::tuning
