#pragma once
// The waves of a ragged grouped GEMM (groups of rows, their sizes on the device) as the families'
// heuristics count them (gemm_bf16_sm90.cpp, gemm_fp8.cpp; docs/grouped-gemm.md, "The last wave").
//
// The host knows M (every group's rows together, or G x the capacity with counts), N, K and G, not
// the groups' sizes, so not the tile count: each group's rows round up to whole tiles, which adds
// between 0 and G - 1 tile rows to ceil(M / bm) (at most one per group). The expected count takes
// half a tile row per group: tile rows = M / bm + G / 2 (the MoE shape's 12416 rows in 8 groups:
// 97 + 4 = 101 tile rows of 128, what its groups gave). Over the time of one tile's K loop:
//
//   data-parallel  ceil(T / P) waves where the groups' sizes can move T by less than a wave
//                  (G x tn < P: the tail is predictable), else T / P + 1/2 (the last wave's
//                  fill is anyone's guess, half full on average);
//   stream_k       T / P + overhead / ksteps (the last wave's K steps shared out over all P).
//
// with T the expected tile count and P the SMs. `overheadSteps` is the family's stream-K cost per
// block in K steps (its fill and hand-over); 0 for a data-parallel variant.
#include <cstdint>

namespace kiln::ops {

struct RaggedWaves {
  double tiles;  // expected tiles
  double time;   // expected waves of tile-times
};

RaggedWaves raggedWaves(int64_t m, int64_t n, int64_t bm, int64_t bn, int64_t groups, int64_t sms, bool streamK,
                        double overheadSteps, double ksteps);

}  // namespace kiln::ops
